import { afterAll, beforeAll } from 'vitest';
import { connectRedis, type RedisClient } from '../../src/store/index.js';
import { startNats, startPostgres, startRedis, type PostgresProcess, type ServerProcess } from './servers.js';

export interface ClusterServers {
  readonly redis: ServerProcess;
  readonly nats: ServerProcess;
  readonly postgres: PostgresProcess;
  /**
   * What a clustered node needs to reach them: the three URLs, `prefix` as
   * its Redis key prefix and NATS subject prefix, and a PostgreSQL schema of
   * the same name (so several deployments share the servers, as cases do).
   * With `redisClusterNodes`, the node uses that Redis Cluster instead.
   */
  env(prefix: string, opts?: { redisClusterNodes?: string[] }): Record<string, string>;
}

/** A clustered node's settings for these servers (see `ClusterServers.env`). */
export function clusterEnv(servers: { redis: ServerProcess; nats: ServerProcess; postgres: PostgresProcess }, prefix: string, opts: { redisClusterNodes?: string[] } = {}): Record<string, string> {
  return {
    ...(opts.redisClusterNodes === undefined ? { REDIS_URL: servers.redis.url } : { REDIS_CLUSTER_NODES: opts.redisClusterNodes.join(',') }),
    NATS_URL: servers.nats.url,
    DATABASE_URL: servers.postgres.url,
    DATABASE_SCHEMA: prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_'),
    KEY_PREFIX: prefix,
  };
}

/**
 * A real redis-server, nats-server and postgres for the enclosing suite:
 * started before its first test, stopped after its last. Read them inside
 * tests or hooks (`servers.redis.url`, `servers.env('prefix')`), not at
 * collection time.
 */
export function useClusterServers(): ClusterServers {
  const servers = {} as { redis: ServerProcess; nats: ServerProcess; postgres: PostgresProcess } & Pick<ClusterServers, 'env'>;
  servers.env = (prefix, opts) => clusterEnv(servers, prefix, opts);
  beforeAll(async () => {
    [servers.redis, servers.nats, servers.postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([servers.redis?.stop(), servers.nats?.stop(), servers.postgres?.stop()]);
  });
  return servers;
}

/**
 * A real redis-server for the enclosing suite and a way to connect to it:
 * every client made is closed, then the server stopped, after the last test.
 */
export function useRedisClients(): { client(): Promise<RedisClient> } {
  let redis: ServerProcess | undefined;
  const clients: RedisClient[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    await redis?.stop();
  });
  return {
    async client() {
      const c = await connectRedis(redis!.url);
      clients.push(c);
      return c;
    },
  };
}
