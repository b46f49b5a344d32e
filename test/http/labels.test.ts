import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/events/types.js';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually, messagingOrg, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';

/**
 * Labels over the API: an organization's set (admins manage it), on
 * conversations and contacts, and the label filter of the conversation views
 * and counts; once embedded and once clustered. Another organization's
 * labels, conversations and contacts are never reached.
 */
function labelSuite(name: string, start: () => Promise<TestService>) {
  describe(`labels (${name})`, () => {
    let svc: TestService;
    let a: MessagingOrg;
    let b: MessagingOrg;
    let phone = 4918000000000 + Math.floor(Math.random() * 1e6) * 100;
    const conv: string[] = [];
    const events: DomainEvent[] = [];

    const write = async (o: MessagingOrg, text: string) => {
      const p = String(phone++);
      const aeid = `${p}:${o.phoneNumberId}`;
      expect((await svc.call('POST', `/v1/sandbox/channels/${o.channelId}/customers/${p}/messages`, { key: o.adminKey, body: { text, profileName: 'Cleo' } })).status).toBe(201);
      await eventually(async () => (await svc.call('GET', `/v1/conversations/${aeid}`, { key: o.adminKey })).status === 200);
      return aeid;
    };
    const call = (method: string, path: string, key: string, body?: unknown) => svc.call(method, path, { key, body });
    const ids = async (path: string, key = a.adminKey) => {
      const r = await call('GET', path, key);
      expect(r.status).toBe(200);
      return (r.body.conversations as { id: string }[]).map((c) => c.id).sort();
    };

    beforeAll(async () => {
      svc = await start();
      a = await messagingOrg(svc, 'A', 0);
      b = await messagingOrg(svc, 'B', 0);
      for (const text of ['Refund please', 'Where is it?', 'Broken on arrival']) conv.push(await write(a, text));
      conv.push(await write(b, 'Refund please'));
      await svc.running.services.events.consume(`labels-test-${Date.now()}`, async (e) => {
        if (e.type === 'conversation.labels_changed') events.push(e);
      });
    }, 60_000);
    afterAll(() => svc?.close());

    it('lets admins manage the set: names unique in any case, colours checked, agents and other organizations refused', async () => {
      const created = await call('POST', '/v1/labels', a.adminKey, { name: 'Refund', color: '#E11D48' });
      expect(created.status).toBe(201);
      expect(created.body.label).toEqual({ id: expect.stringMatching(/^lbl_/), name: 'Refund', color: '#e11d48' });
      expect((await call('POST', '/v1/labels', a.adminKey, { name: 'bug' })).body.label).toMatchObject({ name: 'bug', color: '#6b7280' });
      const dup = await call('POST', '/v1/labels', a.adminKey, { name: ' REFUND ' });
      expect([dup.status, dup.body.error.code]).toEqual([409, 'label_exists']);
      for (const body of [{}, { name: '' }, { name: 'a/b' }, { name: 'x'.repeat(51) }, { name: 'ok', color: 'red' }, { name: 'ok', extra: 1 }]) {
        const bad = await call('POST', '/v1/labels', a.adminKey, body);
        expect([bad.status, bad.body.error.code], JSON.stringify(body)).toEqual([400, 'validation_failed']);
      }
      // Managing needs settings:manage (an agent's dashboard session has not); reading needs only inbox:read.
      const agent = await call('POST', '/v1/labels', await a.keyWith(['inbox:read', 'inbox:write'], 'agent'), { name: 'mine' });
      expect([agent.status, agent.body.error.code]).toEqual([403, 'insufficient_scope']);
      expect((await call('GET', '/v1/labels', await a.keyWith(['inbox:read']))).body.labels.map((l: { name: string }) => l.name)).toEqual(['bug', 'Refund']);
      expect((await call('GET', '/v1/labels', b.adminKey)).body.labels).toEqual([]);
      // B may have its own "Refund"; it cannot rename or delete A's.
      expect((await call('POST', '/v1/labels', b.adminKey, { name: 'refund' })).status).toBe(201);
      expect((await call('PATCH', `/v1/labels/${created.body.label.id}`, b.adminKey, { color: '#000000' })).status).toBe(404);
      expect((await call('DELETE', `/v1/labels/${created.body.label.id}`, b.adminKey)).status).toBe(404);
      expect((await call('PATCH', `/v1/labels/${created.body.label.id}`, a.adminKey, {})).status).toBe(400);
      expect((await call('PATCH', '/v1/labels/bug', a.adminKey, { name: 'refund' })).body.error.code).toBe('label_exists');
    });

    it('labels conversations and filters every view and count by label; never across organizations', async () => {
      const put = await call('POST', `/v1/conversations/${conv[0]}/labels`, a.agentKey, { labels: ['refund', 'BUG'] });
      expect(put.status).toBe(200);
      expect(put.body.labels.map((l: { name: string }) => l.name)).toEqual(expect.arrayContaining(['Refund', 'bug']));
      expect((await call('POST', `/v1/conversations/${conv[2]}/labels`, a.agentKey, { labels: ['Refund'] })).status).toBe(200);
      // Once each, whatever is sent again.
      expect((await call('POST', `/v1/conversations/${conv[2]}/labels`, a.agentKey, { labels: ['refund', 'refund'] })).body.labels).toHaveLength(1);
      expect(await ids('/v1/conversations?view=all&label=refund')).toEqual([conv[0], conv[2]].sort());
      expect(await ids('/v1/conversations?label=bug')).toEqual([conv[0]]);
      // Each change goes to the inbox socket and webhooks with the labels it leaves.
      const changed = await eventually(async () => {
        const of = events.filter((e) => (e.data as { audienceExternalId: string }).audienceExternalId === conv[0]);
        return of.length > 0 ? of : null;
      });
      expect(changed[0]).toMatchObject({ organizationId: a.id, data: { by: a.agentId, labels: expect.arrayContaining([expect.objectContaining({ name: 'bug' })]) } });
      expect(await ids('/v1/conversations?view=bot&label=Refund')).toEqual([conv[0], conv[2]].sort());
      expect(await ids('/v1/conversations?view=waiting&label=refund')).toEqual([]);
      expect(await ids('/v1/conversations?label=nothing-like-it')).toEqual([]);
      expect((await call('GET', '/v1/conversations/counts?label=refund', a.adminKey)).body.counts).toMatchObject({ all: 2, bot: 2, waiting: 0 });
      const listed = (await call('GET', '/v1/conversations?view=all&label=bug', a.adminKey)).body.conversations[0];
      expect(listed.labels).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'bug', color: '#6b7280' })]));
      expect((await call('GET', `/v1/conversations/${conv[1]}`, a.adminKey)).body.conversation.labels).toEqual([]);
      // A cursor is bound to its label.
      const page = await call('GET', '/v1/conversations?view=all&label=refund&limit=1', a.adminKey);
      expect(page.body.nextCursor).not.toBeNull();
      expect((await call('GET', `/v1/conversations?view=all&label=bug&cursor=${page.body.nextCursor}`, a.adminKey)).body.error.code).toBe('invalid_cursor');
      expect((await call('GET', `/v1/conversations?view=all&label=refund&limit=1&cursor=${page.body.nextCursor}`, a.adminKey)).body.conversations).toHaveLength(1);
      // B: its own "refund" finds only its conversations; A's labels and conversations are out of reach.
      expect(await ids('/v1/conversations?view=all&label=refund', b.adminKey)).toEqual([]);
      expect((await call('GET', '/v1/conversations/counts?label=bug', b.adminKey)).body.counts.all).toBe(0);
      expect((await call('POST', `/v1/conversations/${conv[1]}/labels`, b.adminKey, { labels: ['refund'] })).status).toBe(404);
      const theirs = await call('POST', `/v1/conversations/${conv[3]}/labels`, b.adminKey, { labels: ['bug'] });
      expect([theirs.status, theirs.body.error.code, theirs.body.error.details]).toEqual([422, 'unknown_label', { labels: ['bug'] }]);
      expect((await call('POST', `/v1/conversations/${conv[3]}/labels`, b.adminKey, { labels: ['refund'] })).status).toBe(200);
      expect(await ids('/v1/conversations?view=all&label=refund', b.adminKey)).toEqual([conv[3]]);
      expect(await ids('/v1/conversations?view=all&label=refund')).toEqual([conv[0], conv[2]].sort());
      expect(events.filter((e) => e.organizationId === b.id).map((e) => (e.data as { audienceExternalId: string }).audienceExternalId)).toEqual([conv[3]]);
      // Scopes and bad input.
      expect((await call('POST', `/v1/conversations/${conv[1]}/labels`, await a.keyWith(['inbox:read']), { labels: ['bug'] })).status).toBe(403);
      for (const body of [{}, { labels: [] }, { labels: [''] }, { labels: 'bug' }, { labels: ['bug'], x: 1 }]) {
        expect((await call('POST', `/v1/conversations/${conv[1]}/labels`, a.adminKey, body)).status, JSON.stringify(body)).toBe(400);
      }
      expect((await call('GET', `/v1/conversations/${conv[1]}`, a.adminKey)).body.conversation.labels).toEqual([]);
    });

    it('takes labels off; renaming shows everywhere; deleting takes it off everything', async () => {
      const off = await call('DELETE', `/v1/conversations/${conv[0]}/labels/bug`, a.agentKey);
      expect(off.body.labels.map((l: { name: string }) => l.name)).toEqual(['Refund']);
      expect((await call('DELETE', `/v1/conversations/${conv[0]}/labels/bug`, a.agentKey)).status).toBe(200);
      expect((await call('DELETE', `/v1/conversations/${conv[0]}/labels/nope`, a.agentKey)).status).toBe(404);
      expect((await call('DELETE', `/v1/conversations/${conv[0]}/labels/refund`, b.adminKey)).status).toBe(404);
      const refund = (await call('GET', '/v1/labels', a.adminKey)).body.labels.find((l: { name: string }) => l.name === 'Refund');
      expect((await call('PATCH', `/v1/labels/${refund.id}`, a.adminKey, { name: 'Refunds', color: '#00aa00' })).body.label).toEqual({ id: refund.id, name: 'Refunds', color: '#00aa00' });
      expect((await call('GET', `/v1/conversations/${conv[2]}`, a.adminKey)).body.conversation.labels).toEqual([{ id: refund.id, name: 'Refunds', color: '#00aa00' }]);
      expect(await ids(`/v1/conversations?label=${refund.id}`)).toEqual([conv[0], conv[2]].sort());
      expect((await call('DELETE', `/v1/labels/${refund.id}`, await a.keyWith(['inbox:read', 'inbox:write'], 'agent'))).status).toBe(403);
      expect((await call('DELETE', `/v1/labels/${refund.id}`, a.adminKey)).body).toEqual({ success: true });
      expect(await ids(`/v1/conversations?label=${refund.id}`)).toEqual([]);
      expect((await call('GET', `/v1/conversations/${conv[2]}`, a.adminKey)).body.conversation.labels).toEqual([]);
    });

    it('labels contacts, shown on the contact page; never another organization\'s contact', async () => {
      expect((await call('POST', '/v1/labels', a.adminKey, { name: 'vip', color: '#7c3aed' })).status).toBe(201);
      const contact = (await call('GET', `/v1/contacts?q=${conv[1]!.split(':')[0]}`, a.adminKey)).body.contacts[0];
      const r = await call('POST', `/v1/contacts/${contact.id}/labels`, a.agentKey, { labels: ['VIP'] });
      expect(r.body.labels).toEqual([expect.objectContaining({ name: 'vip', color: '#7c3aed' })]);
      expect((await call('GET', `/v1/contacts/${contact.id}`, a.adminKey)).body.contact.labels).toEqual([expect.objectContaining({ name: 'vip' })]);
      // A contact's label is not the conversation's.
      expect((await call('GET', `/v1/conversations/${conv[1]}`, a.adminKey)).body.conversation.labels).toEqual([]);
      expect((await call('POST', `/v1/contacts/${contact.id}/labels`, b.adminKey, { labels: ['refund'] })).status).toBe(404);
      expect((await call('DELETE', `/v1/contacts/${contact.id}/labels/vip`, b.adminKey)).status).toBe(404);
      expect((await call('DELETE', `/v1/contacts/${contact.id}/labels/vip`, a.agentKey)).body.labels).toEqual([]);
      expect((await call('GET', `/v1/contacts/${contact.id}`, a.adminKey)).body.contact.labels).toEqual([]);
    });
  });
}

labelSuite('embedded', () => startMessagingService());

describe('clustered', () => {
  const servers = useClusterServers();
  labelSuite('clustered', () => startMessagingService({ env: { ...servers.env(`lb${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true' } }));
});
