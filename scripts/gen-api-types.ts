// Writes web/src/api/schema.d.ts: the dashboard's API types, generated from the
// service's own /openapi.json (so the browser code cannot drift from the API).
// `npm run gen:api`; test/web/api-types.test.ts fails when the file is stale.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiTypesSource } from './api-types.js';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'web', 'src', 'api', 'schema.d.ts');
writeFileSync(out, await apiTypesSource());
console.log(`wrote ${out}`);
