import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/index.js';
import { AccountService } from '../../src/app/accounts.js';
import { systemClock } from '../../src/clock.js';
import { useRedisClients } from '../harness/use-servers.js';
import { usePostgres } from '../harness/use-postgres.js';
import { eventually } from '../harness/eventually.js';

/*
 * The paths every clustered request takes, made cheaper: lookups every
 * request makes are remembered for a moment on each node (two store instances
 * on one Redis stand for two nodes: a change is seen at once through the
 * instance that made it, and by the other once its memory has lapsed, about a
 * second: waited for, not timed). The messaging records' remembered reads
 * (channels, templates) are tested on PostgreSQL in messaging/stores.test.ts.
 */

const { client } = useRedisClients();
const postgres = usePostgres();

describe('remembered reads on clustered nodes', () => {
  it('API keys: a revoked key and a deactivated user stop working at once on their node, on another within the bound', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const db = await postgres.open();
    const [storeA, storeB] = [createPostgresStore(db, await client(), { prefix }), createPostgresStore(db, await client(), { prefix })];
    const [a, b] = [new AccountService(storeA, systemClock), new AccountService(storeB, systemClock)];
    const org = await a.createOrganization('Fresh');
    const user = await a.createUser(org.id, { email: 'admin@fresh.test', name: 'Admin', role: 'admin', password: 'correct horse battery' });
    const agent = await a.createUser(org.id, { email: 'agent@fresh.test', name: 'Agent', role: 'agent', password: 'correct horse battery' });
    const works = async (s: AccountService, key: string) =>
      s.authenticate(key).then(
        () => true,
        (e: { status?: number }) => (e.status === 401 ? false : Promise.reject(e)),
      );

    const k1 = await a.createApiKey(org.id, { userId: user.id, name: 'one', scopes: ['tickets:read'] });
    expect(await works(a, k1.key)).toBe(true);
    expect(await works(b, k1.key)).toBe(true);
    await a.revokeApiKey(org.id, k1.id);
    expect(await works(a, k1.key)).toBe(false);
    await eventually(async () => !(await works(b, k1.key)));

    const k2 = await a.createApiKey(org.id, { userId: agent.id, name: 'two', scopes: ['tickets:read'] });
    expect(await works(a, k2.key)).toBe(true);
    expect(await works(b, k2.key)).toBe(true);
    await b.updateUser(org.id, agent.id, { active: false });
    expect(await works(b, k2.key)).toBe(false);
    await eventually(async () => !(await works(a, k2.key)));
    await b.updateUser(org.id, agent.id, { active: true });
    expect(await works(b, k2.key)).toBe(true);

    const k3 = await a.createApiKey(org.id, { userId: user.id, name: 'three', scopes: ['tickets:read'] });
    expect((await b.authenticate(k3.key)).role).toBe('admin');
    await b.updateUser(org.id, user.id, { role: 'agent' });
    expect((await b.authenticate(k3.key)).role).toBe('agent');
    await eventually(async () => (await a.authenticate(k3.key)).role === 'agent');
  });
});
