import { afterAll, beforeAll } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { connectRedis } from '../../src/store/index.js';
import { createMemoryPresenceStore } from '../../src/store/presence/memory.js';
import { createRedisPresenceStore } from '../../src/store/presence/redis.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';
import { runPresenceContract } from './presence.contract.js';

runPresenceContract('memory', async () => ({ store: createMemoryPresenceStore(systemClock), close: async () => {} }));

let redis: ServerProcess;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
runPresenceContract('redis', async () => {
  const client = await connectRedis(redis.url);
  return { store: createRedisPresenceStore(client, `p${Math.random().toString(36).slice(2, 8)}`), close: () => client.close() };
});
