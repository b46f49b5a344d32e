import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Where a copy of better-sqlite3's addon built for another Node ABI lives:
 * `node_modules/.cache/better-sqlite3/abi<N>/better_sqlite3.node`. npm builds
 * the package once, for the Node that ran `npm ci`; `npm test` also runs the
 * suite on Node 24 and builds a Node-24 copy there (scripts/test.mjs), so
 * both can load it from one node_modules. Null when this Node's ABI has no
 * copy: the package's own build is used.
 */
export function sqliteNativeBinding(): string | null {
  let pkgDir: string;
  try {
    pkgDir = dirname(require.resolve('better-sqlite3/package.json'));
  } catch {
    return null;
  }
  const candidate = join(pkgDir, '..', '.cache', 'better-sqlite3', `abi${process.versions.modules}`, 'better_sqlite3.node');
  return existsSync(candidate) ? candidate : null;
}
