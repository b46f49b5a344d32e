/**
 * Actors: commands/s and latency of the conversation-actor runtime, where
 * each command does one state read and one fenced (conditional) write, over
 * 10,000 contacts picked at random by 64 concurrent callers:
 *   - embedded: in-process delivery, state in the embedded store (fsynced);
 *   - in-process delivery, state in Redis (one node, no NATS);
 *   - clustered, 1 node: NATS request to the partition subject, Redis state;
 *   - clustered, 3 nodes: the same, two of the nodes in their own processes.
 * The limit, measured in the same run: raw @nats-io/transport-node
 * request/reply whose handler does one Redis SET. Ratio = actor / limit.
 *
 *   npx tsx bench/actors.ts        (or: npm run bench -- actors)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  createClusteredActorSystem,
  createEmbeddedActorSystem,
  type Actor,
  type ActorFactory,
  type ActorSystem,
  type ActorSystemSettings,
} from '../src/actors/index.js';
import { silentLogger } from '../src/log.js';
import type { ActorStateStore } from '../src/store/actors/port.js';
import { SqliteActorStore } from '../src/store/actors/sqlite.js';
import { RedisActorStore } from '../src/store/actors/redis.js';
import { openNodeDbIn } from '../src/store/backing.js';
import { connectRedis, type RedisClient } from '../src/store/redis/client.js';
import { startNats, startRedis, type ServerProcess } from '../test/harness/servers.js';

const CONTACTS = 10_000;
const CONCURRENCY = 64;
const PARTITIONS = 64;
const seconds = () => Number(process.env.BENCH_SECONDS ?? 5);

/** The bench actor: every command reads its state and writes it back, fenced. */
export function benchActor(store: ActorStateStore): ActorFactory {
  return (ctx): Actor => {
    const ref = { type: ctx.address.type, key: ctx.address.key, partition: ctx.fence.partition };
    return {
      async onMessage() {
        const cur = (await store.load(ref)) as { n: number } | undefined;
        const next = { n: (cur?.n ?? 0) + 1 };
        await store.save(ref, next, ctx.fence);
        return next.n;
      },
    };
  };
}

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** `CONCURRENCY` callers, each sending one command at a time to a random contact, for the bench duration. */
async function drive(name: string, send: (contact: string) => Promise<unknown>): Promise<Row> {
  const warm = performance.now() + 1_000;
  const lat: number[] = [];
  let errors = 0;
  let end = Infinity;
  let measuring = false;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (;;) {
        const now = performance.now();
        if (!measuring && now >= warm) {
          measuring = true;
          end = now + seconds() * 1_000;
        }
        if (now >= end) return;
        const contact = `org_bench/contact-${Math.floor(Math.random() * CONTACTS)}`;
        const t0 = performance.now();
        try {
          await send(contact);
          if (measuring) lat.push(performance.now() - t0);
        } catch {
          if (measuring) errors++;
        }
      }
    }),
  );
  lat.sort((a, b) => a - b);
  const at = (q: number) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] ?? NaN;
  return { name, rps: lat.length / seconds(), p50: at(0.5), p99: at(0.99), errors };
}

const settings = (nodeId: string): ActorSystemSettings => ({
  nodeId,
  partitions: PARTITIONS,
  leaseMs: 5_000,
  mailboxSize: 1_000,
  idleMs: 60_000,
  askTimeoutMs: 20_000,
  attemptTimeoutMs: 5_000,
});

async function measureSystem(name: string, system: ActorSystem): Promise<Row> {
  process.stderr.write(`actors bench: ${name}\n`);
  return drive(name, (contact) => system.ask({ type: 'bench', key: contact }, { kind: 'inc' }));
}

/** The limit: NATS request/reply straight to a handler that does one Redis SET. */
async function rawLimit(natsUrl: string, redis: RedisClient): Promise<Row> {
  const nc = await connect({ servers: natsUrl, noAsyncTraces: true });
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const sub = nc.subscribe('rawbench.req', {
    callback: (_err, msg) => {
      const body = JSON.parse(dec.decode(msg.data)) as { key: string };
      void redis.set(`rawbench:${body.key}`, JSON.stringify({ n: 1 })).then(() => msg.respond(enc.encode(JSON.stringify({ ok: true, reply: 1 }))));
    },
  });
  await nc.flush();
  const row = await drive('raw NATS req/reply + 1 Redis SET (limit)', (contact) =>
    nc.request('rawbench.req', enc.encode(JSON.stringify({ type: 'bench', key: contact, command: { kind: 'inc' } })), { timeout: 5_000 }),
  );
  sub.unsubscribe();
  await nc.drain();
  return row;
}

