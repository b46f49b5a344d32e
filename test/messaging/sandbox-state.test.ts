import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { connectRedis, EmbeddedDb } from '../../src/store/index.js';
import { createEmbeddedSandboxState, createRedisSandboxState } from '../../src/network/sandbox/index.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';

import { runSandboxStateContract } from './sandbox-state.contract.js';

runSandboxStateContract('embedded', async () => {
  const db = await EmbeddedDb.open(null);
  return { state: createEmbeddedSandboxState(db), close: () => db.close() };
});

let redis: ServerProcess;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
runSandboxStateContract('redis', async () => {
  const client = await connectRedis(redis.url);
  return { state: createRedisSandboxState(client, `t${randomUUID().slice(0, 8)}`), close: async () => void (await client.quit()) };
});
