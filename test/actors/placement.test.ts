import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { ActorHost, desiredOwners, durableActor, NatsActorTransport, partitionOf } from '../../src/actors/index.js';
import { AppError } from '../../src/errors.js';
import { startNats, startRedis, type ServerProcess } from '../harness/servers.js';
import { startClusterNode, ownershipSettled, waitFor, type ClusterNode } from './cluster-helpers.js';
import { RecordingPublisher } from './helpers.js';
import { logActorSpec, type LogCommand, type LogReplies } from './log-actor.js';

const PARTITIONS = 16;
let redis: ServerProcess;
let nats: ServerProcess;
let prefixN = 0;
let nodes: ClusterNode[] = [];

beforeAll(async () => {
  [redis, nats] = await Promise.all([startRedis(), startNats()]);
});
afterAll(async () => {
  await Promise.all([redis?.stop(), nats?.stop()]);
});
afterEach(async () => {
  await Promise.all(nodes.map((n) => n.stop().catch(() => {})));
  nodes = [];
});

function node(nodeId: string, prefix: string) {
  return startClusterNode({
    natsUrl: nats.url,
    redisUrl: redis.url,
    nodeId,
    prefix,
    settings: { partitions: PARTITIONS, leaseMs: 1_000, attemptTimeoutMs: 1_000, askTimeoutMs: 10_000 },
    register: (system, store) => system.register('log', durableActor(logActorSpec(nodeId), { store, events: new RecordingPublisher() })),
  }).then((n) => {
    nodes.push(n);
    return n;
  });
}

describe('rendezvous placement (pure)', () => {
  it('is deterministic and moves only the partitions of a leaving node', () => {
    const three = desiredOwners(['a', 'b', 'c'], 64);
    expect(desiredOwners(['c', 'a', 'b'], 64)).toEqual(three);
    const two = desiredOwners(['a', 'b'], 64);
    three.forEach((owner, p) => {
      if (owner !== 'c') expect(two[p]).toBe(owner);
    });
    for (const n of ['a', 'b', 'c']) expect(three.filter((o) => o === n).length).toBeGreaterThan(8);
  });

  it('spreads keys over partitions', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 1600; i++) counts[partitionOf({ type: 'conversation', key: `org/${i}` }, 16)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(50);
  });
});

