/**
 * The live inbox: 1,000 and 5,000 connected sockets on one node, beside a
 * raw `ws` broadcast and Socket.IO (`io.emit`) of the same payload to the
 * same number of sockets, in the same run. The sockets live in a child
 * process (bench/_inbox-clients.ts), so each server's CPU and memory are its own.
 *
 * Per server and socket count:
 * - latency: 20 events, one every 200 ms, from the moment the event is
 *   produced (raw: broadcast called; Socket.IO: emit called; Switchboard: the
 *   event handed to the durable event log, fsynced, then fanned out) to its
 *   arrival on each socket: p50 and p99 over every (event, socket), and the
 *   median time until every socket had it;
 * - Switchboard end to end: a customer's message to the sandbox network (its
 *   webhook, the conversation actor, the log) until every socket had it;
 * - fan-out throughput: a burst of 50 events, deliveries per second until
 *   every socket had every event;
 * - memory per idle socket: the server process's RSS growth per socket.
 *
 * `npm run bench -- inbox` (BENCH_INBOX_SOCKETS=1000,5000 to change the counts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';
import { Server as SocketIoServer } from 'socket.io';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer, type RunningServer } from '../src/server.js';
import { SCOPES } from '../src/domain/scopes.js';

const here = dirname(fileURLToPath(import.meta.url));
const COUNTS = (process.env.BENCH_INBOX_SOCKETS ?? '1000,5000').split(',').map(Number);
const PACED = 20;
const BURST = 50;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Clients {
  private constructor(private readonly child: ChildProcess) {}
  static async start(): Promise<Clients> {
    const child = fork(join(here, '_inbox-clients.ts'), { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((r) => child.once('message', () => r()));
    return new Clients(child);
  }
  private ask<T>(msg: object, reply: string): Promise<T> {
    return new Promise((resolve) => {
      const on = (m: { op: string }) => {
        if (m.op !== reply) return;
        this.child.off('message', on);
        resolve(m as T);
      };
      this.child.on('message', on);
      this.child.send(msg);
    });
  }
  open(kind: string, url: string, n: number, key?: string) {
    return this.ask({ op: 'open', kind, url, n, key }, 'opened');
  }
  collect(markers: string[]) {
    return this.ask<{ out: Record<string, number[]> }>({ op: 'collect', markers }, 'collected').then((r) => r.out);
  }
  async until(markers: string[], total: number, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { n } = await this.ask<{ n: number }>({ op: 'count', markers }, 'counted');
      if (n >= total) return;
      if (Date.now() > deadline) throw new Error(`only ${n} of ${total} deliveries arrived`);
      await sleep(50);
    }
  }
  close() {
    return this.ask({ op: 'close' }, 'closed');
  }
  stop() {
    this.child.kill();
  }
}

interface Target {
  name: string;
  kind: 'ws' | 'socketio' | 'inbox';
  url: string;
  key?: string;
  /** Produces one event carrying `marker`; resolves once it is handed over. */
  emit(marker: string): Promise<void>;
  /** Switchboard only: the same through a customer's message. */
  endToEnd?(marker: string): Promise<void>;
  close(): Promise<void>;
}

