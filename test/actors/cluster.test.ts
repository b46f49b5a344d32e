import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { partitionOf, type StoredActorState } from '../../src/actors/index.js';
import { RedisActorStore } from '../../src/store/actors/redis.js';
import { startNats, startRedis, type ServerProcess } from '../harness/servers.js';
import { startNodeProcess, type NodeProcess } from './cluster-helpers.js';
import type { LogState } from './log-actor.js';

/**
 * Three node processes on a real nats-server (JetStream) and redis-server:
 * 20,000 commands over 500 contacts through random nodes, one node SIGKILLed
 * midway; then a node SIGSTOPped past its lease and resumed. Checks that each
 * contact's log is strictly ordered, without duplicates, holds every
 * acknowledged command, and that the paused node's late writes never landed.
 */

const PARTITIONS = 32;
const LEASE_MS = 3_000;
const CONTACTS = 500;
const PER_CONTACT = 40; // 500 x 40 = 20,000 commands
const PREFIX = 'ct';

type Node = NodeProcess & { dead: boolean };

let redis: ServerProcess;
let nats: ServerProcess;
let nodes: Node[] = [];
let client: ReturnType<typeof createClient>;
let store: RedisActorStore;

async function startNode(id: string): Promise<Node> {
  const env = {
    NATS_URL: nats.url,
    REDIS_URL: redis.url,
    KEY_PREFIX: PREFIX,
    ACTOR_PARTITIONS: String(PARTITIONS),
    ACTOR_LEASE_MS: String(LEASE_MS),
    ACTOR_ATTEMPT_TIMEOUT_MS: '2000',
    ACTOR_ASK_TIMEOUT_MS: '20000',
    LOG_LEVEL: 'warn',
  };
  // Extended in place: the helper keeps `output` up to date on this object.
  return Object.assign(await startNodeProcess(id, env, { keepOutput: 20_000, startTimeoutMs: 30_000 }), { dead: false });
}

type AskResult = { ok: true; reply: { length: number; seq: number; node: string } } | { ok: false; error: { status: number; code: string } };

