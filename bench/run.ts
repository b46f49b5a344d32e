/**
 * `npm run bench [-- name ...]`: runs every benchmark (or the named ones) and
 * prints each capability's figures beside a baseline measured in the same run.
 * BENCH_SECONDS sets the duration of each load (default 5).
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const all = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'lib.ts'].includes(f) && !f.startsWith('_'))
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const chosen = wanted.length > 0 ? wanted : all;

console.log(`# Switchboard benchmarks — node ${process.version}, ${new Date().toISOString()}`);
for (const name of chosen) {
  if (!all.includes(name)) {
    console.error(`unknown benchmark ${name}; have: ${all.join(', ')}`);
    process.exit(2);
  }
  const mod = (await import(join(here, `${name}.ts`))) as { run?: () => Promise<void> };
  if (typeof mod.run !== 'function') continue;
  await mod.run();
}
process.exit(0);