/** A frame the size of an inbound_message event, with the marker inside. */
function payload(marker: string): string {
  return JSON.stringify({
    type: 'inbound_message',
    id: randomUUID(),
    createdAt: new Date().toISOString(),
    organizationId: 'org',
    data: { messageId: `wamid.${randomUUID()}`, channelId: 'ch_x', audienceExternalId: '4915100000000:100000000000001', contactId: randomUUID(), sessionId: randomUUID(), from: '4915100000000', profileName: 'Ann', content: { type: 'text', text: `bench-marker-${marker}` }, receivedAt: new Date().toISOString(), handover: false, handoverStatus: 'bot' },
    seq: 1,
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function rawWs(): Promise<Target> {
  const server = createServer();
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  const host = await listen(server);
  return {
    name: 'raw ws broadcast',
    kind: 'ws',
    url: `ws://${host}`,
    emit: async (marker) => {
      const frame = payload(marker);
      for (const c of wss.clients) c.send(frame);
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function socketIo(): Promise<Target> {
  const server = createServer();
  const io = new SocketIoServer(server, { transports: ['websocket'], perMessageDeflate: false });
  const host = await listen(server);
  return {
    name: 'Socket.IO emit',
    kind: 'socketio',
    url: `http://${host}`,
    emit: async (marker) => {
      io.emit('event', payload(marker));
    },
    close: async () => {
      await new Promise<void>((r) => io.close(() => r()));
    },
  };
}

async function switchboard(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-inbox-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, OPERATOR_TOKEN: 'bench-operator-token-0123456789', LOG_LEVEL: 'silent', SEED_DEMO: 'false', SANDBOX_STATUS_DELAY_MS: '0', INBOX_MAX_BUFFERED_BYTES: String(16 * 1024 * 1024) });
  const running: RunningServer = await startServer(config, { log: silentLogger });
  const url = `http://127.0.0.1:${running.port}`;
  const op = async (path: string, body: unknown) => {
    const r = await fetch(url + path, { method: 'POST', headers: { authorization: 'Bearer bench-operator-token-0123456789', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await r.json()) as Record<string, any>;
  };
  const org = await op('/admin/v1/organizations', { name: 'Bench' });
  const user = await op(`/admin/v1/organizations/${org.id}/users`, { email: 'a@bench.test', name: 'A', role: 'admin', password: 'correct horse battery' });
  const key = (await op(`/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes: [...SCOPES] })).key as string;
  const channel = await op(`/admin/v1/organizations/${org.id}/channels`, { kind: 'whatsapp_cloud', name: 'WA', network: 'sandbox' });
  let phone = 4915100000000;
  return {
    name: 'Switchboard inbox',
    kind: 'inbox',
    url: `ws://127.0.0.1:${running.port}/ws`,
    key,
    emit: async (marker) => {
      const e = JSON.parse(payload(marker)) as { type: string; id: string; createdAt: string; data: unknown };
      await running.services.events.publish({ id: e.id, type: e.type, createdAt: e.createdAt, organizationId: org.id as string, data: e.data });
    },
    endToEnd: async (marker) => {
      const r = await fetch(`${url}/v1/sandbox/channels/${channel.id}/customers/${phone++}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: `hello bench-marker-${marker}` }),
      });
      if (r.status !== 201) throw new Error(`customer message refused: ${r.status}`);
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
  p50: number;
  p99: number;
  allMedian: number;
  deliveriesPerSec: number;
  bytesPerSocket: number;
  e2e?: { p50: number; p99: number; allMedian: number };
}

async function paced(clients: Clients, n: number, emit: (m: string) => Promise<void>, tag: string) {
  const sent = new Map<string, number>();
  for (let i = 0; i < PACED; i++) {
    const m = `${tag}${i}`;
    sent.set(m, now());
    await emit(m);
    await sleep(200);
  }
  const markers = [...sent.keys()];
  await clients.until(markers, markers.length * n);
  const got = await clients.collect(markers);
  const all: number[] = [];
  const lastPer: number[] = [];
  for (const m of markers) {
    const lat = got[m]!.map((t) => t - sent.get(m)!);
    all.push(...lat);
    lastPer.push(lat.reduce((x, y) => (y > x ? y : x), 0));
  }
  all.sort((x, y) => x - y);
  lastPer.sort((x, y) => x - y);
  return { p50: pct(all, 50), p99: pct(all, 99), allMedian: pct(lastPer, 50) };
}

async function measure(target: Target, clients: Clients, n: number, runId: string): Promise<Row> {
  global.gc?.();
  const before = process.memoryUsage().rss;
  await clients.open(target.kind, target.url, n, target.key);
  await sleep(1000);
  global.gc?.();
  const bytesPerSocket = (process.memoryUsage().rss - before) / n;
  const lat = await paced(clients, n, target.emit, `${runId}p`);
  const e2e = target.endToEnd ? await paced(clients, n, target.endToEnd, `${runId}e`) : undefined;
  const markers = Array.from({ length: BURST }, (_, i) => `${runId}b${i}`);
  const t0 = now();
  await Promise.all(markers.map((m) => target.emit(m)));
  await clients.until(markers, markers.length * n);
  const got = await clients.collect(markers);
  let last = 0;
  for (const times of Object.values(got)) for (const t of times) if (t > last) last = t;
  await clients.close();
  return { name: target.name, ...lat, deliveriesPerSec: (BURST * n) / ((last - t0) / 1000), bytesPerSocket, ...(e2e ? { e2e } : {}) };
}

export async function run(): Promise<void> {
  const clients = await Clients.start();
  try {
    let runId = 0;
    for (const n of COUNTS) {
      const rows: Row[] = [];
      // Raw ws runs first and last: the baseline is the better of the two, so neither warm-up nor a
      // burst of load elsewhere on the machine flatters the others' ratios.
      for (const make of [rawWs, socketIo, switchboard, rawWs]) {
        const target = await make();
        try {
          rows.push(await measure(target, clients, n, `${n}r${runId++}`));
        } finally {
          await target.close();
        }
        await sleep(500);
      }
      const raws = rows.filter((r) => r.name === 'raw ws broadcast');
      const base = raws.reduce((x, y) => (y.deliveriesPerSec > x.deliveriesPerSec ? y : x));
      console.log(`\n## inbox fan-out, ${n} sockets on one node (${PACED} paced events, ${BURST}-event burst)`);
      console.log('| server | p50 ms | p99 ms | all sockets, median ms | deliveries/s | ratio to raw ws | RSS per idle socket |');
      console.log('|---|---:|---:|---:|---:|---:|---:|');
      for (const r of rows) {
        console.log(`| ${r.name} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.allMedian.toFixed(1)} | ${Math.round(r.deliveriesPerSec)} | ${(r.deliveriesPerSec / base.deliveriesPerSec).toFixed(2)} | ${(r.bytesPerSocket / 1024).toFixed(1)} KiB |`);
      }
      const sb = rows.find((r) => r.e2e)!;
      console.log(`| Switchboard, customer message → every socket (sandbox network, webhook, actor, log) | ${sb.e2e!.p50.toFixed(1)} | ${sb.e2e!.p99.toFixed(1)} | ${sb.e2e!.allMedian.toFixed(1)} | | | |`);
    }
  } finally {
    clients.stop();
  }
}
