import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCluster } from 'redis';
import { createPostgresStore, createPostgresWebhookStore, openNodeRedis, type NodeRedis, type RedisClient } from '../../src/store/index.js';
import { RedisActorStore } from '../../src/store/actors/redis.js';
import { createRedisRateLimiter } from '../../src/store/ratelimit/redis.js';
import { createRedisRequestKeyRepo } from '../../src/store/request-keys/redis.js';
import { createRedisSendPacer } from '../../src/store/send-pacing/redis.js';
import { startRedisCluster, type RedisClusterProcess } from '../harness/servers.js';
import { usePostgres } from '../harness/use-postgres.js';
import { runStoreContract } from './contract.js';
import { runAuthStoreContract } from '../auth/store-contract.js';
import { runWebhookStoreContract } from '../webhooks/store-contract.js';
import { runActorStoreContract } from '../actors/actor-store.contract.js';
import { runToolStoreContract } from '../tools/store-contract.js';
import { createPostgresToolRepo } from '../../src/store/tools/postgres.js';

/*
 * Every Redis store contract suite against a real 3-master Redis Cluster,
 * through the same cluster client a node opens with REDIS_CLUSTER_NODES. A
 * script or command whose keys span slots fails here with CROSSSLOT (or
 * MOVED for keys a script did not declare), so these suites are what keeps
 * the adapters cluster-safe.
 */

let cluster: RedisClusterProcess;
let node: NodeRedis;
const extra: NodeRedis[] = [];
const prefix = () => `t${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  node = await openNodeRedis({ kind: 'cluster', nodes: cluster.nodes }, 'contract');
}, 90_000);
afterAll(async () => {
  for (const n of extra) await n.close();
  await node?.close();
  await cluster?.stop();
});

/** Every master's share of a prefix's keys, as text (to check secrets are not in it). */
async function dumpPrefix(p: string): Promise<string> {
  const raw = createCluster({ rootNodes: cluster.nodes.map((url) => ({ url })) });
  await raw.connect();
  try {
    const parts: string[] = [];
    for (const m of raw.masters) {
      const c = await raw.nodeClient(m);
      for (const k of await c.keys(`${p}:*`)) {
        const type = await c.type(k);
        if (type === 'string') parts.push(k, (await c.get(k)) ?? '');
        else if (type === 'hash') parts.push(k, JSON.stringify(await c.hGetAll(k)));
        else parts.push(k);
      }
    }
    return parts.join('\n');
  } finally {
    await raw.close();
  }
}

/** Another node's client on the same cluster. */
async function otherNode(): Promise<RedisClient> {
  const n = await openNodeRedis({ kind: 'cluster', nodes: cluster.nodes }, 'contract-other');
  extra.push(n);
  return n.client;
}

describe('the test harness Redis Cluster', () => {
  it('is a real cluster: keys spread over three masters, cross-slot commands are refused', async () => {
    const raw = createCluster({ rootNodes: cluster.nodes.map((url) => ({ url })) });
    await raw.connect();
    try {
      expect(raw.masters).toHaveLength(3);
      await expect(raw.sendCommand(undefined, true, ['MGET', 'a', 'b'])).rejects.toThrow(/CROSSSLOT/);
      // One organization's keys share a slot, so a same-tag MGET is fine.
      await raw.set('x:{o:1}:a', '1');
      expect(await raw.mGet(['x:{o:1}:a', 'x:{o:1}:b'])).toEqual(['1', null]);
    } finally {
      await raw.close();
    }
  });
});

// The core store keeps sign-in sessions, failure counters and the relay's leases in Redis, beside its records in PostgreSQL.
const postgres = usePostgres();
runStoreContract('postgres + redis cluster', async () => createPostgresStore(await postgres.open(), node.client, { prefix: prefix() }));
runAuthStoreContract('postgres + redis cluster', async () => createPostgresStore(await postgres.open(), node.client, { prefix: prefix() }));
// The webhook store keeps its lane schedule and leases in Redis, beside its records in PostgreSQL.
runWebhookStoreContract('postgres + redis cluster', async () => createPostgresWebhookStore(await postgres.open(), node.client, { prefix: prefix() }));
runActorStoreContract('redis cluster', async () => new RedisActorStore(node.client, prefix()));

// The tool store keeps OAuth states and refresh locks in Redis, beside its records in PostgreSQL.
runToolStoreContract('postgres + redis cluster', async (box) => {
  const p = prefix();
  const db = await postgres.open();
  const other = await otherNode();
  return {
    repo: createPostgresToolRepo(db, node.client, p, box),
    otherNode: createPostgresToolRepo(db, other, p, box),
    rawDump: async () => {
      const rows: string[] = [];
      for (const table of ['tools', 'tool_credentials', 'tool_payment_events', 'records']) {
        for (const r of await db.rows<{ row: string }>(`SELECT t::text AS row FROM ${table} t`)) rows.push(r.row);
      }
      return `${rows.join('\n')}\n${await dumpPrefix(p)}`;
    },
    reopen: (b) => createPostgresToolRepo(db, node.client, p, b),
    close: async () => {},
  };
});

describe('the remaining Redis adapters on Redis Cluster', () => {
  it('rate limits: the limit per window per key, shared by every node', async () => {
    const p = prefix();
    const [a, b] = [createRedisRateLimiter(node.client, p), createRedisRateLimiter(await otherNode(), p)];
    const hits = [...(await Promise.all([1, 2, 3].map(() => a.hit('k1', 4, 60_000)))), ...(await Promise.all([1, 2, 3].map(() => b.hit('k1', 4, 60_000))))];
    expect(hits.filter((h) => h.allowed)).toHaveLength(4);
    expect(hits.find((h) => !h.allowed)!.retryAfterMs).toBeGreaterThan(0);
    expect((await b.hit('k2', 4, 60_000)).allowed).toBe(true);
  });

  it('send pacing: turns asked together on two nodes, one budget per number, spaced by the tier', async () => {
    const p = prefix();
    const [a, b] = [createRedisSendPacer(node.client, p), createRedisSendPacer(await otherNode(), p)];
    // Two numbers (two slots, most likely on two masters), four turns each asked at once from each node.
    for (const ch of [`ch_${randomUUID()}`, `ch_${randomUUID()}`]) {
      const grants = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).reserve(ch, 0.5, 60_000)));
      const waits = grants.map((g) => (g.ok ? g.waitMs : -1)).sort((x, y) => x - y);
      expect(waits[0]).toBeGreaterThanOrEqual(0);
      for (let i = 1; i < waits.length; i++) expect(waits[i]! - waits[i - 1]!).toBeGreaterThan(1_000);
    }
  });

  it('request keys: the same key with the same body is a repeat, with another body a conflict', async () => {
    const keys = createRedisRequestKeyRepo(node.client, prefix());
    expect(await keys.remember('o1', 'k1', 'f1', 60_000)).toBe('new');
    expect(await keys.remember('o1', 'k1', 'f1', 60_000)).toBe('same');
    expect(await keys.remember('o1', 'k1', 'f2', 60_000)).toBe('different');
  });
});