describe('clustered actors over NATS', () => {
  it('places every partition on exactly one node and routes commands from any node to the owner', async () => {
    const prefix = `pl${++prefixN}`;
    const [a, b, c] = await Promise.all([node('a', prefix), node('b', prefix), node('c', prefix)]);
    await waitFor(() => ownershipSettled([a!, b!, c!], PARTITIONS), 10_000, 'partitions to settle');
    const clients = [a!, b!, c!].map((n) => n.system.client<LogCommand, LogReplies>('log'));
    // The same key through different nodes, in order.
    for (let i = 0; i < 30; i++) await clients[i % 3]!.ask('k1', { kind: 'append', seq: i });
    expect((await clients[1]!.ask('k1', { kind: 'get' })).log).toEqual(Array.from({ length: 30 }, (_, i) => i));
    // The reply came from the owner of the key's partition.
    const p = partitionOf({ type: 'log', key: 'k1' }, PARTITIONS);
    const owner = [a!, b!, c!].find((n) => n.system.coordinator.ownedPartitions().includes(p))!;
    expect((await clients[0]!.ask('k1', { kind: 'append', seq: 30 })).node).toBe(owner.nodeId);
    expect(await a!.store.holder(p)).toMatchObject({ nodeId: owner.nodeId });
  });

  it('hands a command for a partition the node owns to its own host, and sends only the others over NATS', async () => {
    const prefix = `pl${++prefixN}`;
    const [a, b] = await Promise.all([node('a', prefix), node('b', prefix)]);
    const owning = (n: ClusterNode) => n.system.coordinator.ownedPartitions().length > 0;
    await waitFor(() => ownershipSettled([a!, b!], PARTITIONS) && owning(a!) && owning(b!), 10_000, 'partitions to settle on both');
    // Every actor request that crosses NATS, seen by a bystander connection.
    const watcher = await connect({ servers: nats.url });
    const crossed: string[] = [];
    watcher.subscribe(`${prefix}.actors.p.>`, { callback: (_e, m) => void crossed.push(m.subject) });
    await watcher.flush();
    const keys = Array.from({ length: 40 }, (_, i) => `local-${i}`);
    const ownedByA = keys.filter((k) => a!.system.coordinator.ownedPartitions().includes(partitionOf({ type: 'log', key: k }, PARTITIONS)));
    expect(ownedByA.length).toBeGreaterThan(0);
    expect(ownedByA.length).toBeLessThan(keys.length);
    const client = a!.system.client<LogCommand, LogReplies>('log');
    for (const k of keys) expect((await client.ask(k, { kind: 'append', seq: 1 }, { idempotencyKey: `${k}-1` })).node).toBe(ownedByA.includes(k) ? 'a' : 'b');
    await watcher.flush();
    // Only the commands for b's partitions went through the server.
    expect(crossed.length).toBe(keys.length - ownedByA.length);
    // A repeat at the owner is answered from its idempotency record, as over NATS.
    const k = ownedByA[0]!;
    expect(await client.ask(k, { kind: 'append', seq: 1 }, { idempotencyKey: `${k}-1` })).toMatchObject({ length: 1, node: 'a' });
    expect((await client.ask(k, { kind: 'get' })).log).toEqual([1]);
    await watcher.close();
  });

  it('moves partitions to a joining node and away from a leaving one without losing or reordering commands', async () => {
    const prefix = `pl${++prefixN}`;
    const a = await node('a', prefix);
    const b = await node('b', prefix);
    await waitFor(() => ownershipSettled([a, b], PARTITIONS), 10_000, 'two nodes to settle');
    const client = a.system.client<LogCommand, LogReplies>('log');
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    let running = true;
    const sent = new Map<string, number>();
    const writers = keys.map(async (k) => {
      let seq = 0;
      while (running) {
        await client.ask(k, { kind: 'append', seq }, { idempotencyKey: `${k}-${seq}` });
        sent.set(k, ++seq);
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    const c = await node('c', prefix);
    await waitFor(() => ownershipSettled([a, b, c], PARTITIONS) && c.system.coordinator.ownedPartitions().length > 0, 10_000, 'c to take its share');
    await new Promise((r) => setTimeout(r, 300));
    // b leaves gracefully: its partitions drain, then move.
    nodes = nodes.filter((n) => n !== b);
    await b.stop();
    await waitFor(() => ownershipSettled([a, c], PARTITIONS), 10_000, 'b\'s partitions to move');
    await new Promise((r) => setTimeout(r, 300));
    running = false;
    await Promise.all(writers);
    const total = [...sent.values()].reduce((x, y) => x + y, 0);
    expect(total).toBeGreaterThan(keys.length * 10);
    for (const k of keys) {
      const { log } = await client.ask(k, { kind: 'get' });
      expect(log).toEqual(Array.from({ length: sent.get(k)! }, (_, i) => i));
    }
  });
});

describe('NATS transport', () => {
  it('keeps retrying while a partition has no owner (no responders), and delivers once one listens', async () => {
    const nc = await connect({ servers: nats.url, noAsyncTraces: true });
    let owned = false;
    const host = new ActorHost({ partitions: 4, mailboxSize: 10, idleMs: 60_000, ownership: { fenceFor: (p) => (owned ? { partition: p, epoch: 1 } : undefined) } });
    host.register('echo', () => ({ onMessage: async (c) => c }));
    // One attempt would wait far longer than the whole call: only the no-responders answer lets it retry in time.
    const t = new NatsActorTransport({ nc, prefix: 'nr', host, attemptTimeoutMs: 60_000 });
    const pending = t.send({ type: 'echo', key: 'k', command: 42, idempotencyKey: 'i1' }, 5_000);
    await new Promise((r) => setTimeout(r, 300));
    owned = true;
    await t.listen(host.partitionOf({ type: 'echo', key: 'k' }));
    expect(await pending).toBe(42);
    // With nobody listening at all, the caller gets a retryable 503 at its deadline.
    const kp = host.partitionOf({ type: 'echo', key: 'k' });
    let key = '';
    for (let i = 0; ; i++) {
      key = `other-${i}`;
      if (host.partitionOf({ type: 'echo', key }) !== kp) break;
    }
    const err = await t.send({ type: 'echo', key, command: 1, idempotencyKey: 'i2' }, 300).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(503);
    expect((err as AppError).code).toBe('actor_unavailable');
    await t.close();
    await host.stop();
    await nc.close();
  });
});
