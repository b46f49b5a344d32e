/**
 * CPU profile of the template-send path (not part of `npm run bench`):
 *
 *   node --import tsx bench/_profile-messaging.ts [embedded|held|clustered] [seconds]
 *
 * Starts one service node (embedded on disk; `held`: the sandbox's status
 * webhooks held back; `clustered`: Redis + NATS started by the test harness),
 * sets it up like bench/messaging.ts, drives template sends with autocannon
 * from a worker thread (its CPU is not in the profile; it reports sends/s,
 * no latencies), profiles the main thread during the load and writes
 * `messaging-<mode>.cpuprofile` in the system temp directory (open it in
 * Chrome DevTools), then prints the functions and modules with the most
 * self time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { operatorApi, orgWithKey } from '../test/harness/operator-api.js';
import { startNats, startPostgres, startRedis, type ServerProcess } from '../test/harness/servers.js';
import { clusterEnv } from '../test/harness/use-servers.js';

const mode = process.argv[2] ?? 'embedded';
const seconds = Number(process.argv[3] ?? 6);
const OPERATOR = 'bench-operator-token-0123456789';

const infra: ServerProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'sb-prof-'));
let env: Record<string, string> = { DATA_DIR: dir };
if (mode === 'held') env.SANDBOX_STATUS_DELAY_MS = '60000';
if (mode === 'clustered') {
  const [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
  infra.push(redis, nats, postgres);
  env = { ...clusterEnv({ redis, nats, postgres }, 'prof'), NODE_ID: 'p1', SECRETS_KEY: '3'.repeat(64), SANDBOX_NETWORK: 'true' };
}
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OPERATOR_TOKEN: OPERATOR, LOG_LEVEL: 'silent', SEED_DEMO: 'false', TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000000', SANDBOX_MAX_MPS: '100000', ...env });
const running = await startServer(config, { log: silentLogger });
const base = `http://127.0.0.1:${running.port}`;
const op = operatorApi(base, OPERATOR);
const { orgId, key } = await orgWithKey(op, 'Profile', ['message:send']);
const channel = await op(`/admin/v1/organizations/${orgId}/channels`, { kind: 'whatsapp_cloud', name: 'Profile', network: 'sandbox', messagesPerSecond: 10_000 });
await op(`/admin/v1/organizations/${orgId}/credits/top-up`, { amount: 1_000_000_000 });

// The load generator, in a worker thread: 16 connections, sends to 2000 contacts.
const loadSource = `
const { workerData, parentPort } = require('node:worker_threads');
const autocannon = require(workerData.autocannon);
let i = 0;
autocannon({
  url: workerData.base, connections: 16, duration: workerData.seconds + 2,
  requests: [{ method: 'POST', path: '/v2/wa/template', setupRequest: (req) => ({ ...req,
    headers: { authorization: 'Bearer ' + workerData.key, 'content-type': 'application/json' },
    body: JSON.stringify({ channelId: workerData.channelId, to: String(4915100000000 + (i++ % 2000)),
      template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: 'A-' + i }, { type: 'text', text: 'Monday' }] }] } }) }) }],
}).then((r) => parentPort.postMessage({ rps: Math.round(r.totalCompletedRequests / r.duration), non2xx: r.non2xx, errors: r.errors }));
`;
const worker = new Worker(loadSource, { eval: true, workerData: { base, key, channelId: channel.id, seconds, autocannon: import.meta.resolve('autocannon').replace('file://', '') } });
const result = new Promise((resolve) => worker.once('message', resolve));

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 500 });
// Skip the first second (connections opening, code warming up).
await new Promise((r) => setTimeout(r, 1000));
await session.post('Profiler.start');
await new Promise((r) => setTimeout(r, seconds * 1000));
const { profile } = await session.post('Profiler.stop');
console.log(JSON.stringify(await result));
const out = join(tmpdir(), `messaging-${mode}.cpuprofile`);
writeFileSync(out, JSON.stringify(profile));

// Self time per function and per module.
const self = new Map<number, number>();
let total = 0;
profile.samples!.forEach((id, i) => {
  const dt = profile.timeDeltas![i] ?? 0;
  self.set(id, (self.get(id) ?? 0) + dt);
  total += dt;
});
const byFunction = new Map<string, number>();
const byModule = new Map<string, number>();
for (const n of profile.nodes) {
  const t = self.get(n.id) ?? 0;
  if (t === 0) continue;
  const url = (n.callFrame.url || '(native)').replace(/^file:\/\//, '').replace(process.cwd() + '/', '').replace(/.*node_modules\//, 'node_modules/');
  const fn = `${n.callFrame.functionName || '(anonymous)'}  ${url}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + t);
  const mod = url.startsWith('node_modules/') ? url.split('/').slice(0, url.startsWith('node_modules/@') ? 3 : 2).join('/') : url;
  byModule.set(mod, (byModule.get(mod) ?? 0) + t);
}
const top = (m: Map<string, number>, n: number) =>
  [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`).join('\n');
console.log(`\n${out}: ${(total / 1e6).toFixed(1)} s sampled\n\nby module:\n${top(byModule, 20)}\n\nby function:\n${top(byFunction, 30)}`);

await worker.terminate();
await running.services.messaging.sandbox?.idle(20_000);
await running.close();
for (const p of infra) await p.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
