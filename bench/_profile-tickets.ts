/**
 * CPU profile of ticket create (not part of `npm run bench`):
 *
 *   node --import tsx bench/_profile-tickets.ts [embedded|clustered] [seconds]
 *
 * Starts one service node (embedded on disk, or clustered on PostgreSQL +
 * Redis + NATS started by the test harness), drives `POST /v1/tickets` with
 * autocannon (16 connections) from a worker thread (its CPU is not in the
 * profile), profiles the main thread during the load, prints the node's CPU
 * per create, that of each server it started (clustered: postgres with
 * every backend, nats-server, redis-server) and the functions and modules
 * with the most self time, and
 * writes `tickets-<mode>.cpuprofile` in the system temp directory.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { operatorApi, orgWithKey } from '../test/harness/operator-api.js';
import { startNats, startPostgres, startRedis, type ServerProcess } from '../test/harness/servers.js';
import { clusterEnv } from '../test/harness/use-servers.js';

const mode = process.argv[2] ?? 'embedded';

/** CPU seconds used so far by the servers this process started (every PostgreSQL backend included), by command name. */
function serverCpu(): Map<string, number> {
  const procs = new Map<number, { name: string; ppid: number; cpu: number }>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(d), { name: f.slice(f.indexOf('(') + 1, f.lastIndexOf(')')), ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / 100 });
    } catch {
      // gone meanwhile
    }
  }
  const ours = (pid: number): boolean => {
    for (let p = procs.get(pid); p !== undefined; p = procs.get(p.ppid)) if (p.ppid === process.pid) return true;
    return false;
  };
  const byName = new Map<string, number>();
  for (const [pid, p] of procs) if (p.name !== 'runuser' && ours(pid)) byName.set(p.name, (byName.get(p.name) ?? 0) + p.cpu);
  return byName;
}

// Every statement sent to PostgreSQL during the profile, by its text (clustered).
const statements = new Map<string, number>();
let counting = false;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (counting) {
    const q = args[0];
    const text = (typeof q === 'string' ? q : ((q as { text?: string } | null)?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 100);
    statements.set(text, (statements.get(text) ?? 0) + 1);
  }
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;
const seconds = Number(process.argv[3] ?? 6);
const OPERATOR = 'bench-operator-token-0123456789';

const infra: ServerProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'sb-prof-'));
let env: Record<string, string> = { DATA_DIR: dir };
if (mode === 'clustered') {
  const [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
  infra.push(redis, nats, postgres);
  env = { ...clusterEnv({ redis, nats, postgres }, 'prof'), NODE_ID: 'p1', SECRETS_KEY: '3'.repeat(64) };
}
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OPERATOR_TOKEN: OPERATOR, LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...env });
const running = await startServer(config, { log: silentLogger });
const base = `http://127.0.0.1:${running.port}`;
const op = operatorApi(base, OPERATOR);
const { key } = await orgWithKey(op, 'Profile', ['tickets:create', 'tickets:read']);

const loadSource = `
const { workerData, parentPort } = require('node:worker_threads');
const autocannon = require(workerData.autocannon);
autocannon({
  url: workerData.base + '/v1/tickets', connections: 16, duration: workerData.seconds + 2, method: 'POST',
  headers: { authorization: 'Bearer ' + workerData.key, 'content-type': 'application/json' },
  body: JSON.stringify({ subject: 'Printer on fire', description: 'Third floor', priority: 'high' }),
}).then((r) => parentPort.postMessage({ rps: Math.round(r.totalCompletedRequests / r.duration), non2xx: r.non2xx, errors: r.errors }));
`;
const worker = new Worker(loadSource, { eval: true, workerData: { base, key, seconds, autocannon: import.meta.resolve('autocannon').replace('file://', '') } });
const result = new Promise<{ rps: number }>((resolve) => worker.once('message', resolve));

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 500 });
await new Promise((r) => setTimeout(r, 1000));
const cpu0 = process.cpuUsage();
const servers0 = serverCpu();
const t0 = performance.now();
await session.post('Profiler.start');
counting = true;
await new Promise((r) => setTimeout(r, seconds * 1000));
const { profile } = await session.post('Profiler.stop');
counting = false;
const elapsed = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const servers1 = serverCpu();
const r = await result;
// process.cpuUsage counts the worker thread too: the main thread's share is the profile's non-idle time.
const out = join(tmpdir(), `tickets-${mode}.cpuprofile`);
writeFileSync(out, JSON.stringify(profile));

const self = new Map<number, number>();
let total = 0;
profile.samples!.forEach((id, i) => {
  const dt = profile.timeDeltas![i] ?? 0;
  self.set(id, (self.get(id) ?? 0) + dt);
  total += dt;
});
const byFunction = new Map<string, number>();
const byModule = new Map<string, number>();
let idle = 0;
for (const n of profile.nodes) {
  const t = self.get(n.id) ?? 0;
  if (t === 0) continue;
  if (n.callFrame.functionName === '(idle)') idle += t;
  const url = (n.callFrame.url || '(native)').replace(/^file:\/\//, '').replace(process.cwd() + '/', '').replace(/.*node_modules\//, 'node_modules/');
  const fn = `${n.callFrame.functionName || '(anonymous)'}  ${url}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + t);
  const mod = url.startsWith('node_modules/') ? url.split('/').slice(0, url.startsWith('node_modules/@') ? 3 : 2).join('/') : url;
  byModule.set(mod, (byModule.get(mod) ?? 0) + t);
}
const busyUs = total - idle;
const top = (m: Map<string, number>, n: number) =>
  [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`).join('\n');
console.log(JSON.stringify(r));
console.log(`main thread busy ${((busyUs / 1e6 / elapsed) * 100).toFixed(0)}% of one core: ${(busyUs / (r.rps * elapsed)).toFixed(0)} µs per create (process incl. load generator: ${((cpu.user + cpu.system) / (r.rps * elapsed)).toFixed(0)} µs)`);
const creates = r.rps * elapsed;
for (const [name, s1] of servers1) console.log(`${name}: ${(((s1 - (servers0.get(name) ?? 0)) * 1e6) / creates).toFixed(0)} µs of CPU per create`);
if (statements.size > 0) {
  console.log(`PostgreSQL statements per create: ${([...statements.values()].reduce((a, b) => a + b, 0) / creates).toFixed(2)}`);
  for (const [k, v] of [...statements].sort((a, b) => b[1] - a[1])) if (v / creates >= 0.01) console.log(`  ${(v / creates).toFixed(2)}  ${k}`);
}
console.log(`\n${out}: ${(total / 1e6).toFixed(1)} s sampled\n\nby module:\n${top(byModule, 20)}\n\nby function:\n${top(byFunction, 30)}`);

await worker.terminate();
await running.close();
for (const p of infra) await p.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
