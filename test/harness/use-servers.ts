import { afterAll, beforeAll } from 'vitest';
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
