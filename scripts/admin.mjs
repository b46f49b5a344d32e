#!/usr/bin/env node
// `npm run admin`: runs the operator CLI from the compiled JavaScript (dist/cli/admin.js), building
// the service first when dist/ is missing or older than src/, so a command starts in a fraction of
// a second instead of compiling TypeScript on every call.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serviceBuildStale } from './build-state.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (serviceBuildStale(root, join('cli', 'admin.js'))) {
  process.stderr.write('building the service (tsc, about 30 s on a small machine; only when src/ changed)…\n');
  const r = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const { main } = await import(pathToFileURL(join(root, 'dist', 'cli', 'admin.js')).href);
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
const code = await main(process.argv.slice(2), process.env, (s) => process.stdout.write(s + '\n'), (s) => process.stderr.write(s + '\n'), stop.signal);
// Exit at once: a keep-alive socket must not hold the command open after it finished.
process.exit(code);
