import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { RedisActorStore } from '../../src/store/actors/redis.js';
import { openNodeDbIn } from '../../src/store/backing.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';
import { runActorStoreContract } from './actor-store.contract.js';

runActorStoreContract('embedded', async () => new SqliteActorStore(await openNodeDbIn(null)));

let redis: ServerProcess;
let client: ReturnType<typeof createClient>;
let n = 0;
beforeAll(async () => {
  redis = await startRedis();
  client = createClient({ url: redis.url });
  await client.connect();
});
afterAll(async () => {
  await client?.quit();
  await redis?.stop();
});

// Each store gets its own key prefix, so tests never see each other's keys.
runActorStoreContract('redis', async () => new RedisActorStore(client, `t${++n}`));

describe('redis key layout', () => {
  it('puts an actor\'s state, its partition lease and epoch in one hash slot (same hash tag)', async () => {
    const store = new RedisActorStore(client, 'layout');
    const e = (await store.acquire(7, 'n1', 10_000))!;
    await store.save({ type: 'conversation', key: 'org_1/1555:pn', partition: 7 }, { v: 1 }, { partition: 7, epoch: e });
    const keys = (await client.keys('layout:*')).sort();
    expect(keys).toEqual(['layout:{p7}:actor:conversation:org_1/1555:pn', 'layout:{p7}:epoch', 'layout:{p7}:lease']);
    const tags = new Set(keys.map((k) => /\{[^}]*\}/.exec(k)?.[0]));
    expect(tags).toEqual(new Set(['{p7}']));
  });
});