async function ask(node: Node, key: string, seq: number, extra: { delayMs?: number; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<AskResult> {
  const res = await fetch(`http://127.0.0.1:${node.port}/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key, command: { kind: 'append', seq, delayMs: extra.delayMs }, idempotencyKey: `${key}#${seq}`, timeoutMs: extra.timeoutMs }),
    signal: extra.signal ?? AbortSignal.timeout(30_000),
  });
  return (await res.json()) as AskResult;
}

async function stats(node: Node): Promise<{ nodeId: string; owned: number[]; fencedWrites: number }> {
  const res = await fetch(`http://127.0.0.1:${node.port}/stats`, { signal: AbortSignal.timeout(5_000) });
  return (await res.json()) as { nodeId: string; owned: number[]; fencedWrites: number };
}

const live = () => nodes.filter((n) => !n.dead);
const pick = (from: Node[]) => from[Math.floor(Math.random() * from.length)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends one command until a node acknowledges it (same idempotency key each time) or 60 s pass. */
async function deliver(key: string, seq: number, only?: Node[]): Promise<{ acked: boolean; ms: number; node?: string }> {
  const t0 = Date.now();
  while (Date.now() - t0 < 60_000) {
    const node = pick(only ?? live());
    try {
      const r = await ask(node, key, seq);
      if (r.ok) return { acked: true, ms: Date.now() - t0, node: r.reply.node };
      if (r.error.status !== 503) throw new Error(`command refused: ${JSON.stringify(r.error)}`);
    } catch (e) {
      if (e instanceof Error && e.message.startsWith('command refused')) throw e;
      // The node is gone (connection refused / reset): try another.
    }
    await sleep(50);
  }
  return { acked: false, ms: Date.now() - t0 };
}

async function logOf(key: string): Promise<number[]> {
  const stored = (await store.load({ type: 'log', key, partition: partitionOf({ type: 'log', key }, PARTITIONS) })) as StoredActorState<LogState> | undefined;
  return stored?.state.log ?? [];
}

function expectStrictlyIncreasing(log: number[], key: string) {
  for (let i = 1; i < log.length; i++) {
    if (!(log[i]! > log[i - 1]!)) throw new Error(`log of ${key} is out of order or has a duplicate at ${i}: ${log.join(',')}`);
  }
}

beforeAll(async () => {
  [redis, nats] = await Promise.all([startRedis(), startNats()]);
  client = createClient({ url: redis.url });
  await client.connect();
  store = new RedisActorStore(client, PREFIX);
  nodes = await Promise.all(['n1', 'n2', 'n3'].map(startNode));
}, 120_000);

afterAll(async () => {
  for (const n of nodes) {
    if (n.proc.exitCode === null && n.proc.signalCode === null) {
      n.proc.kill('SIGCONT');
      n.proc.kill('SIGKILL');
    }
  }
  await client?.quit();
  await Promise.all([redis?.stop(), nats?.stop()]);
});

describe('cluster of three node processes', () => {
  const contacts = Array.from({ length: CONTACTS }, (_, i) => `contact-${i}`);
  const acked = new Map<string, number[]>(contacts.map((c) => [c, []]));

  it('keeps every contact\'s log ordered, duplicate-free and complete while a node is SIGKILLed', async () => {
    // Every node owns a share before we start.
    for (;;) {
      const owned = await Promise.all(nodes.map(stats));
      if (owned.every((s) => s.owned.length > 0) && owned.reduce((a, s) => a + s.owned.length, 0) === PARTITIONS) break;
      await sleep(100);
    }
    let total = 0;
    let killedAt = 0;
    let unacked = 0;
    let maxAfterKill = 0;
    const victim = nodes[1]!;
    await Promise.all(
      contacts.map(async (key) => {
        for (let seq = 0; seq < PER_CONTACT; seq++) {
          const started = Date.now();
          const r = await deliver(key, seq);
          if (r.acked) acked.get(key)!.push(seq);
          else unacked++;
          if (killedAt > 0 && started >= killedAt - 1_000) maxAfterKill = Math.max(maxAfterKill, r.ms);
          if (++total === (CONTACTS * PER_CONTACT) / 2) {
            killedAt = Date.now();
            victim.proc.kill('SIGKILL');
            victim.dead = true;
          }
        }
      }),
    );
    console.log(`cluster test: ${total} commands, ${unacked} unacknowledged, slowest command around the kill ${maxAfterKill} ms (lease ${LEASE_MS} ms)`);
    expect(killedAt).toBeGreaterThan(0);
    for (const key of contacts) {
      const log = await logOf(key);
      expectStrictlyIncreasing(log, key);
      for (const seq of acked.get(key)!) expect(log, `${key} lost acknowledged ${seq}`).toContain(seq);
    }
    // Nothing was given up on: failover completed well within the per-command retry budget.
    expect(unacked).toBe(0);
    // The survivors own every partition now.
    const owned = await Promise.all(live().map(stats));
    expect(owned.reduce((a, s) => a + s.owned.length, 0)).toBe(PARTITIONS);
  }, 240_000);

  it('refuses the late writes of a node paused (SIGSTOP) past its lease once it resumes', async () => {
    const [x, y] = live() as [Node, Node];
    const sx = await stats(x);
    expect(sx.owned.length).toBeGreaterThan(0);
    let probe = '';
    for (let i = 0; ; i++) {
      probe = `probe-${i}`;
      if (sx.owned.includes(partitionOf({ type: 'log', key: probe }, PARTITIONS))) break;
    }
    const partition = partitionOf({ type: 'log', key: probe }, PARTITIONS);
    expect((await deliver(probe, 999, [x])).node).toBe(x.id);

    // A slow command is running on x (between its read and its write) when x freezes.
    const abandoned = ask(x, probe, 1_000, { delayMs: 1_500, timeoutMs: 2_500, signal: AbortSignal.timeout(60_000) }).catch((e: unknown) => e);
    await sleep(400);
    x.proc.kill('SIGSTOP');
    const frozenAt = Date.now();
    try {
      // y takes the partition over once x's lease expires.
      for (;;) {
        if ((await stats(y)).owned.includes(partition)) break;
        if (Date.now() - frozenAt > 30_000) throw new Error('no takeover within 30 s');
        await sleep(100);
      }
      const takeoverMs = Date.now() - frozenAt;
      console.log(`cluster test: partition ${partition} taken over ${takeoverMs} ms after SIGSTOP (lease ${LEASE_MS} ms)`);
      for (const seq of [1_001, 1_002, 1_003]) expect((await deliver(probe, seq, [y])).node).toBe(y.id);
    } finally {
      x.proc.kill('SIGCONT');
    }
    const before = new Map(await Promise.all(contacts.map(async (k) => [k, await logOf(k)] as const)));

    // Resumed, x finishes its command: the write must be refused by the fence.
    const resumedAt = Date.now();
    while ((await stats(x)).fencedWrites === 0 && !(await logOf(probe)).includes(1_000) && Date.now() - resumedAt < 20_000) await sleep(100);
    await abandoned;
    await sleep(LEASE_MS);
    expect(await logOf(probe)).toEqual([999, 1_001, 1_002, 1_003]);
    expect((await stats(x)).fencedWrites, 'x attempted its late write and the fence refused it').toBeGreaterThan(0);
    for (const k of contacts) expect(await logOf(k)).toEqual(before.get(k));

    // x rejoins and the cluster keeps serving in order through every node.
    await Promise.all(contacts.map(async (key) => expect((await deliver(key, PER_CONTACT)).acked).toBe(true)));
    expect((await deliver(probe, 1_004)).acked).toBe(true);
    for (const key of contacts) expect(await logOf(key)).toEqual([...Array.from({ length: PER_CONTACT }, (_, i) => i), PER_CONTACT]);
    expect(await logOf(probe)).toEqual([999, 1_001, 1_002, 1_003, 1_004]);
  }, 180_000);
});