async function clusteredNode(nodeId: string, natsUrl: string, redis: RedisClient, prefix: string): Promise<{ system: ActorSystem; nc: NatsConnection }> {
  const nc = await connect({ servers: natsUrl, noAsyncTraces: true });
  const store = new RedisActorStore(redis, prefix);
  const system = createClusteredActorSystem(settings(nodeId), { store, nats: nc, prefix, log: silentLogger });
  system.register('bench', benchActor(store));
  await system.start();
  return { system, nc };
}

function spawnNode(nodeId: string, natsUrl: string, redisUrl: string, prefix: string): Promise<ChildProcess> {
  const script = fileURLToPath(new URL('./_actor-node.ts', import.meta.url));
  const proc = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, NATS_URL: natsUrl, REDIS_URL: redisUrl, NODE_ID: nodeId, KEY_PREFIX: prefix, ACTOR_PARTITIONS: String(PARTITIONS), ACTOR_LEASE_MS: '5000', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => d.toString().includes('READY') && resolve(proc));
    proc.once('exit', (code) => reject(new Error(`${nodeId} exited with ${code}`)));
  });
}

async function settled(store: RedisActorStore, nodes: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const holders = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => store.holder(p)));
    if (holders.every((h) => h !== null) && new Set(holders.map((h) => h!.nodeId)).size === nodes) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('partitions did not settle');
}

function print(limit: Row, rows: Row[]): void {
  const fmt = (r: Row) =>
    `${r.name.padEnd(52)} ${r.rps.toFixed(0).padStart(7)} cmd/s   p50 ${r.p50.toFixed(1).padStart(6)} ms   p99 ${r.p99.toFixed(1).padStart(6)} ms   ratio ${(r.rps / limit.rps).toFixed(2)}${r.errors ? `   (errors ${r.errors})` : ''}`;
  console.log(`\n## Actors (${CONCURRENCY} callers, ${CONTACTS} contacts, ${seconds()} s each, 1 state read + 1 fenced write per command)\n`);
  console.log(fmt(limit) + '   <- limit');
  for (const r of rows) console.log(fmt(r));
}

export async function run(): Promise<void> {
  const servers: ServerProcess[] = await Promise.all([startRedis(), startNats()]);
  const [redisServer, natsServer] = servers as [ServerProcess, ServerProcess];
  const redis = await connectRedis(redisServer.url);
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-actors-'));
  const children: ChildProcess[] = [];
  try {
    const rows: Row[] = [];
    const limit = await rawLimit(natsServer.url, redis);

    {
      const db = await openNodeDbIn(dir);
      const store = new SqliteActorStore(db);
      const system = createEmbeddedActorSystem(settings('e1'), { store, log: silentLogger });
      system.register('bench', benchActor(store));
      await system.start();
      rows.push(await measureSystem('embedded (in-process, on-disk store, fsync)', system));
      await system.stop();
      await db.close();
    }
    {
      const store = new RedisActorStore(redis, 'bi');
      const system = createEmbeddedActorSystem(settings('r1'), { store, log: silentLogger });
      system.register('bench', benchActor(store));
      await system.start();
      rows.push(await measureSystem('in-process delivery, Redis state', system));
      await system.stop();
    }
    {
      const a = await clusteredNode('c1', natsServer.url, redis, 'b1');
      await settled(new RedisActorStore(redis, 'b1'), 1);
      rows.push(await measureSystem('clustered, 1 node (NATS + Redis)', a.system));
      await a.system.stop();
      await a.nc.drain();
    }
    {
      const a = await clusteredNode('c1', natsServer.url, redis, 'b3');
      children.push(...(await Promise.all(['c2', 'c3'].map((id) => spawnNode(id, natsServer.url, redisServer.url, 'b3')))));
      await settled(new RedisActorStore(redis, 'b3'), 3);
      rows.push(await measureSystem('clustered, 3 nodes (2 in other processes)', a.system));
      await a.system.stop();
      await a.nc.drain();
    }
    print(limit, rows);
  } finally {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) return resolve();
            const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
            c.once('exit', () => {
              clearTimeout(t);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
    await redis.quit();
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await run();
  process.exit(0);
}
