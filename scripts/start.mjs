#!/usr/bin/env node
// `npm start`: installs dependencies when missing, builds when the sources are
// newer than the build, then runs the service in the foreground.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const lock = join(root, 'package-lock.json');
const installed = join(root, 'node_modules', '.package-lock.json');
if (!existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs) {
  run('npm', ['ci', '--no-audit', '--no-fund']);
}
const built = join(root, 'dist', 'main.js');
if (!existsSync(built) || newest(join(root, 'src')) > statSync(built).mtimeMs || statSync(join(root, 'tsconfig.json')).mtimeMs > statSync(built).mtimeMs) {
  run('npx', ['tsc', '-p', 'tsconfig.build.json']);
}

const child = spawn(process.execPath, ['--enable-source-maps', built], { cwd: root, stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
