import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, createSqliteStore, createRedisStore, openNodeDbIn } from '../../src/store/index.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';
import { runAuthStoreContract } from './store-contract.js';

runAuthStoreContract('embedded', async () => createSqliteStore(await openNodeDbIn(null)));

let redis: ServerProcess;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
runAuthStoreContract('redis', async () => createRedisStore(await connectRedis(redis.url), `t${randomUUID().slice(0, 8)}`));

describe('redis store: sign-in by email for users stored before the email index', () => {
  it('indexes existing users once, on the first lookup', async () => {
    const client = await connectRedis(redis.url);
    const prefix = `old${randomUUID().slice(0, 6)}`;
    try {
      // What an older version wrote: the organization, its user, its email hash; no global index.
      await client.sAdd(`${prefix}:orgs`, 'o1');
      const user = { id: 'u1', organizationId: 'o1', email: 'old@x.io', name: 'Old', role: 'admin', passwordHash: 'h', createdAt: new Date().toISOString() };
      await client.set(`${prefix}:{o:o1}:user:u1`, JSON.stringify(user));
      await client.hSet(`${prefix}:{o:o1}:users`, 'old@x.io', 'u1');
      const store = createRedisStore(client, prefix);
      expect(await store.users.findByEmail('old@x.io')).toEqual([user]);
      expect(await client.get(`${prefix}:meta:user-email-index-v1`)).not.toBeNull();
      // Session keys are found by hash; the per-user index carries the organization's hash tag.
      await store.sessions.create({ idHash: 'abc', organizationId: 'o1', userId: 'u1', csrfToken: 'c', createdAt: user.createdAt, lastSeenAt: user.createdAt, expiresAt: new Date(Date.now() + 60_000).toISOString() }, Date.now() + 60_000);
      expect(await client.exists(`${prefix}:session:abc`)).toBe(1);
      expect(await client.sMembers(`${prefix}:{o:o1}:user-sessions:u1`)).toEqual(['abc']);
      expect(await client.pTTL(`${prefix}:session:abc`)).toBeGreaterThan(0);
      expect(await client.pTTL(`${prefix}:{o:o1}:user-sessions:u1`)).toBeGreaterThan(0);
    } finally {
      await client.quit();
    }
  });
});
