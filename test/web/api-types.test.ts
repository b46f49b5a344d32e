import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiTypesSource } from '../../scripts/api-types.js';

describe("the dashboard's API types", () => {
  it('are generated from the current /openapi.json (run `npm run gen:api` after changing a route)', async () => {
    const committed = readFileSync(join(import.meta.dirname, '..', '..', 'web', 'src', 'api', 'schema.d.ts'), 'utf8');
    expect(committed === (await apiTypesSource()), 'web/src/api/schema.d.ts is stale: npm run gen:api').toBe(true);
  });
});
