/**
 * Web chat on one node (embedded mode): 1,000 and 5,000 visitors connected,
 * beside a bare `ws` relay doing the same hops, in the same run.
 *
 * One round trip is a visitor's socket sending a message → the agent's inbox
 * socket receiving the `inbound_message` → the agent replying over HTTP →
 * the visitor's socket receiving the reply. The bare relay does the same
 * with nothing between the hops: it forwards the visitor's frame to the agent
 * socket and pushes the agent's POSTed reply to the visitor's socket.
 *
 * Per server and visitor count:
 * - paced: 5% of the visitors send one message a second each (random phase)
 *   for BENCH_SECONDS; p50 and p99 of the round trip;
 * - throughput: the same 5% each send again as soon as their reply came
 *   (a closed loop) for BENCH_SECONDS; round trips per second;
 * - memory per idle visitor: the server process's growth while the idle
 *   visitors (all but the closed loop's 10%) are started and connected from a
 *   child process (bench/_webchat-visitors.ts), so their client sockets are
 *   not counted: RSS and V8 heap (used + external), each the median of 5
 *   readings after two full collections (global.gc), before and after.
 *
 * Switchboard closes a visitor socket sending over 10 frames a second, so the
 * closed loop spreads its sends over twice as many visitors as the paced
 * phase and keeps each of them under 10 a second.
 *
 * And the widget's script, built from widget/, gzipped (the build refuses
 * anything over 30 KiB).
 *
 * `npm run bench -- webchat` (BENCH_WEBCHAT_VISITORS=1000,5000 to change the counts);
 * `node --expose-gc --import tsx bench/run.ts webchat` uses the flag instead of enabling it at run time.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fork, type ChildProcess } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { WebSocket, WebSocketServer } from 'ws';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer, type RunningServer } from '../src/server.js';
import { SCOPES } from '../src/domain/scopes.js';

const here = dirname(fileURLToPath(import.meta.url));
const COUNTS = (process.env.BENCH_WEBCHAT_VISITORS ?? '1000,5000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ACTIVE_SHARE = 0.05;
/** The closed loop's visitors: twice the paced ones, so no socket meets Switchboard's per-socket frame limit first. */
const POOL_SHARE = 0.1;
const SITE = 'https://shop.example';
const now = () => performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// A full collection before each memory reading: global.gc under node --expose-gc, else the same function made available here.
const gc: () => void =
  typeof globalThis.gc === 'function'
    ? () => globalThis.gc!()
    : (() => {
        setFlagsFromString('--expose-gc');
        return runInNewContext('gc') as () => void;
      })();

