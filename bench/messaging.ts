/**
 * Template sends with their status webhooks, against a bare forwarder
 * measured in the same run:
 *
 *   BENCH_SECONDS=5 npm run bench -- messaging
 *
 * Processes, as deployed: the sandbox chat network in a process of its own
 * (bench/_sandbox-process.ts: Meta's side, its own in-memory database); the
 * load generator in a process of its own (bench/_load-generator.mjs); the
 * service node under test in this process (embedded, or clustered on Redis +
 * NATS started here on free ports), and for 3 nodes two more as child
 * processes (`src/main.ts`). The channel is a `graph` channel whose Graph API
 * base URL is the sandbox process: the same adapter code as production.
 *
 * Baseline: a bare forwarder (this process) doing the least a gateway must do
 * per send: validate the same body with the same zod schema, one Redis write,
 * POST the Graph request to the same sandbox with a keep-alive agent, answer
 * 201 with the network's id; then accept the sent / delivered / read
 * webhooks with one Redis write each.
 *
 * Each row: sends/s (2xx), p50/p99 at the client, Redis commands per send
 * (INFO commandstats, every command including those inside scripts, from
 * the first send until the sandbox delivered every status webhook), SQLite
 * commits per send embedded (each commit is one fsync of the WAL with
 * SQLITE_SYNCHRONOUS=FULL), CPU seconds per 1,000 sends per process (and
 * their total, with the baseline's total over it: the ratio on two cores
 * of their own, steadier than the throughput ratio on a shared machine), and
 * what the network saw (accepted, throttled with 130429). Then a fixed
 * offered rate (BENCH_MSG_RATE, default 1,000 sends/s) to one number on a
 * sandbox with SANDBOX_MAX_MPS = that rate and the channel's tier set to it.
 *
 * Then (row `sustained`) the highest rate the node sustains on that number:
 * offered rates from BENCH_MSG_SUSTAIN_RATES (default 100,150,…,500 sends/s)
 * in turn, on one node kept running, until a step misses: p99 at or above
 * 100 ms, fewer 2xx than offered, or a send throttled by the network
 * (BENCH_MSG_SUSTAIN_NODES: embedded,clustered1).
 *
 * BENCH_MSG_ROWS: comma-separated subset of bare,embedded,clustered1,clustered3,rate,sustained.
 * BENCH_ROUNDS (default 3): the closed-loop rows (bare, embedded,
 * clustered1) run in that many interleaved rounds, each reporting its median.
 * BENCH_MSG_WARM=1 sends to the same contacts in every round of clustered1
 * (known to the node after the first: their actors in memory, their contacts
 * stored); otherwise each round has new ones.
 * BENCH_MSG_MONITOR=<file> writes a Redis MONITOR trace of each row there and
 * prints its commands per send on the send path, by the key they touch.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import pg from 'pg';
import { createClient } from 'redis';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer, type RunningServer } from '../src/server.js';
import { templateSendSchema } from '../src/messaging/index.js';
import { connectRedis } from '../src/store/index.js';
import { operatorApi, orgWithKey } from '../test/harness/operator-api.js';
import { freePort, startNats, startPostgres, startRedis, type ServerProcess } from '../test/harness/servers.js';
import { clusterEnv as clusterServersEnv } from '../test/harness/use-servers.js';
import { cpuOf, medianBy, postgresCpu } from './lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const OPERATOR = 'bench-operator-token-0123456789';
const SECRETS = '3'.repeat(64);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_MSG_CONNECTIONS ?? 16);
const RATE = Number(process.env.BENCH_MSG_RATE ?? 1000);
const ROWS = new Set((process.env.BENCH_MSG_ROWS ?? 'bare,embedded,clustered1,clustered3,rate,sustained').split(','));
const SUSTAIN_NODES = new Set((process.env.BENCH_MSG_SUSTAIN_NODES ?? 'embedded,clustered1').split(','));
const SUSTAIN_RATES = (process.env.BENCH_MSG_SUSTAIN_RATES ?? '100,150,200,250,300,350,400,450,500').split(',').map(Number);
/** A step is sustained when every offered send answered 2xx, none was throttled, and p99 stayed under this. */
const SUSTAIN_P99_MS = 100;

