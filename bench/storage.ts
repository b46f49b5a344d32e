/**
 * Embedded storage (the node's SQLite database):
 *
 * Scale — BENCH_STORAGE_N tickets (default 1,000,000) and as many session
 * messages (100 per session) are written *directly through the store*
 * (createSqliteStore / createSqliteSessionMessageRepo, 1,000 writes per
 * commit), not over HTTP, for speed. Then the service runs on that data dir
 * as a child process (`node --import tsx src/main.ts`): time to ready after
 * `kill -9`, ticket list page 1 and page 1000 and a session's history p99
 * over HTTP (sequential requests), RSS at the end, database size.
 *
 * Speed — ticket create and template send over HTTP (autocannon, 16
 * connections) against a child service on a fresh data dir, beside the
 * bare express + 1 Redis SET baseline of bench/lib.ts; fsyncs per send
 * counted with strace (fsync + fdatasync of the service process, by file).
 * With BENCH_BEFORE_DIR=<checkout of an earlier version, with node_modules>
 * the same speed runs also measure that version, in the same run.
 *
 *   BENCH_STORAGE_N=1000000 BENCH_SECONDS=5 npm run bench -- storage
 *
 * BENCH_STORAGE_SPEED=0 runs the scale part alone; BENCH_STORAGE_N=0 the speed part alone.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createSqliteStore, openNodeDbIn } from '../src/store/index.js';
import { createSqliteSessionMessageRepo } from '../src/store/session-messages/sqlite.js';
import { AccountService } from '../src/app/accounts.js';
import { SCOPES } from '../src/domain/scopes.js';
import { systemClock } from '../src/clock.js';
import { operatorApi, orgWithKey } from '../test/harness/operator-api.js';
import { freePort, startRedis } from '../test/harness/servers.js';
import { load, loadVaried, report, startBareRedisEndpoint, type LoadResult } from './lib.js';

const OPERATOR = 'bench-operator-token-0123456789';
const ROOT = join(import.meta.dirname, '..');

interface Child {
  proc: ChildProcess;
  base: string;
  output: () => string;
  exited: Promise<void>;
}

async function startService(cwd: string, dataDir: string, extra: Record<string, string> = {}): Promise<{ child: Child; readyMs: number }> {
  const port = await freePort();
  const started = Date.now();
  const proc = spawn(process.execPath, ['--import', 'tsx', '--import', join(import.meta.dirname, '_event-loop-delay.mjs'), 'src/main.ts'], {
    cwd,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      OPERATOR_TOKEN: OPERATOR,
      LOG_LEVEL: 'error',
      SEED_DEMO: 'false',
      TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000000',
      SANDBOX_MAX_MPS: '100000',
      SANDBOX_STATUS_DELAY_MS: '0',
      SB_ELD_FILE: join(dataDir, '..', `eld-${port}.json`),
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => proc.on('exit', () => r()));
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`service exited: ${out}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child: { proc, base, output: () => out, exited }, readyMs: Date.now() - started };
}

async function kill9(c: Child): Promise<void> {
  c.proc.kill('SIGKILL');
  await c.exited;
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function p99(url: string, headers: Record<string, string>, n = 200): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const r = await fetch(url, { headers });
    if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(n * 0.5)]!, p99: times[Math.floor(n * 0.99)]! };
}

/** Org, admin user and an all-scopes API key, written through the store. */
async function seedAccount(dir: string): Promise<{ orgId: string; key: string }> {
  const db = openNodeDbIn(dir);
  const store = createSqliteStore(db);
  const accounts = new AccountService(store, systemClock);
  const org = await accounts.createOrganization('Scale');
  const user = await accounts.createUser(org.id, { email: 'scale@example.com', name: 'S', role: 'admin', password: 'scale password 1' });
  const { key } = await accounts.createApiKey(org.id, { userId: user.id, name: 'bench', scopes: [...SCOPES] });
  await store.close();
  return { orgId: org.id, key };
}

