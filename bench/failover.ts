/**
 * Failover: how long a SIGKILLed node's contacts wait for a new owner, on
 * three nodes (one in this process, two in their own) over real NATS and
 * Redis, with the default lease (5 s) and the default liveness probe
 * (ACTOR_PROBE_MS = 500), against the same cluster with the probe off (the
 * baseline: the dead node's leases must expire). Under load (32 callers
 * sending the bench actor's commands through the in-process node):
 *   - owned: SIGKILL → every partition of the dead node held by a survivor;
 *   - served: SIGKILL → a command sent at the kill to each of its partitions
 *     answered (the slowest; includes commands that were waiting on the dead
 *     node when it died);
 *   - false failovers: partitions whose epoch moved during 15 s of load with
 *     nobody killed (any move means a live node was taken for dead).
 *
 *   npm run bench -- failover        (FAILOVER_TRIALS, default 8 per mode)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { createClusteredActorSystem, partitionOf, type ActorSystem, type ActorSystemSettings } from '../src/actors/index.js';
import { silentLogger } from '../src/log.js';
import { RedisActorStore } from '../src/store/actors/redis.js';
import { connectRedis, type RedisClient } from '../src/store/redis/client.js';
import { startNats, startRedis, type ServerProcess } from '../test/harness/servers.js';
import { benchActor } from './actors.js';

const PARTITIONS = 64;
const LEASE_MS = 5_000;
const PROBE_MS = 500;
const CALLERS = 32;
const trials = () => Number(process.env.FAILOVER_TRIALS ?? 8);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function settings(nodeId: string, probeMs: number): ActorSystemSettings {
  return { nodeId, partitions: PARTITIONS, leaseMs: LEASE_MS, probeMs, mailboxSize: 1_000, idleMs: 60_000, askTimeoutMs: 30_000, attemptTimeoutMs: 5_000 };
}

function spawnNode(nodeId: string, natsUrl: string, redisUrl: string, prefix: string, probeMs: number): Promise<ChildProcess> {
  const script = fileURLToPath(new URL('./_actor-node.ts', import.meta.url));
  const proc = spawn(process.execPath, ['--import', 'tsx', script], {
    env: {
      ...process.env,
      NATS_URL: natsUrl,
      REDIS_URL: redisUrl,
      NODE_ID: nodeId,
      KEY_PREFIX: prefix,
      ACTOR_PARTITIONS: String(PARTITIONS),
      ACTOR_LEASE_MS: String(LEASE_MS),
      ACTOR_PROBE_MS: String(probeMs),
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => d.toString().includes('READY') && resolve(proc));
    proc.once('exit', (code) => reject(new Error(`${nodeId} exited with ${code}`)));
  });
}

async function holders(store: RedisActorStore): Promise<(string | undefined)[]> {
  return (await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => store.holder(p)))).map((h) => h?.nodeId);
}

async function epochs(redis: RedisClient, prefix: string): Promise<number[]> {
  return Promise.all(Array.from({ length: PARTITIONS }, async (_, p) => Number((await redis.get(`${prefix}:{p${p}}:epoch`)) ?? 0)));
}

async function settled(store: RedisActorStore, nodes: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const h = await holders(store);
    if (h.every((x) => x !== undefined) && new Set(h).size === nodes) return;
    await sleep(50);
  }
  throw new Error('partitions did not settle');
}

/** A contact key in each partition (the bench actor's addresses). */
function contactPerPartition(): string[] {
  const out: (string | undefined)[] = Array.from({ length: PARTITIONS });
  for (let i = 0; out.some((c) => c === undefined); i++) {
    const key = `org_failover/probe-${i}`;
    const p = partitionOf({ type: 'bench', key }, PARTITIONS);
    out[p] ??= key;
  }
  return out as string[];
}

interface Trial {
  ownedMs: number;
  servedMs: number;
}

interface ModeResult {
  name: string;
  trials: Trial[];
  falseFailovers: number;
  loadRps: number;
  loadErrors: number;
  evictions: number;
  wrongEvictions: number;
}