// ------------------------------------------------------------------ processes

interface Child {
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** SIGTERM, then SIGKILL if it has not exited within 10 s; resolves once it exited. */
function stopProcess(proc: ChildProcess): Promise<void> {
  return new Promise<void>((r) => {
    if (proc.exitCode !== null) return r();
    proc.once('exit', () => r());
    proc.kill('SIGTERM');
    setTimeout(() => proc.kill('SIGKILL'), 10_000).unref();
  });
}

function spawnChild(args: string[], env: Record<string, string>, ready: RegExp): Promise<Child & { match: RegExpMatchArray }> {
  const proc = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${err}`)), 60_000);
    proc.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${err}`)));
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = out.match(ready);
      if (m) {
        clearTimeout(t);
        resolve({ proc, match: m, stop: () => stopProcess(proc) });
      }
    });
  });
}

/** PostgreSQL transactions committed in the database so far (its statistics, flushed within about a second). */
/**
 * With BENCH_MSG_PG_DETAIL=1: every statement the in-process node sends to
 * PostgreSQL, counted by its text (the driver's `Client.query`, so a
 * transaction's BEGIN and COMMIT count too), for the statements-per-send list.
 */
const pgStatements = new Map<string, number>();
if (process.env.BENCH_MSG_PG_DETAIL) {
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0];
    const text = typeof q === 'string' ? q : ((q as { text?: string } | null)?.text ?? '?');
    const short = text.replace(/\s+/g, ' ').slice(0, 110);
    pgStatements.set(short, (pgStatements.get(short) ?? 0) + 1);
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

async function pgCommits(db: pg.Client): Promise<number> {
  return Number((await db.query('SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()')).rows[0].xact_commit);
}
const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

interface Sandbox extends Child {
  url: string;
  graphBase: string;
  control(method: string, path: string, body?: unknown): Promise<any>;
}

