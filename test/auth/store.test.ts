import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, createSqliteStore, openNodeDbIn } from '../../src/store/index.js';
import { useRedisClients } from '../harness/use-servers.js';
import { usePostgres } from '../harness/use-postgres.js';
import { runAuthStoreContract } from './store-contract.js';

runAuthStoreContract('embedded', async () => createSqliteStore(await openNodeDbIn(null)));

const { client } = useRedisClients();
const postgres = usePostgres();
// Sign-in sessions and failure counters live in Redis, beside the records in PostgreSQL.
runAuthStoreContract('postgres + redis', async () => createPostgresStore(await postgres.open(), await client(), { prefix: `t${randomUUID().slice(0, 8)}` }));

describe('sign-in sessions in Redis (clustered)', () => {
  it('are found by hash, listed per user under the organization hash tag, and expire', async () => {
    const redis = await client();
    const prefix = `s${randomUUID().slice(0, 6)}`;
    const store = createPostgresStore(await postgres.open(), redis, { prefix });
    const at = new Date().toISOString();
    await store.sessions.create({ idHash: 'abc', organizationId: 'o1', userId: 'u1', csrfToken: 'c', createdAt: at, lastSeenAt: at, expiresAt: new Date(Date.now() + 60_000).toISOString() }, Date.now() + 60_000);
    expect(await redis.exists(`${prefix}:session:abc`)).toBe(1);
    expect(await redis.sMembers(`${prefix}:{o:o1}:user-sessions:u1`)).toEqual(['abc']);
    expect(await redis.pTTL(`${prefix}:session:abc`)).toBeGreaterThan(0);
    expect(await redis.pTTL(`${prefix}:{o:o1}:user-sessions:u1`)).toBeGreaterThan(0);
  });
});
