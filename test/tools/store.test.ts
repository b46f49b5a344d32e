import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { openNodeDbIn, connectRedis } from '../../src/store/index.js';
import { createSqliteToolRepo } from '../../src/store/tools/sqlite.js';
import { createPostgresToolRepo } from '../../src/store/tools/postgres.js';
import { usePostgres } from '../harness/use-postgres.js';
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
const postgres = usePostgres();

runToolStoreContract('postgres', async (box) => {
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const db = await postgres.open();
  const client = await connectRedis(redis.url);
  // Another node: a Redis connection of its own (the pool has several connections, as nodes do).
  const other = await connectRedis(redis.url);
  return {
    repo: createPostgresToolRepo(db, client, prefix, box),
    otherNode: createPostgresToolRepo(db, other, prefix, box),
    rawDump: async () => {
      const parts: string[] = [];
      for (const table of ['tools', 'tool_credentials', 'tool_payment_events', 'records']) {
        for (const r of await db.rows<{ row: string }>(`SELECT t::text AS row FROM ${table} t`)) parts.push(r.row);
      }
      for (const k of await client.keys(`${prefix}:*`)) parts.push(k, (await client.type(k)) === 'string' ? ((await client.get(k)) ?? '') : '');
      return parts.join('\n');
    },
    reopen: (b) => createPostgresToolRepo(db, client, prefix, b),
    close: async () => {
      await other.close();
      await client.close();
    },
  };
});
