import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { openNodeDbIn, connectRedis } from '../../src/store/index.js';
import { createSqliteToolRepo } from '../../src/store/tools/sqlite.js';
import { createRedisToolRepo } from '../../src/store/tools/redis.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';
import { runToolStoreContract } from './store-contract.js';

runToolStoreContract('embedded', async (box) => {
  const db = await openNodeDbIn(null);
  const repo = createSqliteToolRepo(db, box);
  return {
    repo,
    // One process in embedded mode: every "node" is this one.
    otherNode: repo,
    rawDump: async () => JSON.stringify(['tools', 'toolCredentials', 'toolStates', 'toolPayments'].map((c) => [...db.entries(c)])),
    reopen: (b) => createSqliteToolRepo(db, b),
    close: () => db.close(),
  };
});

let redis: ServerProcess;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

runToolStoreContract('redis', async (box) => {
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const client = await connectRedis(redis.url);
  // Another node's connection.
  const other = await connectRedis(redis.url);
  return {
    repo: createRedisToolRepo(client, prefix, box),
    otherNode: createRedisToolRepo(other, prefix, box),
    rawDump: async () => {
      const parts: string[] = [];
      for (const k of await client.keys(`${prefix}:*`)) {
        const type = await client.type(k);
        parts.push(k, type === 'string' ? ((await client.get(k)) ?? '') : type === 'hash' ? JSON.stringify(await client.hGetAll(k)) : '');
      }
      return parts.join('\n');
    },
    reopen: (b) => createRedisToolRepo(client, prefix, b),
    close: async () => {
      await other.close();
      await client.close();
    },
  };
});
