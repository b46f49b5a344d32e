/**
 * Webhooks: deliveries per second to a loopback receiver with 1 and 50
 * registrations, and event → delivery latency (p50/p99) at a steady rate,
 * embedded and clustered (PostgreSQL + Redis + JetStream), beside a bare loop of signed
 * POSTs to the same receiver in the same run.
 *
 * `npm run bench -- webhooks` (BENCH_SECONDS sets the paced runs' length).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedEventLog, JetStreamEventLog, type DomainEvent, type EventLog } from '../src/events/index.js';
import { connectRedis, createSqliteWebhookStore, createPostgresWebhookStore, openNodeDbIn, PgDb, NODE_PG_MIGRATIONS, type WebhookStore } from '../src/store/index.js';
import { generateSecret, signRequest, WebhookDispatcher, WebhookHttpClient } from '../src/webhooks/index.js';
import { startNats, startPostgres, startRedis } from '../test/harness/servers.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

/** Counts POSTs and records event → arrival latency from the body's createdAt. */
async function startSink() {
  let count = 0;
  const latencies: number[] = [];
  let waiter: { n: number; resolve: () => void } | null = null;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200).end();
      count++;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { createdAt?: string };
        if (body.createdAt) latencies.push(Date.now() - Date.parse(body.createdAt));
      } catch {
        // the bare loop posts the same shape; nothing else arrives
      }
      if (waiter !== null && count >= waiter.n) {
        const w = waiter;
        waiter = null;
        w.resolve();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}/${path}`,
    reset() {
      count = 0;
      latencies.length = 0;
    },
    get count() {
      return count;
    },
    latencies,
    until(n: number, timeoutMs = 120_000): Promise<void> {
      if (count >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`only ${count} of ${n} deliveries arrived`)), timeoutMs);
        waiter = { n, resolve: () => { clearTimeout(t); resolve(); } };
      });
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
type Sink = Awaited<ReturnType<typeof startSink>>;

function pct(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

function body(i: number): string {
  return JSON.stringify({ id: randomUUID(), type: 'resource.updated', createdAt: new Date().toISOString(), organizationId: 'bench', data: { i, pad: 'x'.repeat(200) } });
}

/** Baseline: sign and POST in a loop, 8 in flight (the dispatcher's per-registration concurrency). */
async function bareLoop(sink: Sink, n: number): Promise<number> {
  const http = new WebhookHttpClient({ policy: { allowLoopback: true }, timeoutMs: 15_000 });
  const secret = generateSecret();
  sink.reset();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < n) {
        const i = next++;
        const b = body(i);
        const id = randomUUID();
        await http.post(sink.url('bare'), b, { ...signRequest([secret], id, Math.floor(Date.now() / 1000), b) });
      }
    }),
  );
  const rate = n / ((performance.now() - started) / 1000);
  http.close();
  return rate;
}

interface Stack {
  store: WebhookStore;
  events: EventLog;
  close(): Promise<void>;
}

async function runCase(label: string, stack: Stack, sink: Sink, registrations: number, burstEvents: number, pacedPerSecond: number) {
  const http = new WebhookHttpClient({ policy: { allowLoopback: true }, timeoutMs: 15_000 });
  const dispatcher = new WebhookDispatcher({
    store: stack.store,
    events: stack.events,
    http,
    retry: { baseMs: 5000, maxDelayMs: 60_000, windowMs: 3600_000 },
    concurrencyPerEndpoint: 8,
    maxActiveEndpoints: 256,
    consumerName: `bench-${randomUUID().slice(0, 8)}`,
  });
  const org = `b${randomUUID().slice(0, 8)}`;
  const createdAt = new Date(Date.now() - 5000).toISOString();
  for (let r = 0; r < registrations; r++) {
    await stack.store.createRegistration({
      id: randomUUID(), organizationId: org, url: sink.url(`${label}-${r}`), events: ['*'], secret: generateSecret(), previousSecret: null,
      status: 'active', disabledReason: null, createdAt, updatedAt: createdAt,
    });
  }
  await dispatcher.start();
  const publish = (i: number) => {
    const e: DomainEvent = { id: randomUUID(), type: 'resource.updated', organizationId: org, createdAt: new Date().toISOString(), data: { i, pad: 'x'.repeat(200) } };
    return stack.events.publish(e);
  };

  // Throughput: a burst of events, 64 publishes in flight; time until every delivery arrived.
  sink.reset();
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 64 }, async () => { while (next < burstEvents) await publish(next++); }));
  await sink.until(burstEvents * registrations);
  const rate = (burstEvents * registrations) / ((performance.now() - started) / 1000);

  // Latency: a steady rate well below saturation.
  sink.reset();
  const total = Math.max(1, Math.round(pacedPerSecond * SECONDS));
  const interval = 1000 / pacedPerSecond;
  const t0 = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(publish(i));
  }
  await Promise.all(pending);
  await sink.until(total * registrations);
  const lat = [...sink.latencies];
  await dispatcher.stop(1000);
  http.close();
  return { rate, p50: pct(lat, 50), p99: pct(lat, 99), paced: pacedPerSecond * registrations };
}

export async function run(): Promise<void> {
  const sink = await startSink();
  const [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
  const dirs: string[] = [];
  const rows: string[] = [];
  const line = (name: string, rate: number, extra = '') => rows.push(`${name.padEnd(46)} ${rate.toFixed(0).padStart(7)} deliveries/s${extra}`);
  try {
    const bare = await bareLoop(sink, 4000);
    line('bare loop of signed POSTs, 8 in flight (baseline)', bare);

    const embedded = async (): Promise<Stack> => {
      const dir = mkdtempSync(join(tmpdir(), 'sb-bench-wh-'));
      dirs.push(dir);
      const db = await openNodeDbIn(join(dir, 'db'));
      const events = await EmbeddedEventLog.open(join(dir, 'events'));
      return { store: createSqliteWebhookStore(db), events, close: async () => { await events.close(); await db.close(); } };
    };
    const clustered = async (): Promise<Stack> => {
      const prefix = `bw${randomUUID().slice(0, 6)}`;
      const client = await connectRedis(redis.url);
      const db = await PgDb.open(postgres.url, { migrations: NODE_PG_MIGRATIONS, schema: prefix });
      const events = await JetStreamEventLog.connect(nats.url, { prefix });
      return { store: createPostgresWebhookStore(db, client, { prefix }), events, close: async () => { await events.close(); await client.quit(); await db.close(); } };
    };

    for (const [mode, make] of [['embedded', embedded], ['clustered', clustered]] as const) {
      for (const [regs, burst, paced] of [[1, 3000, 200], [50, 120, 10]] as const) {
        const stack = await make();
        const r = await runCase(`${mode}-${regs}`, stack, sink, regs, burst, paced);
        line(`${mode}, ${regs} registration${regs > 1 ? 's' : ''}`, r.rate, `   ratio ${(r.rate / bare).toFixed(2)}   event→delivery at ${r.paced}/s: p50 ${r.p50} ms, p99 ${r.p99} ms`);
        await stack.close();
      }
    }
  } finally {
    console.log('\n## Webhooks\n');
    for (const r of rows) console.log(r);
    await sink.close();
    await Promise.all([redis.stop(), nats.stop(), postgres.stop()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
