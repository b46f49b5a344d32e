#!/usr/bin/env node
// `npm start`: installs dependencies when missing, builds the service and the
// dashboard when their sources are newer than the build, then runs the service
// in the foreground.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newest, serviceBuildStale } from './build-state.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => {
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  console.log(`  done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
};

const lock = join(root, 'package-lock.json');
const installed = join(root, 'node_modules', '.package-lock.json');
if (!existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs) {
  console.log('first start: installing dependencies (npm ci), then building; this takes a minute or two, once…');
  run('npm', ['ci', '--no-audit', '--no-fund']);
}
// On Node 20 better-sqlite3 (version 12, `better-sqlite3-node20`) is a native addon built for the
// Node that ran `npm ci`; after a switch of Node version it no longer loads, so it is rebuilt for this
// one (from source, about two minutes). From Node 22 on, version 13's prebuilt Node-API binary loads as is.
if (Number(process.versions.napi) < 10) {
  const probe = spawnSync(process.execPath, ['-e', "const D = require('better-sqlite3-node20'); new D(':memory:').close()"], { cwd: root, encoding: 'utf8' });
  if (probe.status !== 0 && /NODE_MODULE_VERSION|was compiled against a different Node|Cannot find module/.test(probe.stderr)) {
    console.log(`better-sqlite3 is not built for Node ${process.version}: building it (about two minutes)…`);
    run('npm', ['rebuild', 'better-sqlite3-node20']);
  }
}
const built = join(root, 'dist', 'main.js');
if (serviceBuildStale(root)) {
  console.log('building the service (tsc, about 30 s on a small machine)…');
  run('npx', ['tsc', '-p', 'tsconfig.build.json']);
}
// The dashboard (web/, plus the shared scope list it imports) is built by Vite into dist/web;
// Vite prints each step and the size of what it wrote.
const webIndex = join(root, 'dist', 'web', 'index.html');
const webSources = Math.max(newest(join(root, 'web')), statSync(join(root, 'src', 'domain', 'scopes.ts')).mtimeMs, statSync(lock).mtimeMs);
if (!existsSync(webIndex) || webSources > statSync(webIndex).mtimeMs) {
  console.log('building the dashboard (vite)…');
  run('npx', ['vite', 'build', '--config', 'web/vite.config.ts']);
}
// The web chat widget (widget/) into dist/widget: one file, served as /widget.js.
const widgetFile = join(root, 'dist', 'widget', 'widget.js');
if (!existsSync(widgetFile) || Math.max(newest(join(root, 'widget')), statSync(lock).mtimeMs) > statSync(widgetFile).mtimeMs) {
  console.log('building the web chat widget (vite)…');
  run('npx', ['vite', 'build', '--config', 'widget/vite.config.ts']);
}

const child = spawn(process.execPath, ['--enable-source-maps', built], { cwd: root, stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