async function scale(n: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-storage-'));
  try {
    const { orgId, key } = await seedAccount(dir);
    const db = openNodeDbIn(dir);
    const store = createSqliteStore(db);
    const messages = createSqliteSessionMessageRepo(db);
    const now = new Date().toISOString();
    const statuses = ['open', 'in_progress', 'resolved', 'closed'] as const;
    let t0 = Date.now();
    for (let i = 0; i < n; i += 1000) {
      const batch: Promise<unknown>[] = [];
      for (let j = i; j < Math.min(n, i + 1000); j++) {
        batch.push(
          store.tickets.create(
            { _id: randomUUID(), title: `Ticket ${j}`, description: 'The printer on the third floor is on fire again; please send someone.', status: statuses[j % 4]!, priority: 'medium', assigneeId: null, audienceId: j % 10 === 0 ? `contact-${j % 5000}` : null, audienceExternalId: null, organizationId: orgId, resolutionDate: null, createdBy: null, createdAt: now, updatedAt: now },
            { id: `ev-${j}`, type: 'ticket.created', createdAt: now },
          ),
        );
      }
      await Promise.all(batch);
      // The outbox would be drained by the relay; the store-level writer removes what it wrote.
      db.raw.prepare('DELETE FROM outbox').run();
    }
    const ticketSecs = (Date.now() - t0) / 1000;
    t0 = Date.now();
    const sessions = Math.ceil(n / 100);
    for (let i = 0; i < n; i += 1000) {
      const batch: Promise<unknown>[] = [];
      for (let j = i; j < Math.min(n, i + 1000); j++) {
        const s = j % sessions;
        batch.push(
          messages.append({
            _id: `msg-${j}`,
            organizationId: orgId,
            sessionId: `session-${s}`,
            channelId: 'ch_bench',
            audienceExternalId: `49151${String(s).padStart(7, '0')}:100200`,
            direction: 'outbound',
            sender: 'bot',
            content: { type: 'text', text: `Your order A-${j} ships on Monday.` },
            messageId: `wamid.${j}`,
            status: 'sent',
            sentAt: now,
          }),
        );
      }
      await Promise.all(batch);
    }
    const messageSecs = (Date.now() - t0) / 1000;
    await store.close();
    const file = join(dir, 'switchboard.db');
    const sizeMb = statSync(file).size / 1024 / 1024;
    // Opening the database itself (header checks, migrations check, a first page of tickets), in this process.
    let openAt = Date.now();
    const reopened = openNodeDbIn(dir);
    await createSqliteStore(reopened).tickets.list({ organizationId: orgId, offset: 0, limit: 20 });
    const openMs = Date.now() - openAt;
    await reopened.close();
    // The same service on an empty data dir: what starting costs whatever the data (process, tsx, wiring).
    const emptyDir = join(dir, 'empty');
    openAt = Date.now();
    const empty = await startService(ROOT, emptyDir);
    await kill9(empty.child);

    const first = await startService(ROOT, dir);
    await kill9(first.child);
    const { child, readyMs } = await startService(ROOT, dir);
    const headers = { authorization: `Bearer ${key}` };
    const page1 = await p99(`${child.base}/v1/tickets?limit=20&page=1`, headers);
    const page1000 = await p99(`${child.base}/v1/tickets?limit=20&page=1000`, headers);
    const filtered = await p99(`${child.base}/v1/tickets?limit=20&page=10&status=open`, headers);
    const history = await p99(`${child.base}/v1/sessions/session-${Math.floor(sessions / 2)}/messages`, headers);
    const rss = rssMb(child.proc.pid!);
    await kill9(child);
    console.log(`\n## Embedded storage at scale: ${n.toLocaleString('en')} tickets + ${n.toLocaleString('en')} session messages (${sessions.toLocaleString('en')} sessions)\n`);
    console.log(`written directly through the store: tickets ${ticketSecs.toFixed(1)} s (${Math.round(n / ticketSecs)}/s), messages ${messageSecs.toFixed(1)} s (${Math.round(n / messageSecs)}/s)`);
    console.log(`database size                    ${sizeMb.toFixed(0)} MB`);
    console.log(`first start on the data          ${(first.readyMs / 1000).toFixed(2)} s to ready`);
    console.log(`restart after kill -9            ${(readyMs / 1000).toFixed(2)} s to ready (process start + tsx included; on an empty data dir ${(empty.readyMs / 1000).toFixed(2)} s)`);
    console.log(`opening the database             ${openMs} ms (in process: checks, migrations, first ticket page)`);
    console.log(`ticket list page 1 (20)          p50 ${page1.p50.toFixed(1)} ms   p99 ${page1.p99.toFixed(1)} ms`);
    console.log(`ticket list page 1000 (20)       p50 ${page1000.p50.toFixed(1)} ms   p99 ${page1000.p99.toFixed(1)} ms`);
    console.log(`ticket list status=open page 10  p50 ${filtered.p50.toFixed(1)} ms   p99 ${filtered.p99.toFixed(1)} ms`);
    console.log(`session history (100 messages)   p50 ${history.p50.toFixed(1)} ms   p99 ${history.p99.toFixed(1)} ms`);
    console.log(`service RSS at the end           ${rss.toFixed(0)} MB`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** fsync + fdatasync calls of `pid` (all threads) while `during` runs, by file. */
async function countFsyncs<T>(pid: number, during: () => Promise<T>): Promise<{ result: T; byFile: Map<string, number>; total: number }> {
  const out = join(tmpdir(), `sb-strace-${randomUUID()}.txt`);
  const tracer = spawn('strace', ['-f', '-y', '-qq', '-e', 'trace=fsync,fdatasync', '-p', String(pid), '-o', out], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const result = await during();
  tracer.kill('SIGINT');
  await new Promise((r) => tracer.on('exit', r));
  const byFile = new Map<string, number>();
  let total = 0;
  for (const line of existsSync(out) ? readFileSync(out, 'utf8').split('\n') : []) {
    const m = /f(?:data)?sync\(\d+<([^>]+)>\)/.exec(line);
    if (!m) continue;
    const name = m[1]!.replace(/^.*\/sb-bench-speed-[^/]+\/data\//, '');
    byFile.set(name, (byFile.get(name) ?? 0) + 1);
    total++;
  }
  rmSync(out, { force: true });
  return { result, byFile, total };
}

/** Event-loop delay of the child since the previous call (see _event-loop-delay.mjs). */
async function eventLoopDelay(c: Child, file: string): Promise<{ p50: number; p99: number; max: number }> {
  rmSync(file, { force: true });
  c.proc.kill('SIGUSR2');
  for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 20));
  return JSON.parse(readFileSync(file, 'utf8')) as { p50: number; p99: number; max: number };
}

async function speed(label: string, cwd: string, extra: Record<string, string> = {}): Promise<{ rows: LoadResult[]; fsyncs: string }> {
  const root = mkdtempSync(join(tmpdir(), 'sb-bench-speed-'));
  const dir = join(root, 'data');
  try {
    const { child } = await startService(cwd, dir, extra);
    const eldFile = join(dir, '..', `eld-${new URL(child.base).port}.json`);
    const op = operatorApi(child.base, OPERATOR);
    const { orgId, key } = await orgWithKey(op, 'Bench', ['tickets:create', 'tickets:read', 'message:send']);
    const ch = await op(`/admin/v1/organizations/${orgId}/channels`, { kind: 'whatsapp_cloud', name: 'Bench', network: 'sandbox', messagesPerSecond: 10_000 });
    await op(`/admin/v1/organizations/${orgId}/credits/top-up`, { amount: 1_000_000_000 });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const create = await load(`ticket create (${label})`, { url: `${child.base}/v1/tickets`, method: 'POST', headers, body: JSON.stringify({ subject: 'Printer on fire', description: 'Third floor', priority: 'high' }) });
    await eventLoopDelay(child, eldFile);
    let i = 0;
    const counted = await countFsyncs(child.proc.pid!, () =>
      loadVaried(`template send (${label})`, `${child.base}/v2/wa/template`, headers, () => ({
        body: JSON.stringify({
          channelId: ch.id,
          to: String(4915100000000 + (i++ % 2000)),
          template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: `A-${i}` }, { type: 'text', text: 'Monday' }] }] },
        }),
      })),
    );
    const sends = counted.result;
    const eld = await eventLoopDelay(child, eldFile);
    const sent = Math.round(sends.rps * Number(process.env.BENCH_SECONDS ?? 5));
    const files = [...counted.byFile].sort((a, b) => b[1] - a[1]).map(([f, c]) => `${f} ${(c / Math.max(1, sent)).toFixed(2)}`).join(', ');
    await kill9(child);
    return {
      rows: [create, sends],
      fsyncs: `${label}: ${(counted.total / Math.max(1, sent)).toFixed(2)} fsyncs per send (${counted.total} over ~${sent} sends; by file: ${files}); event-loop delay during the sends p50 ${eld.p50.toFixed(1)} ms, p99 ${eld.p99.toFixed(1)} ms, max ${eld.max.toFixed(1)} ms`,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const n = Number(process.env.BENCH_STORAGE_N ?? 1_000_000);
  const before = process.env.BENCH_BEFORE_DIR;
  if (process.env.BENCH_STORAGE_SPEED !== '0') await speedRows(before);
  if (n > 0) await scale(n);
}

async function speedRows(before: string | undefined): Promise<void> {
  const redis = await startRedis();
  try {
    const bare = await startBareRedisEndpoint(redis.url);
    const baseline = await load('bare express + 1 Redis SET', { url: bare.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'x', description: 'y' }) });
    await bare.close();
    const rows: LoadResult[] = [];
    const fsyncs: string[] = [];
    if (before !== undefined) {
      const b = await speed(`before: ${before}`, before);
      rows.push(...b.rows);
      fsyncs.push(b.fsyncs);
    }
    const a = await speed('after: SQLite, FULL', ROOT);
    rows.push(...a.rows);
    fsyncs.push(a.fsyncs);
    const normal = await speed('after: SQLite, NORMAL', ROOT, { SQLITE_SYNCHRONOUS: 'NORMAL' });
    rows.push(...normal.rows);
    fsyncs.push(normal.fsyncs);
    report('Embedded storage: speed (16 connections, autocannon; service in a child process)', baseline, rows);
    if (spawnSync('strace', ['-V']).status === 0) for (const f of fsyncs) console.log(f);
  } finally {
    await redis.stop();
  }
}
