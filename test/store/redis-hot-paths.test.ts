import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/index.js';
import { createRedisCreditRepo } from '../../src/store/credits/redis.js';
import { CREDIT_LEDGER_SIZE } from '../../src/store/credits/port.js';
import { createRedisConversationIndex } from '../../src/store/conversations/redis.js';
import type { ConversationRecord } from '../../src/domain/conversation.js';
import { createRedisSessionMessageRepo } from '../../src/store/session-messages/redis.js';
import { createRedisTemplateRepo } from '../../src/store/templates/redis.js';
import type { TemplateRecord } from '../../src/store/templates/port.js';
import type { SessionMessage } from '../../src/messaging/types.js';
import { AccountService } from '../../src/app/accounts.js';
import { systemClock } from '../../src/clock.js';
import { useRedisClients } from '../harness/use-servers.js';
import { template as storedTemplate } from '../messaging/store-contract.js';
import { record as conversation } from '../inbox/conversation-index.contract.js';

/*
 * The Redis paths every clustered send takes, made cheaper: lookups every
 * send makes are remembered for a moment on each node (two store instances
 * on one Redis stand for two nodes: a change is seen at once through the
 * instance that made it, and by the other once its memory has lapsed, about a
 * second: waited for, not timed), and scripts that do fewer commands.
 */

const { client } = useRedisClients();

