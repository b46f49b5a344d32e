import { createHash } from 'node:crypto';
import { createClient, createCluster } from 'redis';
import type { RedisTarget } from '../../config.js';

type SingleClient = ReturnType<typeof createClient>;
type ClusterClient = ReturnType<typeof createCluster>;

/**
 * The Redis commands the adapters use: what a single-server client and a
 * Redis Cluster client have in common, so every adapter runs on both. Only
 * single-key commands, same-slot multi-key commands (MGET, DEL) and Lua
 * scripts whose keys are all declared and share one hash tag: a cluster
 * client routes each by its first key, and Redis Cluster refuses anything
 * that spans slots (CROSSSLOT). There is deliberately no MULTI here: a
 * transaction is a script.
 */
export type RedisClient = Pick<
  SingleClient,
  | 'get'
  | 'set'
  | 'getDel'
  | 'incr'
  | 'mGet'
  | 'del'
  | 'exists'
  | 'pTTL'
  | 'sAdd'
  | 'sRem'
  | 'sMembers'
  | 'hGet'
  | 'hmGet'
  | 'hSet'
  | 'hDel'
  | 'hVals'
  | 'hGetAll'
  | 'lRange'
  | 'lLen'
  | 'zAdd'
  | 'zRem'
  | 'zCard'
  | 'zRange'
  | 'zRangeByScore'
  | 'zRangeWithScores'
  | 'evalSha'
  | 'eval'
  | 'isOpen'
  | 'close'
> & {
  /** PING (a cluster client asks one of its nodes). */
  ping(): Promise<unknown>;
};

/** The node's Redis connection, owned by whoever opened it: stores receive the client and never close it. */
export interface NodeRedis {
  client: RedisClient;
  target: RedisTarget;
  close(): Promise<void>;
}

const reconnectStrategy = (retries: number) => Math.min(50 * 2 ** retries, 2000);

/**
 * Connects a node-redis client. Reconnects with capped backoff; commands
 * issued while disconnected wait in the offline queue rather than fail, up to
 * the reconnect strategy's patience.
 */
export async function connectRedis(url: string, name = 'switchboard'): Promise<SingleClient> {
  const client = createClient({ url, name, socket: { reconnectStrategy, connectTimeout: 5000 } });
  // Errors surface on the commands that hit them; without a listener node-redis would crash the process.
  client.on('error', () => {});
  await client.connect();
  return client;
}

/**
 * Opens the node's one Redis client: a plain client for one server, or a
 * cluster client (one connection per master, slots followed through MOVED
 * and ASK) for Redis Cluster. Nothing the service does blocks or subscribes
 * on Redis, so this is every Redis connection a node opens.
 */
export async function openNodeRedis(target: RedisTarget, name: string): Promise<NodeRedis> {
  if (target.kind === 'single') {
    const client = await connectRedis(target.url, name);
    return { client, target, close: () => closeQuietly(client) };
  }
  const cluster = createCluster({
    rootNodes: target.nodes.map((url) => ({ url })),
    defaults: { name, socket: { reconnectStrategy, connectTimeout: 5000 } },
  });
  cluster.on('error', () => {});
  await cluster.connect();
  // The cluster client's commands are the single client's, routed by their first key.
  return { client: cluster, target, close: () => closeQuietly(cluster) };
}

async function closeQuietly(c: SingleClient | ClusterClient): Promise<void> {
  if (c.isOpen) await c.close();
}

/**
 * A Lua script run by EVALSHA, loading it on NOSCRIPT (after a restart or
 * failover of Redis, or on a cluster node that has not seen it yet). Scripts
 * are how multi-key changes stay atomic; every key a script touches is in
 * `keys`, and they share one hash tag.
 */
export class LuaScript {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    const options = { keys, arguments: args.map(String) };
    try {
      return await client.evalSha(this.sha, options);
    } catch (e) {
      if (e instanceof Error && e.message.startsWith('NOSCRIPT')) return client.eval(this.source, options);
      throw e;
    }
  }
}

/** A Redis Cluster client (`createCluster`), which refuses a command whose keys span slots; a single server's client takes any keys. */
function isClusterClient(client: RedisClient): boolean {
  return 'masters' in client;
}

/**
 * Reads keys that may sit in different slots: one MGET on a single server
 * (any keys share its one keyspace: one command, not one per key), one GET
 * each on a cluster (node-redis pipelines them), never a cross-slot MGET.
 */
export async function getEach(client: RedisClient, keys: string[]): Promise<(string | null)[]> {
  if (keys.length > 1 && !isClusterClient(client)) return client.mGet(keys);
  return Promise.all(keys.map((key) => client.get(key)));
}

/** Key builder for organization-scoped keys: the `{o:<id>}` hash tag keeps one organization's keys in one slot. */
export function orgKeys(prefix: string, organizationId: string) {
  const base = `${prefix}:{o:${organizationId}}`;
  return (...parts: string[]) => [base, ...parts].join(':');
}
