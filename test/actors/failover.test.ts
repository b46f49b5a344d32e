import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNats, startRedis, type ServerProcess } from '../harness/servers.js';
import { startNodeProcess, waitFor, type NodeProcess } from './cluster-helpers.js';

/**
 * Failure detection without waiting for the lease: three node processes with
 * a 60 s lease and liveness probes every 200 ms. A SIGKILLed node's
 * partitions move although its lease is far from expired (only the probes
 * can explain it); a SIGSTOPped node keeps its NATS connection, so it is
 * never taken for dead: it keeps every partition. No timing is asserted
 * beyond "before the lease could have expired".
 */

const PARTITIONS = 16;
const PREFIX = 'fo';

type Node = NodeProcess;

let redis: ServerProcess;
let nats: ServerProcess;
const nodes: Node[] = [];

function startNode(id: string): Promise<Node> {
  const env = {
    NATS_URL: nats.url,
    REDIS_URL: redis.url,
    KEY_PREFIX: PREFIX,
    ACTOR_PARTITIONS: String(PARTITIONS),
    ACTOR_LEASE_MS: '60000',
    ACTOR_PROBE_MS: '200',
    LOG_LEVEL: 'info',
  };
  return startNodeProcess(id, env, { keepOutput: 50_000, startTimeoutMs: 60_000 });
}

async function owned(n: Node): Promise<number[]> {
  const r = await fetch(`http://127.0.0.1:${n.port}/stats`, { signal: AbortSignal.timeout(5_000) });
  return ((await r.json()) as { owned: number[] }).owned;
}

async function settled(live: Node[]): Promise<boolean> {
  const all = (await Promise.all(live.map(owned))).flat();
  return all.length === PARTITIONS && new Set(all).size === PARTITIONS;
}

describe('a dead node is found by its NATS connection, a paused one is not', () => {
  beforeAll(async () => {
    [redis, nats] = await Promise.all([startRedis(), startNats()]);
    for (const id of ['f1', 'f2', 'f3']) nodes.push(await startNode(id));
    await waitFor(() => settled(nodes), 30_000, 'partitions spread over three nodes');
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) {
      n.proc.kill('SIGCONT');
      n.proc.kill('SIGKILL');
    }
    await Promise.all([redis?.stop(), nats?.stop()]);
  });

  it('does not take a paused node (connection still open) for dead: it keeps its partitions', async () => {
    const [a, b, c] = nodes as [Node, Node, Node];
    const before = await owned(c);
    expect(before.length).toBeGreaterThan(0);
    c.proc.kill('SIGSTOP');
    // About 15 probe rounds while it cannot answer.
    await new Promise((r) => setTimeout(r, 3_000));
    const others = [...(await owned(a)), ...(await owned(b))];
    c.proc.kill('SIGCONT');
    expect(others.filter((p) => before.includes(p))).toEqual([]);
    await waitFor(async () => (await owned(c)).length === before.length, 10_000, 'the resumed node answering');
    expect(await owned(c)).toEqual(before);
    expect(a.output + b.output).not.toContain('member evicted');
  });

  it('takes nobody for dead across a nats-server restart (every node reconnects, not all at once)', async () => {
    const before = await Promise.all(nodes.map(owned));
    await nats.restart();
    // Reconnects (nats.js waits about 2 s between attempts), then many probe rounds.
    await new Promise((r) => setTimeout(r, 8_000));
    await waitFor(async () => (await Promise.all(nodes.map(owned))).every((o, i) => o.join() === before[i]!.join()), 20_000, 'every node keeping its partitions');
    expect(nodes.map((n) => n.output).join()).not.toContain('member evicted');
  }, 60_000);

  it('moves a SIGKILLed node\'s partitions long before its 60 s lease could expire', async () => {
    const [a, b, c] = nodes as [Node, Node, Node];
    expect((await owned(c)).length).toBeGreaterThan(0);
    c.proc.kill('SIGKILL');
    await waitFor(() => settled([a, b]), 30_000, 'the survivors owning every partition');
    expect(a.output + b.output).toContain('member evicted');
  }, 60_000);
});
