// When the compiled service (dist/, from `tsc -p tsconfig.build.json`) is older than its sources.
// Shared by `npm start` and `npm run admin`; a walk of src/ stats a few hundred files (milliseconds).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** True when `dist/<entry>` is missing or older than src/, tsconfig.json or tsconfig.build.json. */
export function serviceBuildStale(root, entry = 'main.js') {
  const built = join(root, 'dist', entry);
  if (!existsSync(built)) return true;
  const at = statSync(built).mtimeMs;
  return newest(join(root, 'src')) > at || ['tsconfig.json', 'tsconfig.build.json'].some((f) => statSync(join(root, f)).mtimeMs > at);
}
