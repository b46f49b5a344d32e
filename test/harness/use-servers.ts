import { afterAll, beforeAll } from 'vitest';
import { connectRedis, type RedisClient } from '../../src/store/index.js';
import { startNats, startRedis, type ServerProcess } from './servers.js';

/**
 * A real redis-server and nats-server for the enclosing suite: started before
 * its first test, stopped after its last. Read them inside tests or hooks
 * (`servers.redis.url`), not at collection time.
 */
export function useRedisAndNats(): { readonly redis: ServerProcess; readonly nats: ServerProcess } {
  const servers = {} as { redis: ServerProcess; nats: ServerProcess };
  beforeAll(async () => {
    [servers.redis, servers.nats] = await Promise.all([startRedis(), startNats()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([servers.redis?.stop(), servers.nats?.stop()]);
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