async function startSandbox(maxMps: number): Promise<Sandbox> {
  const c = await spawnChild(['--import', 'tsx', 'bench/_sandbox-process.ts'], { SANDBOX_MAX_MPS: String(maxMps), SANDBOX_STATUS_DELAY_MS: '250' }, /PORT (\d+)/);
  const url = `http://127.0.0.1:${c.match[1]}`;
  return {
    ...c,
    url,
    graphBase: `${url}/graph/v27.0`,
    control: async (method, path, body) =>
      (await fetch(url + '/control' + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json(),
  };
}

// ------------------------------------------------------------------ load

interface LoadResult {
  sent: number;
  skipped: number;
  ok: number;
  statuses: Record<string, number>;
  errors: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
  cpuSeconds: number;
}

async function runLoad(spec: Record<string, unknown>): Promise<LoadResult & { pid: number }> {
  const proc = spawn(process.execPath, [join(here, '_load-generator.mjs'), JSON.stringify({ seconds: SECONDS, path: '/v2/wa/template', contacts: 2000, ...spec })], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => proc.once('exit', r));
  return { ...(JSON.parse(out.trim().split('\n').at(-1)!) as LoadResult), pid: proc.pid! };
}

// ------------------------------------------------------------------ Redis counters

/** A plain connection for INFO and CONFIG RESETSTAT (the service's client type exposes only what stores use). */
type StatsClient = ReturnType<typeof createClient>;

/** Commands since the last CONFIG RESETSTAT, by name (this bench's own INFO and CONFIG left out). */
async function redisCommands(r: StatsClient): Promise<Map<string, number>> {
  const info = String(await r.sendCommand(['INFO', 'commandstats']));
  const by = new Map<string, number>();
  for (const m of info.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)) if (!['info', 'config|resetstat', 'config'].includes(m[1]!)) by.set(m[1]!, Number(m[2]));
  return by;
}
async function redisCpu(r: StatsClient): Promise<number> {
  const info = String(await r.sendCommand(['INFO', 'cpu']));
  const v = (k: string) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return v('used_cpu_sys') + v('used_cpu_user');
}

/**
 * BENCH_MSG_MONITOR: the trace's commands per send by the key they touch (a
 * script's inner commands under its key), the upkeep apart: lease and
 * membership renewals, relays polling. `TIME` names no key: the membership
 * heartbeat's are upkeep, counted with it.
 */
function printSendPath(name: string, lines: string[], sends: number): void {
  const upkeep = /:lease$|actor-nodes|wh:lanes|outbox|relay/;
  const by = new Map<string, number>();
  let heartbeats = 0;
  let scriptKey = '';
  for (const line of lines) {
    const m = /^\S+ \[\d+ (\S+)\] "(\w+)"((?: "[^"]*")*)/.exec(line);
    if (!m) continue;
    const [, src, cmd, rest] = m as unknown as [string, string, string, string];
    const args = [...rest.matchAll(/"([^"]*)"/g)].map((a) => a[1]!);
    const upper = cmd.toUpperCase();
    let key = upper === 'EVALSHA' || upper === 'EVAL' ? (args[2] ?? '') : (args[0] ?? '');
    if (src !== 'lua') scriptKey = key;
    if (upper === 'TIME') key = scriptKey;
    if (upkeep.test(key)) {
      if (upper === 'EVALSHA' && key.endsWith('actor-nodes')) heartbeats++;
      continue;
    }
    const shape = key
      .replace(/^[^:{]*:/, '')
      .replace(/\{p\d+\}/, '{p<n>}')
      .replace(/\{tpl:[^}]*\}/, '{tpl:<key>}')
      .replace(/\{c:[^}]*\}/, '{c:<channel>}')
      .replace(/:actor:.*/, ':actor:<contact>')
      .replace(/authfail:(\w+):.*/, 'authfail:$1:…');
    const label = `${src === 'lua' ? 'in script ' : ''}${upper} ${shape}`;
    // An EVAL is the retry of an EVALSHA refused with NOSCRIPT (a script's first runs), counted already.
    if (upper !== 'INFO' && !(upper === 'EVAL' && src !== 'lua')) by.set(label, (by.get(label) ?? 0) + 1);
  }
  const total = [...by.values()].reduce((a, b) => a + b, 0);
  console.log(`${name}: Redis commands per send on the send path (MONITOR, upkeep apart; ${heartbeats} membership heartbeats left out): ${(total / sends).toFixed(2)}`);
  for (const [k, v] of [...by].sort((a, b) => b[1] - a[1])) console.log(`  ${(v / sends).toFixed(2)}  ${k}`);
}

// ------------------------------------------------------------------ the bare forwarder

async function startBareForwarder(redisUrl: string, sandbox: Sandbox): Promise<{ url: string; close(): Promise<void>; channelId: string }> {
  const client = await connectRedis(redisUrl);
  const account = await sandbox.control('POST', '/accounts');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const graph = new URL(sandbox.graphBase);
  const post = (path: string, body: string, token: string) =>
    new Promise<{ status: number; json: any }>((resolve, reject) => {
      const req = http.request(
        { host: graph.hostname, port: graph.port, path: graph.pathname + path, method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const app = express();
  app.use(express.json());
  let n = 0;
  app.post('/v2/wa/template', async (req, res) => {
    const p = templateSendSchema.safeParse(req.body);
    if (!p.success) return void res.status(400).json({ success: false });
    const b = p.data;
    const id = `m${n++}`;
    await client.set(`bare:msg:${id}`, JSON.stringify(b));
    const r = await post(
      `/${account.phoneNumberId}/messages`,
      JSON.stringify({ messaging_product: 'whatsapp', recipient_type: 'individual', to: b.to, type: 'template', template: { name: b.template.name, language: { code: b.template.language.code, policy: 'deterministic' }, components: b.template.components } }),
      account.accessToken,
    );
    if (r.status !== 200) return void res.status(502).json({ success: false, error: r.json });
    res.status(201).json({ success: true, messageId: r.json.messages[0].id, timestamp: new Date().toISOString() });
  });
  app.post('/webhooks/whatsapp/:id', async (req, res) => {
    const status = req.body?.entry?.[0]?.changes?.[0]?.value?.statuses?.[0];
    if (status !== undefined) await client.hSet(`bare:st:${status.id}`, status.status, status.timestamp);
    res.sendStatus(200);
  });
  const server = app.listen(0, '127.0.0.1');
  server.keepAliveTimeout = 65_000;
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await sandbox.control('POST', `/accounts/${account.phoneNumberId}`, { callbackUrl: '/webhooks/whatsapp/bare' });
  await sandbox.control('POST', '/targets', { bases: [url] });
  return {
    url,
    channelId: 'ch_bare',
    close: async () => {
      server.close();
      agent.destroy();
      await client.close();
    },
  };
}

// ------------------------------------------------------------------ service nodes

interface Target {
  urls: string[];
  key: string;
  channelId: string;
  /** The in-process node (its SQLite database's commits, embedded). */
  running: RunningServer | null;
  childPids: number[];
  close(): Promise<void>;
}

const baseEnv = (graphBase: string): Record<string, string> => ({
  HOST: '127.0.0.1',
  OPERATOR_TOKEN: OPERATOR,
  LOG_LEVEL: 'silent',
  SEED_DEMO: 'false',
  TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000000',
  SANDBOX_NETWORK: 'false',
  GRAPH_API_BASE_URL: graphBase,
});

async function startTarget(sandbox: Sandbox, envs: Record<string, string>[], tier: number): Promise<Target> {
  const [first, ...rest] = envs;
  const running = await startServer(loadConfig({ ...baseEnv(sandbox.graphBase), PORT: '0', ...first }), { log: silentLogger });
  const children: Child[] = [];
  const urls = [`http://127.0.0.1:${running.port}`];
  for (const env of rest) {
    const port = await freePort();
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: { ...process.env, ...baseEnv(sandbox.graphBase), PORT: String(port), ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push({ proc, stop: () => stopProcess(proc) });
    urls.push(`http://127.0.0.1:${port}`);
  }
  for (const u of urls.slice(1)) {
    for (let i = 0; ; i++) {
      const r = await fetch(u + '/readyz').catch(() => null);
      if (r?.status === 200) break;
      if (i > 300) throw new Error(`${u} not ready`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  const op = operatorApi(urls[0]!, OPERATOR);
  const account = await sandbox.control('POST', '/accounts');
  const { orgId, key } = await orgWithKey(op, 'Bench', ['message:send']);
  const ch = await op(`/admin/v1/organizations/${orgId}/channels`, {
    kind: 'whatsapp_cloud',
    name: 'Bench',
    network: 'graph',
    phoneNumberId: account.phoneNumberId,
    businessAccountId: account.businessAccountId,
    accessToken: account.accessToken,
    appSecret: account.appSecret,
    verifyToken: account.verifyToken,
    messagesPerSecond: tier,
  });
  if (!ch.templateSync?.ok) throw new Error(`template sync failed: ${JSON.stringify(ch.templateSync)}`);
  await op(`/admin/v1/organizations/${orgId}/credits/top-up`, { amount: 1_000_000_000 });
  await sandbox.control('POST', `/accounts/${account.phoneNumberId}`, { callbackUrl: `/webhooks/whatsapp/${ch.id}` });
  await sandbox.control('POST', '/targets', { bases: urls });
  return {
    urls,
    key,
    channelId: ch.id,
    running,
    childPids: children.map((c) => c.proc.pid!),
    close: async () => {
      await Promise.all(children.map((c) => c.stop()));
      await running.close();
    },
  };
}

/** The embedded node's SQLite counters: commits (one fsync each) and writes, for the per-send columns. */
function sqliteCounters(t: Target): { commits: () => number; writes: () => number } {
  const db = (t.running!.services.messaging.stores.backing as { db: { stats: { commits: number; writes: number } } }).db;
  return { commits: () => db.stats.commits, writes: () => db.stats.writes };
}

// ------------------------------------------------------------------ one row

interface Row {
  name: string;
  load: LoadResult;
  redisPerSend: number | null;
  /** Of those, what the node sends with no load at all (lease and membership renewals, relays polling), at the same rate over the row. */
  redisUpkeepPerSend: number;
  commitsPerSend: number | null;
  /** PostgreSQL transactions per send clustered, its statuses included (each statement outside a transaction counts as one). */
  pgTxPerSend: number | null;
  /** SQLite writes (`SqliteDb.run` calls) per send embedded, its statuses included. */
  writesPerSend: number | null;
  network: { accepted: number; throttled: number; rejected: number };
  cpuPer1000: Record<string, number>;
}

async function measure(
  name: string,
  sandbox: Sandbox,
  redis: StatsClient,
  target: { urls: string[]; key: string; channelId: string; commits?: () => number; writes?: () => number; pgCommits?: () => Promise<number>; pids: Record<string, number>; inProcess: string },
  load: Record<string, unknown>,
  extraCpu: () => Promise<Record<string, number>> = async () => ({}),
): Promise<Row> {
  // What the node does with no sends at all (leases, membership, relays polling), to tell it apart.
  await redis.sendCommand(['CONFIG', 'RESETSTAT']);
  const idle0 = performance.now();
  await new Promise((res) => setTimeout(res, 2000));
  const idleRate = [...(await redisCommands(redis)).values()].reduce((a, b) => a + b, 0) / ((performance.now() - idle0) / 1000);
  await redis.sendCommand(['CONFIG', 'RESETSTAT']);
  const t0 = performance.now();
  const before = (await sandbox.control('GET', '/stats')) as Row['network'];
  const commits0 = target.commits?.() ?? 0;
  const pg0 = (await target.pgCommits?.()) ?? 0;
  pgStatements.clear();
  const writes0 = target.writes?.() ?? 0;
  const cpu0: Record<string, number> = { [target.inProcess]: selfCpu(), sandbox: cpuOf(sandbox.proc.pid!), redis: await redisCpu(redis), ...(await extraCpu()) };
  for (const [k, pid] of Object.entries(target.pids)) cpu0[k] = cpuOf(pid);
  let monitor: StatsClient | null = null;
  const monitored: string[] = [];
  if (process.env.BENCH_MSG_MONITOR) {
    monitor = redis.duplicate();
    await monitor.connect();
    await monitor.monitor((line: string) => void monitored.push(line));
  }
  const r = await runLoad({ targets: target.urls, key: target.key, channelId: target.channelId, contactBase: 4915100000000 + Math.floor(Math.random() * 1e6) * 10_000, tag: name.slice(0, 8), ...load });
  // Every status webhook of every send delivered (and answered) before counting.
  await sandbox.control('POST', '/idle');
  await new Promise((res) => setTimeout(res, 300));
  const after = (await sandbox.control('GET', '/stats')) as Row['network'];
  const cpu1: Record<string, number> = { [target.inProcess]: selfCpu(), sandbox: cpuOf(sandbox.proc.pid!), redis: await redisCpu(redis), ...(await extraCpu()) };
  for (const [k, pid] of Object.entries(target.pids)) cpu1[k] = cpuOf(pid);
  if (monitor !== null) {
    await monitor.close();
    writeFileSync(process.env.BENCH_MSG_MONITOR!, monitored.join('\n'));
    printSendPath(name, monitored, Math.max(1, r.ok));
  }
  // PostgreSQL's statistics reach pg_stat_database within a second of a transaction.
  if (target.pgCommits) await new Promise((res) => setTimeout(res, 1500));
  const pg1 = (await target.pgCommits?.()) ?? 0;
  const statements = new Map(pgStatements);
  const byCommand = await redisCommands(redis);
  const cmds = [...byCommand.values()].reduce((a, b) => a + b, 0);
  const upkeep = idleRate * ((performance.now() - t0) / 1000);
  const sends = Math.max(1, r.ok);
  if (process.env.BENCH_MSG_REDIS_DETAIL && cmds > 0) {
    console.log(`${name}: Redis commands per send by name: ${[...byCommand].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(v / sends).toFixed(2)}`).join(', ')}`);
  }
  if (process.env.BENCH_MSG_PG_DETAIL && target.pgCommits) {
    const total = [...statements.values()].reduce((a, b) => a + b, 0);
    console.log(`${name}: PostgreSQL statements per send ${(total / sends).toFixed(2)}, by text:`);
    for (const [k, v] of [...statements].sort((a, b) => b[1] - a[1])) if (v / sends >= 0.01) console.log(`  ${(v / sends).toFixed(2)}  ${k}`);
  }
  const cpuPer1000: Record<string, number> = { 'load generator': (r.cpuSeconds / sends) * 1000 };
  for (const k of Object.keys(cpu1)) cpuPer1000[k] = ((cpu1[k]! - cpu0[k]!) / sends) * 1000;
  return {
    name,
    load: r,
    redisPerSend: cmds / sends,
    redisUpkeepPerSend: upkeep / sends,
    commitsPerSend: target.commits ? (target.commits() - commits0) / sends : null,
    pgTxPerSend: target.pgCommits ? (pg1 - pg0) / sends : null,
    writesPerSend: target.writes ? (target.writes() - writes0) / sends : null,
    network: { accepted: after.accepted - before.accepted, throttled: after.throttled - before.throttled, rejected: after.rejected - before.rejected },
    cpuPer1000,
  };
}

function print(title: string, rows: Row[], baseline: Row | undefined): void {
  console.log(`\n## ${title}\n`);
  // CPU of every process per send (load generator, sandbox, node(s), Redis, NATS, PostgreSQL): on a machine shared with
  // other work, the baseline's total over the row's is the ratio the two would have on two cores of their own.
  const cpuTotal = (r: Row) => Object.values(r.cpuPer1000).reduce((a, b) => a + b, 0);
  console.log('| run | sends/s | p50 ms | p99 ms | ratio | CPU ms/send, all processes (ratio) | Redis cmds/send (of it upkeep) | fsyncs/send (SQLite writes) | PostgreSQL tx/send | sent / 2xx / network accepted / throttled | non-2xx | CPU s per 1,000 sends |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|');
  for (const r of rows) {
    const rate = r.load.ok / r.load.seconds;
    const ratio = baseline ? (rate / (baseline.load.ok / baseline.load.seconds)).toFixed(2) : '';
    const cpu1 = `${cpuTotal(r).toFixed(2)}${baseline ? ` (${(cpuTotal(baseline) / cpuTotal(r)).toFixed(2)})` : ''}`;
    const offered = r.load.sent + r.load.skipped;
    const non2xx = Object.entries(r.load.statuses).map(([k, v]) => `${k}×${v}`).concat(r.load.errors ? [`errors×${r.load.errors}`] : [], r.load.skipped ? [`not sent×${r.load.skipped}`] : []).join(' ') || '0';
    const cpu = Object.entries(r.cpuPer1000).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
    console.log(
      `| ${r.name} | ${rate.toFixed(0)} | ${r.load.p50.toFixed(1)} | ${r.load.p99.toFixed(1)} | ${ratio} | ${cpu1} | ${r.redisPerSend === null || r.redisPerSend === 0 ? '—' : `${r.redisPerSend.toFixed(1)} (${r.redisUpkeepPerSend.toFixed(1)})`} | ${r.commitsPerSend === null ? '—' : `${r.commitsPerSend.toFixed(2)} (${r.writesPerSend!.toFixed(1)} writes)`} | ${r.pgTxPerSend === null ? '—' : r.pgTxPerSend.toFixed(1)} | ${offered} / ${r.load.ok} / ${r.network.accepted} / ${r.network.throttled} | ${non2xx} | ${cpu} |`,
    );
  }
}

export async function run(): Promise<void> {
  const [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
  const natsPid = nats.proc.pid!;
  const postmaster = Number(readFileSync(join(postgres.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  // The server may still be finishing its start (57P03) when its port already answers.
  let pgStats = new pg.Client({ connectionString: postgres.url });
  for (let tries = 1; ; tries++) {
    try {
      await pgStats.connect();
      break;
    } catch (e) {
      if (tries >= 50) throw e;
      pgStats = new pg.Client({ connectionString: postgres.url });
      await new Promise((res) => setTimeout(res, 200));
    }
  }
  const r: StatsClient = createClient({ url: redis.url });
  await r.connect();
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'sb-bench-msg-'));
    dirs.push(d);
    return d;
  };
  const clusterEnv = (id: string, prefix: string) => ({ ...clusterServersEnv({ redis, nats, postgres }, prefix), NODE_ID: id, SECRETS_KEY: SECRETS });
  const natsCpu = async () => ({ nats: cpuOf(natsPid), postgres: postgresCpu(postmaster) });
  const pgCounter = { pgCommits: () => pgCommits(pgStats) };
  const closed = { connections: CONNECTIONS };
  const procs: ServerProcess[] = [redis, nats, postgres];
  let sandbox = await startSandbox(100_000);
  try {
    // The machine is shared and its speed moves by the second: the closed-loop rows run in each of
    // BENCH_ROUNDS interleaved rounds (default 3), their targets started once, and each reports its
    // round with the median sends/s.
    const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
    // `bases`: where the sandbox delivers the status webhooks while that target runs.
    const targets: { bases: string[]; run: () => Promise<Row>; close: () => Promise<void> }[] = [];
    // New contacts in every round (BENCH_MSG_WARM=1: the same ones, which the node has seen: their actors loaded, their contacts stored).
    const warmBase = 4915100000000 + Math.floor(Math.random() * 1e6) * 10_000;
    const contacts = () => ({ ...closed, contactBase: process.env.BENCH_MSG_WARM ? warmBase : 4915100000000 + Math.floor(Math.random() * 1e6) * 10_000 });
    let baselineAt: number | undefined;
    if (ROWS.has('bare')) {
      const bare = await startBareForwarder(redis.url, sandbox);
      baselineAt = targets.length;
      targets.push({ bases: [bare.url], run: () => measure('bare forwarder (baseline)', sandbox, r, { urls: [bare.url], key: 'x', channelId: bare.channelId, pids: {}, inProcess: 'forwarder' }, closed), close: () => bare.close() });
    }
    if (ROWS.has('embedded')) {
      const t = await startTarget(sandbox, [{ DATA_DIR: tmp() }], 10_000);
      targets.push({ bases: t.urls, run: () => measure('embedded (SQLite on disk, FULL)', sandbox, r, { ...t, ...sqliteCounters(t), pids: {}, inProcess: 'node' }, closed), close: () => t.close() });
    }
    if (ROWS.has('clustered1')) {
      const t = await startTarget(sandbox, [clusterEnv('c1', 'c1')], 10_000);
      targets.push({ bases: t.urls, run: () => measure('clustered, 1 node (PostgreSQL + Redis + NATS)', sandbox, r, { ...t, ...pgCounter, pids: {}, inProcess: 'node' }, contacts(), natsCpu), close: () => t.close() });
    }
    const runs: Row[][] = targets.map(() => []);
    try {
      for (let round = 0; round < rounds; round++) {
        for (const [i, t] of targets.entries()) {
          await sandbox.control('POST', '/targets', { bases: t.bases });
          runs[i]!.push(await t.run());
        }
      }
    } finally {
      for (const t of targets) await t.close();
    }
    const rows = runs.map((rs) => medianBy(rs, (row) => row.load.ok / row.load.seconds));
    const baseline = baselineAt === undefined ? undefined : rows[baselineAt];
    if (ROWS.has('clustered3')) {
      const t = await startTarget(sandbox, [clusterEnv('d1', 'c3'), clusterEnv('d2', 'c3'), clusterEnv('d3', 'c3')], 10_000);
      rows.push(await measure('clustered, 3 nodes (PostgreSQL + Redis + NATS)', sandbox, r, { ...t, ...pgCounter, pids: { node2: t.childPids[0]!, node3: t.childPids[1]! }, inProcess: 'node1' }, closed, natsCpu));
      await t.close();
    }
    print(`Template sends with their 3 status webhooks (${CONNECTIONS} connections, closed loop, ${SECONDS} s, 2000 contacts, sandbox in its own process; each row but the 3-node one: median of ${rounds} interleaved rounds)`, rows, baseline);

    if (ROWS.has('rate')) {
      await sandbox.stop();
      sandbox = await startSandbox(RATE);
      const offered = { rate: RATE, maxOutstanding: 5000 };
      const rateRows: Row[] = [];
      const bare = await startBareForwarder(redis.url, sandbox);
      rateRows.push(await measure('bare forwarder', sandbox, r, { urls: [bare.url], key: 'x', channelId: bare.channelId, pids: {}, inProcess: 'forwarder' }, offered));
      await bare.close();
      const e = await startTarget(sandbox, [{ DATA_DIR: tmp() }], RATE);
      rateRows.push(await measure('embedded', sandbox, r, { ...e, ...sqliteCounters(e), pids: {}, inProcess: 'node' }, offered));
      await e.close();
      const c = await startTarget(sandbox, [clusterEnv('r1', 'rate1')], RATE);
      rateRows.push(await measure('clustered, 1 node', sandbox, r, { ...c, pids: {}, inProcess: 'node' }, offered, natsCpu));
      await c.close();
      print(`Offered ${RATE} sends/s (open loop) to one number; SANDBOX_MAX_MPS=${RATE}, channel tier ${RATE}/s`, rateRows, undefined);
    }
    if (ROWS.has('sustained')) {
      await sandbox.stop();
      sandbox = await startSandbox(RATE);
      const steps: Row[] = [];
      const held: string[] = [];
      const search = async (name: string, target: Target, extra: { commits?: () => number; writes?: () => number }, extraCpu?: () => Promise<Record<string, number>>) => {
        let best = 0;
        for (const rate of SUSTAIN_RATES) {
          const row = await measure(`${name}, offered ${rate}/s`, sandbox, r, { ...target, pids: {}, inProcess: 'node', ...extra }, { rate, maxOutstanding: 5000 }, extraCpu);
          steps.push(row);
          const offered = row.load.sent + row.load.skipped;
          if (row.load.ok < offered || row.network.throttled > 0 || row.load.p99 >= SUSTAIN_P99_MS) break;
          best = rate;
        }
        held.push(`${name}: ${best > 0 ? `${best} sends/s` : `less than ${SUSTAIN_RATES[0]} sends/s`}`);
      };
      if (SUSTAIN_NODES.has('embedded')) {
        const e = await startTarget(sandbox, [{ DATA_DIR: tmp() }], RATE);
        await search('embedded', e, sqliteCounters(e));
        await e.close();
      }
      if (SUSTAIN_NODES.has('clustered1')) {
        const c = await startTarget(sandbox, [clusterEnv('s1', 'sus1')], RATE);
        await search('clustered, 1 node', c, {}, natsCpu);
        await c.close();
      }
      print(`Highest sustained rate to one number (open loop, p99 < ${SUSTAIN_P99_MS} ms, every send 2xx, none throttled); SANDBOX_MAX_MPS=${RATE}, channel tier ${RATE}/s`, steps, undefined);
      console.log(`\nSustained: ${held.join('; ')}.`);
    }
  } finally {
    await sandbox.stop();
    await r.close();
    await pgStats.end();
    for (const p of procs) await p.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
