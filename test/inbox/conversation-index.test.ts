import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { openNodeDbIn, connectRedis, createSqliteConversationIndex, createRedisConversationIndex, type RedisClient } from '../../src/store/index.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';

import { runConversationIndexContract } from './conversation-index.contract.js';

runConversationIndexContract('embedded', async () => {
  const db = await openNodeDbIn(null);
  return { repo: createSqliteConversationIndex(db), close: () => db.close() };
});

let redis: ServerProcess;
let clients: RedisClient[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const c of clients) await c.close();
  clients = [];
  await redis?.stop();
});

runConversationIndexContract('redis', async () => {
  const client = await connectRedis(redis.url);
  clients.push(client);
  return { repo: createRedisConversationIndex(client, `t${randomUUID().slice(0, 8)}`), close: async () => {} };
});
