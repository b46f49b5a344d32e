import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCluster } from 'redis';
import { createRedisStore, createRedisWebhookStore, openNodeRedis, type NodeRedis, type RedisClient } from '../../src/store/index.js';
import { RedisActorStore } from '../../src/store/actors/redis.js';
import { createRedisRateLimiter } from '../../src/store/ratelimit/redis.js';
import { createRedisResourceStore } from '../../src/store/resources/redis.js';
import { createRedisRequestKeyRepo } from '../../src/store/request-keys/redis.js';
import { startRedisCluster, type RedisClusterProcess } from '../harness/servers.js';
import { runStoreContract } from './contract.js';
import { runAuthStoreContract } from '../auth/store-contract.js';
import { runWebhookStoreContract } from '../webhooks/store-contract.js';
import { runActorStoreContract } from '../actors/actor-store.contract.js';
import { runToolStoreContract } from '../tools/store-contract.js';
import { createRedisToolRepo } from '../../src/store/tools/redis.js';

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

runStoreContract('redis cluster', async () => createRedisStore(node.client, prefix(), { closeClient: false }));
runAuthStoreContract('redis cluster', async () => createRedisStore(node.client, prefix(), { closeClient: false }));
runWebhookStoreContract('redis cluster', async () => createRedisWebhookStore(node.client, prefix()));
runActorStoreContract('redis cluster', async () => new RedisActorStore(node.client, prefix()));
runToolStoreContract('redis cluster', async (box) => {
  const p = prefix();
  const other = await otherNode();
  return {
    repo: createRedisToolRepo(node.client, p, box),
    otherNode: createRedisToolRepo(other, p, box),
    rawDump: () => dumpPrefix(p),
    reopen: (b) => createRedisToolRepo(node.client, p, b),
    close: async () => {},
  };
});

describe('the remaining Redis adapters on Redis Cluster', () => {
  it('resources: create, list newest pages, rename, delete, all in the organization slot', async () => {
    const store = createRedisResourceStore(node.client, prefix());
    const at = new Date().toISOString();
    const r = { id: randomUUID(), organizationId: 'o1', name: 'CRM', type: 'crm', config: {}, createdAt: at, updatedAt: at, version: 1 };
    await store.create(r);
    await expect(store.create({ ...r, id: randomUUID(), name: 'crm' })).rejects.toMatchObject({ code: 'resource_name_taken' });
    expect((await store.list('o1', { offset: 0, limit: 10 })).resources.map((x) => x.id)).toEqual([r.id]);
    expect(await store.replace(r, { ...r, name: 'CRM 2', version: 2 })).toBe(true);
    expect((await store.get('o1', r.id))?.name).toBe('CRM 2');
    expect(await store.delete('o1', r.id)).toBe(true);
    expect((await store.list('o1', { offset: 0, limit: 10 })).total).toBe(0);
  });

  it('rate limits: the limit per window per key, shared by every node', async () => {
    const p = prefix();
    const [a, b] = [createRedisRateLimiter(node.client, p), createRedisRateLimiter(await otherNode(), p)];
    const hits = [...(await Promise.all([1, 2, 3].map(() => a.hit('k1', 4, 60_000)))), ...(await Promise.all([1, 2, 3].map(() => b.hit('k1', 4, 60_000))))];
    expect(hits.filter((h) => h.allowed)).toHaveLength(4);
    expect(hits.find((h) => !h.allowed)!.retryAfterMs).toBeGreaterThan(0);
    expect((await b.hit('k2', 4, 60_000)).allowed).toBe(true);
  });

  it('request keys: the same key with the same body is a repeat, with another body a conflict', async () => {
    const keys = createRedisRequestKeyRepo(node.client, prefix());
    expect(await keys.remember('o1', 'k1', 'f1', 60_000)).toBe('new');
    expect(await keys.remember('o1', 'k1', 'f1', 60_000)).toBe('same');
    expect(await keys.remember('o1', 'k1', 'f2', 60_000)).toBe('different');
  });
});