/** The process's memory once settled: two full collections, then the median of 5 readings 100 ms apart. */
async function settledMemory(): Promise<{ rss: number; heap: number }> {
  const rss: number[] = [];
  const heap: number[] = [];
  for (let i = 0; i < 5; i++) {
    gc();
    gc();
    await sleep(100);
    const m = process.memoryUsage();
    rss.push(m.rss);
    heap.push(m.heapUsed + m.external + m.arrayBuffers);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[2]!;
  return { rss: median(rss), heap: median(heap) };
}

/** The idle visitors' client side, in a child process (bench/_webchat-visitors.ts). */
class IdleVisitors {
  private constructor(private readonly child: ChildProcess) {}
  static async start(): Promise<IdleVisitors> {
    const child = fork(join(here, '_webchat-visitors.ts'), { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((r) => child.once('message', () => r()));
    return new IdleVisitors(child);
  }
  private ask(msg: object, reply: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const on = (m: { op: string }) => {
        if (m.op !== reply) return;
        this.child.off('message', on);
        this.child.off('exit', gone);
        resolve();
      };
      const gone = () => reject(new Error('the idle visitors\' process ended'));
      this.child.on('message', on);
      this.child.once('exit', gone);
      this.child.send(msg);
    });
  }
  open(spec: IdleSpec, n: number): Promise<void> {
    return this.ask({ op: 'open', ...spec, origin: SITE, n }, 'opened');
  }
  close(): Promise<void> {
    return this.ask({ op: 'close' }, 'closed');
  }
  stop(): void {
    this.child.kill();
  }
}

/** Where the child opens a target's idle visitors. */
interface IdleSpec {
  kind: 'bare' | 'switchboard';
  base: string;
  channelId?: string;
}

/** A visitor's socket, with a hook for the agent replies that reach it. */
interface Visitor {
  ws: WebSocket;
}

interface Target {
  name: string;
  /** Creates and connects `n` visitors; resolves once each is ready to send. */
  visitors(n: number): Promise<Visitor[]>;
  /** Connects the agent's socket; `onInbound` gets each visitor message's text and where to reply. */
  agent(onInbound: (text: string, replyTo: string) => void): Promise<WebSocket>;
  /** The agent's reply over HTTP. */
  reply(replyTo: string, text: string): Promise<void>;
  /** The fewest milliseconds between two messages of one visitor's socket (Switchboard closes a socket past 10 frames/s). */
  minGapMs: number;
  idle: IdleSpec;
  /** Switchboard only: makes each of these visitors' conversations answerable (a first message, taken). */
  prepare?(visitors: Visitor[]): Promise<void>;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

function openSocket(url: string, opts: ConstructorParameters<typeof WebSocket>[2], ready: 'open' | 'message'): Promise<WebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false, ...opts });
  return new Promise((resolve, reject) => {
    ws.once(ready, () => resolve(ws)); // the Switchboard sockets are ready at their welcome frame
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

async function inBatches<T>(n: number, batch: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += batch) out.push(...(await Promise.all(Array.from({ length: Math.min(batch, n - i) }, (_, j) => make(i + j)))));
  return out;
}

/** The baseline: visitor frames relayed to the agent socket, the agent's POSTed reply pushed to the visitor. */
async function bareWs(): Promise<Target> {
  const server = createServer();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const visitors = new Map<string, WebSocket>();
  let agentSocket: WebSocket | undefined;
  server.on('upgrade', (req, socket, head) => {
    const u = new URL(req.url ?? '/', 'http://x');
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (u.pathname === '/agent') {
        agentSocket = ws;
        return;
      }
      const id = u.searchParams.get('visitor')!;
      visitors.set(id, ws);
      ws.on('message', (d) => {
        const f = JSON.parse(d.toString()) as { text: string };
        agentSocket?.send(JSON.stringify({ type: 'inbound_message', data: { audienceExternalId: id, content: { type: 'text', text: f.text } } }));
      });
    });
  });
  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = decodeURIComponent(req.url!.split('/')[2]!);
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { text: string };
      visitors.get(id)?.send(JSON.stringify({ type: 'message', message: { from: 'agent', text: body.text } }));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  const port = await listen(server);
  return {
    name: 'bare ws relay',
    minGapMs: 0,
    idle: { kind: 'bare', base: `http://127.0.0.1:${port}` },
    visitors: (n) => inBatches(n, 200, async (i) => ({ ws: await openSocket(`ws://127.0.0.1:${port}/visitor?visitor=v${i}`, { origin: SITE }, 'open') })),
    agent: async (onInbound) => {
      const ws = await openSocket(`ws://127.0.0.1:${port}/agent`, {}, 'open');
      ws.on('message', (d) => {
        const f = JSON.parse(d.toString()) as { data: { audienceExternalId: string; content: { text: string } } };
        onInbound(f.data.content.text, f.data.audienceExternalId);
      });
      return ws;
    },
    reply: async (to, text) => {
      const r = await fetch(`http://127.0.0.1:${port}/reply/${encodeURIComponent(to)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text }) });
      await r.arrayBuffer();
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function switchboard(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-webchat-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    OPERATOR_TOKEN: 'bench-operator-token-0123456789',
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    INBOX_MAX_BUFFERED_BYTES: String(16 * 1024 * 1024),
    // Every visitor comes from 127.0.0.1 here, and the closed loop sends faster than a person types.
    WEBCHAT_ADDRESS_REQUESTS_PER_MINUTE: '1000000',
    WEBCHAT_VISITOR_MESSAGES_PER_MINUTE: '100000',
  });
  const running: RunningServer = await startServer(config, { log: silentLogger });
  const url = `http://127.0.0.1:${running.port}`;
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string>) => {
    const r = await fetch(url + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await r.json()) as Record<string, any>;
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
  const op = (path: string, body: unknown) => call('POST', path, body, { authorization: 'Bearer bench-operator-token-0123456789' });
  const org = await op('/admin/v1/organizations', { name: 'Bench' });
  const user = await op(`/admin/v1/organizations/${org.id}/users`, { email: 'a@bench.test', name: 'A', role: 'admin', password: 'correct horse battery' });
  const key = (await op(`/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes: [...SCOPES] })).key as string;
  const channel = await op(`/admin/v1/organizations/${org.id}/channels`, { kind: 'web_chat', name: 'Site chat', allowedOrigins: [SITE] });
  const agentHeaders = { authorization: `Bearer ${key}` };
  const audience = new Map<WebSocket, string>();
  return {
    name: 'Switchboard web chat',
    minGapMs: 110,
    idle: { kind: 'switchboard', base: url, channelId: channel.id as string },
    visitors: (n) =>
      inBatches(n, 100, async () => {
        const v = await call('POST', `/webchat/v1/channels/${channel.id}/visitors`, {}, { origin: SITE });
        const ws = await openSocket(`ws://127.0.0.1:${running.port}/webchat/v1/socket?channel=${channel.id}&token=${encodeURIComponent(v.token as string)}`, { origin: SITE }, 'message');
        audience.set(ws, v.audienceExternalId as string);
        return { ws };
      }),
    prepare: async (visitors) => {
      await inBatches(visitors.length, 50, async (i) => {
        const v = visitors[i]!;
        const acked = new Promise<void>((resolve) => {
          const on = (d: Buffer) => {
            if ((JSON.parse(d.toString()) as { type: string }).type !== 'ack') return;
            v.ws.off('message', on);
            resolve();
          };
          v.ws.on('message', on);
        });
        v.ws.send(JSON.stringify({ type: 'message', text: 'hello' }));
        await acked;
        await call('POST', `/v1/conversations/${encodeURIComponent(audience.get(v.ws)!)}/take`, undefined, agentHeaders);
      });
    },
    agent: async (onInbound) => {
      const ws = await openSocket(`ws://127.0.0.1:${running.port}/ws`, { headers: agentHeaders }, 'message');
      ws.on('message', (d) => {
        const f = JSON.parse(d.toString()) as { type: string; data?: { audienceExternalId: string; content?: { text?: string } } };
        if (f.type === 'inbound_message' && f.data?.content?.text !== undefined) onInbound(f.data.content.text, f.data.audienceExternalId);
      });
      return ws;
    },
    reply: async (to, text) => {
      await call('POST', `/v1/conversations/${encodeURIComponent(to)}/reply`, { type: 'text', text }, agentHeaders);
    },
    close: async () => {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Row {
  name: string;
  active: number;
  pool: number;
  p50: number;
  p99: number;
  sent: number;
  lost: number;
  roundTripsPerSec: number;
  bytesPerVisitor: number;
  heapPerVisitor: number;
  idle: number;
}

/** Round trips in flight: marker → when it was sent and who waits for it. */
class Trips {
  private seq = 0;
  private readonly pending = new Map<string, { t0: number; done: () => void }>();
  readonly latencies: number[] = [];
  lost = 0;

  constructor(
    private readonly tag: string,
    visitors: Visitor[],
  ) {
    for (const v of visitors) {
      v.ws.on('message', (d) => {
        const text = d.toString();
        const m = /re bench-marker-([A-Za-z0-9]+)/.exec(text);
        if (m === null) return;
        const f = JSON.parse(text) as { type: string; message?: { from: string } };
        if (f.type !== 'message' || f.message?.from !== 'agent') return;
        const p = this.pending.get(m[1]!);
        if (p === undefined) return;
        this.pending.delete(m[1]!);
        this.latencies.push(now() - p.t0);
        p.done();
      });
    }
  }

  /** Sends one message from `v`; resolves when its reply reached `v`. */
  send(v: Visitor): Promise<void> {
    const marker = `${this.tag}x${this.seq++}`;
    return new Promise<void>((resolve) => {
      // A reply that never comes counts as lost rather than stalling the run.
      const timer = setTimeout(() => {
        this.pending.delete(marker);
        this.lost++;
        resolve();
      }, 30_000);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.pending.set(marker, { t0: now(), done });
      v.ws.send(JSON.stringify({ type: 'message', text: `bench-marker-${marker}` }));
    });
  }

}

async function measure(target: Target, n: number, runId: string, idleClients: IdleVisitors): Promise<Row> {
  // The closed loop's visitors are this process's; the rest, idle, are the child's.
  const poolSize = Math.max(1, Math.round(n * POOL_SHARE));
  const idle = n - poolSize;
  const before = await settledMemory();
  await idleClients.open(target.idle, idle);
  await sleep(1000);
  const after = await settledMemory();
  const bytesPerVisitor = (after.rss - before.rss) / idle;
  const heapPerVisitor = (after.heap - before.heap) / idle;
  const visitors = await target.visitors(poolSize);
  const active = visitors.slice(0, Math.max(1, Math.round(n * ACTIVE_SHARE)));
  const pool = visitors;
  await target.prepare?.(pool);
  const agent = await target.agent((text, replyTo) => {
    const m = /^bench-marker-([A-Za-z0-9]+)$/.exec(text);
    if (m !== null) target.reply(replyTo, `re bench-marker-${m[1]}`).catch((e: unknown) => console.error('reply failed:', e));
  });

  // Paced: each active visitor once a second, at its own phase.
  const paced = new Trips(`${runId}p`, active);
  const sends: Promise<void>[] = [];
  const tEnd = now() + SECONDS * 1000;
  await Promise.all(
    active.map(async (v) => {
      await sleep(Math.random() * 1000);
      while (now() < tEnd) {
        const t = now();
        sends.push(paced.send(v));
        await sleep(Math.max(0, 1000 - (now() - t)));
      }
    }),
  );
  await Promise.all(sends);
  const lost = paced.lost;
  const lat = [...paced.latencies].sort((x, y) => x - y);

  // Closed loop: as many round trips in flight as paced visitors, each starting the next as soon as its
  // reply came, from the next visitor of the pool in turn.
  const loop = new Trips(`${runId}l`, pool);
  const lastSent = new Map<Visitor, number>();
  let cursor = 0;
  const t0 = now();
  const stopAt = t0 + SECONDS * 1000;
  await Promise.all(
    active.map(async () => {
      while (now() < stopAt) {
        const v = pool[cursor++ % pool.length]!;
        const wait = (lastSent.get(v) ?? -Infinity) + target.minGapMs - now();
        if (wait > 0) await sleep(wait);
        lastSent.set(v, now());
        await loop.send(v);
      }
    }),
  );
  const roundTripsPerSec = loop.latencies.length / ((now() - t0) / 1000);

  agent.close();
  for (const v of visitors) v.ws.terminate();
  await idleClients.close();
  return { name: target.name, active: active.length, pool: pool.length, p50: pct(lat, 50), p99: pct(lat, 99), sent: sends.length, lost: lost + loop.lost, roundTripsPerSec, bytesPerVisitor, heapPerVisitor, idle };
}

/** Builds the widget from widget/ into a scratch directory and returns its gzipped size. */
async function widgetSize(): Promise<{ raw: number; gzip: number }> {
  const { build } = await import('vite');
  const out = mkdtempSync(join(tmpdir(), 'sb-bench-widget-'));
  try {
    await build({ configFile: join(here, '..', 'widget', 'vite.config.ts'), logLevel: 'silent', build: { outDir: out, emptyOutDir: true } });
    const code = readFileSync(join(out, 'widget.js'));
    return { raw: code.length, gzip: gzipSync(code).length };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  let runId = 0;
  const idleClients = await IdleVisitors.start();
  try {
  for (const n of COUNTS) {
    const rows: Row[] = [];
    for (const make of [bareWs, switchboard]) {
      const target = await make();
      try {
        rows.push(await measure(target, n, `${n}r${runId++}`, idleClients));
      } finally {
        await target.close();
      }
      await sleep(500);
    }
    const base = rows[0]!;
    console.log(`\n## web chat, ${n} visitors connected on one node, ${rows[0]!.active} of them sending (${SECONDS} s paced at 1 msg/s each, then ${SECONDS} s closed loop of ${rows[0]!.active} in flight over ${rows[0]!.pool} visitors)`);
    console.log(`| server | round trip p50 ms | p99 ms | p99 ratio to bare ws | paced sent (lost, both phases) | round trips/s, closed loop | ratio to bare ws | RSS per idle visitor (${rows[0]!.idle} idle) | ratio | heap per idle visitor | ratio |`);
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) {
      console.log(
        `| ${r.name} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${(r.p99 / base.p99).toFixed(2)} | ${r.sent} (${r.lost}) | ${Math.round(r.roundTripsPerSec)} | ${(r.roundTripsPerSec / base.roundTripsPerSec).toFixed(2)} | ${(r.bytesPerVisitor / 1024).toFixed(1)} KiB | ${(r.bytesPerVisitor / base.bytesPerVisitor).toFixed(2)} | ${(r.heapPerVisitor / 1024).toFixed(1)} KiB | ${(r.heapPerVisitor / base.heapPerVisitor).toFixed(2)} |`,
      );
    }
  }
  } finally {
    idleClients.stop();
  }
  const w = await widgetSize();
  console.log(`\n## web chat widget: widget.js ${(w.raw / 1024).toFixed(1)} KiB, ${(w.gzip / 1024).toFixed(1)} KiB gzipped (limit 30 KiB, ${((w.gzip / (30 * 1024)) * 100).toFixed(0)}% of it)`);
}