/** Polls until `check` holds (the other node's memory lapses); fails after 20 s. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('not seen within 20 s');
}

const template = (org: string, channelId: string, over: Partial<TemplateRecord> = {}) => storedTemplate(org, channelId, 'welcome', 'en', over);

describe('remembered reads on clustered nodes', () => {
  it('templates: a change is seen at once on its node, by another node within the bound; a new one at once everywhere', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const [a, b] = [createRedisTemplateRepo(await client(), prefix), createRedisTemplateRepo(await client(), prefix)];
    expect(await b.get('o1', 'ch1', 'welcome', 'en')).toBeNull();
    await a.put(template('o1', 'ch1'));
    // Not found is never remembered.
    expect((await b.get('o1', 'ch1', 'welcome', 'en'))?.status).toBe('APPROVED');
    expect((await a.get('o1', 'ch1', 'welcome', 'en'))?.status).toBe('APPROVED');
    await a.put(template('o1', 'ch1', { status: 'PAUSED' }));
    expect((await a.get('o1', 'ch1', 'welcome', 'en'))?.status).toBe('PAUSED');
    await eventually(async () => (await b.get('o1', 'ch1', 'welcome', 'en'))?.status === 'PAUSED');
    await a.replaceFromNetwork('o1', 'ch1', []);
    expect(await a.get('o1', 'ch1', 'welcome', 'en')).toBeNull();
    await eventually(async () => (await b.get('o1', 'ch1', 'welcome', 'en')) === null);
    await b.put(template('o1', 'ch1'));
    await b.delete('o1', 'ch1', 'welcome', 'en');
    expect(await b.get('o1', 'ch1', 'welcome', 'en')).toBeNull();
  });

  it('API keys: a revoked key and a deactivated user stop working at once on their node, on another within the bound', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const [storeA, storeB] = [createRedisStore(await client(), prefix), createRedisStore(await client(), prefix)];
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

  it('a status webhook finds the message and its contact by network id in one read (none on the node that stored it), also for entries written before the contact was kept beside the id', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const c = await client();
    const repo = createRedisSessionMessageRepo(c, prefix);
    const m = {
      _id: 'msg_one',
      sessionId: randomUUID(),
      organizationId: 'o1',
      audienceExternalId: '4915100000001:123',
      channelId: 'ch1',
      direction: 'outbound',
      messageId: 'wamid.one',
      sentAt: new Date().toISOString(),
      status: 'accepted',
    } as unknown as SessionMessage;
    expect(await repo.append(m)).toBe(true);
    expect(await repo.locateByNetworkId('o1', 'wamid.one')).toEqual({ _id: 'msg_one', audienceExternalId: '4915100000001:123' });
    expect((await repo.getByNetworkId('o1', 'wamid.one'))?._id).toBe('msg_one');
    // Another node, which has not seen the message: it reads the entry.
    const other = createRedisSessionMessageRepo(await client(), prefix);
    expect(await other.locateByNetworkId('o1', 'wamid.one')).toEqual({ _id: 'msg_one', audienceExternalId: '4915100000001:123' });
    // An entry as an older version wrote it: the id alone.
    await c.set(`${prefix}:{o:o1}:smsg-net:wamid.one`, 'msg_one');
    const third = createRedisSessionMessageRepo(await client(), prefix);
    expect(await third.locateByNetworkId('o1', 'wamid.one')).toEqual({ _id: 'msg_one', audienceExternalId: '4915100000001:123' });
    expect((await third.getByNetworkId('o1', 'wamid.one'))?._id).toBe('msg_one');
    expect(await third.locateByNetworkId('o1', 'wamid.none')).toBeNull();
    // A second append under the same _id stores nothing, and its network id is not taken for the first's.
    expect(await repo.append({ ...m, messageId: 'wamid.two' } as SessionMessage)).toBe(false);
    expect(await repo.locateByNetworkId('o1', 'wamid.two')).toBeNull();
  });

  it('the inbox projection stays right when another node moved the conversation to another agent since this node wrote it', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const [a, b] = [createRedisConversationIndex(await client(), prefix), createRedisConversationIndex(await client(), prefix)];
    let version = 0;
    const rec = (over: Partial<ConversationRecord>): ConversationRecord =>
      conversation('o1', '4915100000001:123', { updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, ++version)).toISOString(), version, ...over });
    const where = async () => ({
      bot: (await a.list({ organizationId: 'o1', status: 'bot', offset: 0, limit: 10 })).total,
      queued: (await a.list({ organizationId: 'o1', status: 'queued', offset: 0, limit: 10 })).total,
      assigned: (await a.list({ organizationId: 'o1', status: 'assigned', offset: 0, limit: 10 })).total,
      x: (await a.list({ organizationId: 'o1', assigneeId: 'agent-x', offset: 0, limit: 10 })).total,
      y: (await a.list({ organizationId: 'o1', assigneeId: 'agent-y', offset: 0, limit: 10 })).total,
    });
    expect(await a.put(rec({}))).toBe(true);
    expect(await a.put(rec({ status: 'assigned', assigneeId: 'agent-x' }))).toBe(true);
    expect(await where()).toEqual({ bot: 0, queued: 0, assigned: 1, x: 1, y: 0 });
    // Node b moves it to agent y; node a still remembers agent x.
    expect(await b.put(rec({ status: 'assigned', assigneeId: 'agent-y' }))).toBe(true);
    expect(await where()).toEqual({ bot: 0, queued: 0, assigned: 1, x: 0, y: 1 });
    expect(await a.put(rec({ status: 'queued', assigneeId: null, queuedAt: new Date().toISOString() }))).toBe(true);
    expect(await where()).toEqual({ bot: 0, queued: 1, assigned: 0, x: 0, y: 0 });
    expect((await a.get('o1', '4915100000001:123'))?.version).toBe(version);
  });

  it('credits: a refused reservation leaves no trace (the id can be reserved after a top-up); the ledger shows at most its size', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const credits = createRedisCreditRepo(await client(), prefix);
    expect(await credits.reserve('o1', 'r1', 5)).toEqual({ ok: false, balance: 0 });
    await credits.topUp('o1', 3);
    expect(await credits.reserve('o1', 'r1', 5)).toEqual({ ok: false, balance: 3 });
    expect(await credits.balance('o1')).toBe(3);
    expect((await credits.history('o1', 10)).map((e) => e.kind)).toEqual(['top_up']);
    await credits.topUp('o1', 2);
    expect(await credits.reserve('o1', 'r1', 5)).toEqual({ ok: true, balance: 0 });
    expect(await credits.reserve('o1', 'r1', 5)).toEqual({ ok: true, balance: 0 });
    expect((await credits.history('o1', 10)).map((e) => [e.kind, e.amount, e.balance])).toEqual([
      ['charge', -5, 0],
      ['top_up', 2, 5],
      ['top_up', 3, 3],
    ]);
    for (let i = 0; i < CREDIT_LEDGER_SIZE + 150; i++) await credits.topUp('o1', 1);
    const all = await credits.history('o1', CREDIT_LEDGER_SIZE * 2);
    expect(all).toHaveLength(CREDIT_LEDGER_SIZE);
    expect(all[0]!.balance).toBe(CREDIT_LEDGER_SIZE + 150);
  });
});