async function runMode(name: string, probeMs: number, prefix: string, natsUrl: string, redisUrl: string, redis: RedisClient): Promise<ModeResult> {
  process.stderr.write(`failover bench: ${name}\n`);
  const nc = await connect({ servers: natsUrl, noAsyncTraces: true });
  const store = new RedisActorStore(redis, prefix);
  const system: ActorSystem = createClusteredActorSystem(settings('f1', probeMs), { store, nats: nc, prefix, log: silentLogger });
  system.register('bench', benchActor(store));
  /** Evictions this node made, and which of them hit a node that was not the one just killed. */
  let killing: string | null = null;
  let evictions = 0;
  let wrongEvictions = 0;
  system.coordinator.onEvict = (m) => {
    evictions++;
    if (m !== killing) wrongEvictions++;
  };
  await system.start();
  const children = new Map<string, ChildProcess>();
  for (const id of ['f2', 'f3']) children.set(id, await spawnNode(id, natsUrl, redisUrl, prefix, probeMs));
  await settled(store, 3);

  let loading = true;
  let done = 0;
  let errors = 0;
  const load = Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (loading) {
        try {
          await system.ask({ type: 'bench', key: `org_failover/contact-${Math.floor(Math.random() * 10_000)}` }, { kind: 'inc' });
          done++;
        } catch {
          errors++;
        }
      }
    }),
  );
  try {
    // No kill: does the probe ever take a loaded, live node for dead?
    await sleep(1_000);
    const e0 = await epochs(redis, prefix);
    const d0 = done;
    const t0 = performance.now();
    await sleep(15_000);
    const loadRps = ((done - d0) * 1000) / (performance.now() - t0);
    const e1 = await epochs(redis, prefix);
    const falseFailovers = e1.filter((e, p) => e !== e0[p]).length;

    const probes = contactPerPartition();
    const out: Trial[] = [];
    for (let t = 0; t < trials(); t++) {
      const victimId = t % 2 === 0 ? 'f3' : 'f2';
      killing = victimId;
      const before = await holders(store);
      const theirs = before.map((h, p) => (h === victimId ? p : -1)).filter((p) => p >= 0);
      const victim = children.get(victimId)!;
      const exited = new Promise((r) => victim.once('exit', r));
      const k0 = performance.now();
      victim.kill('SIGKILL');
      const served = Promise.all(theirs.map(async (p) => {
        await system.ask({ type: 'bench', key: probes[p]! }, { kind: 'inc' });
        return performance.now() - k0;
      }));
      let ownedMs = NaN;
      while (performance.now() - k0 < 30_000) {
        const h = await holders(store);
        if (theirs.every((p) => h[p] !== undefined && h[p] !== victimId)) {
          ownedMs = performance.now() - k0;
          break;
        }
        await sleep(10);
      }
      const servedMs = Math.max(...(await served));
      out.push({ ownedMs, servedMs });
      process.stderr.write(`  trial ${t + 1}: ${victimId} owned by survivors after ${ownedMs.toFixed(0)} ms, served after ${servedMs.toFixed(0)} ms\n`);
      await exited;
      children.set(victimId, await spawnNode(victimId, natsUrl, redisUrl, prefix, probeMs));
      await settled(store, 3);
      killing = null;
    }
    return { name, trials: out, falseFailovers, loadRps, loadErrors: errors, evictions, wrongEvictions };
  } finally {
    loading = false;
    await load;
    await system.stop();
    await nc.drain();
    await Promise.all(
      [...children.values()].map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
            c.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
  }
}

function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const q = (f: number) => s[Math.min(s.length - 1, Math.floor(f * s.length))]!;
  return `min ${s[0]!.toFixed(0)}  p50 ${q(0.5).toFixed(0)}  max ${s[s.length - 1]!.toFixed(0)} ms`;
}

export async function run(): Promise<void> {
  const servers: ServerProcess[] = await Promise.all([startRedis(), startNats()]);
  const [redisServer, natsServer] = servers as [ServerProcess, ServerProcess];
  const redis = await connectRedis(redisServer.url);
  try {
    const base = await runMode('lease only (ACTOR_PROBE_MS=0)', 0, 'fa', natsServer.url, redisServer.url, redis);
    const probed = await runMode(`default (ACTOR_PROBE_MS=${PROBE_MS})`, PROBE_MS, 'fb', natsServer.url, redisServer.url, redis);
    console.log(`\n## Failover after SIGKILL (3 nodes, lease ${LEASE_MS} ms, ${trials()} kills per mode, ${CALLERS} callers of load)\n`);
    for (const m of [base, probed]) {
      console.log(`${m.name}`);
      console.log(`  owned by survivors:  ${stats(m.trials.map((t) => t.ownedMs))}   (each: ${m.trials.map((t) => t.ownedMs.toFixed(0)).join(', ')})`);
      console.log(`  commands served:     ${stats(m.trials.map((t) => t.servedMs))}   (each: ${m.trials.map((t) => t.servedMs.toFixed(0)).join(', ')})`);
      console.log(`  false failovers in 15 s of load without a kill: ${m.falseFailovers} partitions moved (load ${m.loadRps.toFixed(0)} cmd/s, ${m.loadErrors} errors over the whole run)`);
      console.log(`  evictions by the in-process node over the whole run: ${m.evictions}, of a node other than the one just killed: ${m.wrongEvictions}`);
    }
    const med = (m: ModeResult) => [...m.trials.map((t) => t.servedMs)].sort((a, b) => a - b)[Math.floor(m.trials.length / 2)]!;
    console.log(`\nratio (median served, default / lease only): ${(med(probed) / med(base)).toFixed(2)}`);
  } finally {
    await redis.quit();
    await Promise.all(servers.map((s) => s.stop()));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await run();
  process.exit(0);
}
