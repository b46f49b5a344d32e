import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually, messagingOrg, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';

/**
 * The agent's workspace over the API: conversation views with their counts
 * and cursors, search, and the contact page, once embedded and once
 * clustered; another organization's conversations, contacts and messages
 * never show.
 */
function workspaceSuite(name: string, start: () => Promise<TestService>) {
  describe(`workspace API (${name})`, () => {
    let svc: TestService;
    let a: MessagingOrg;
    let b: MessagingOrg;
    let phone = 4916000000000 + Math.floor(Math.random() * 1e6) * 100;
    const conv: Record<'bot' | 'waiting' | 'mine' | 'others' | 'resolved', string> = { bot: '', waiting: '', mine: '', others: '', resolved: '' };

    const write = async (o: MessagingOrg, text: string, profileName = 'Ann Customer', p = String(phone++)) => {
      const aeid = `${p}:${o.phoneNumberId}`;
      expect((await svc.call('POST', `/v1/sandbox/channels/${o.channelId}/customers/${p}/messages`, { key: o.adminKey, body: { text, profileName } })).status).toBe(201);
      await eventually(async () => (await svc.call('GET', `/v1/conversations/${aeid}`, { key: o.adminKey })).status === 200);
      return aeid;
    };
    const handover = async (o: MessagingOrg, aeid: string) => {
      expect((await svc.call('POST', '/v1/handover', { key: o.adminKey, body: { audienceExternalId: aeid } })).body).toEqual({ success: true });
    };
    const get = (path: string, key = a.adminKey) => svc.call('GET', path, { key });
    const ids = async (path: string, key = a.adminKey) => {
      const r = await get(path, key);
      expect(r.status).toBe(200);
      return r.body.conversations.map((c: { id: string }) => c.id) as string[];
    };

    beforeAll(async () => {
      svc = await start();
      a = await messagingOrg(svc, 'A', 100);
      b = await messagingOrg(svc, 'B', 100);
      conv.bot = await write(a, 'Mein Paket ist beschädigt angekommen', 'José Núñez');
      conv.waiting = await write(a, 'I need a human');
      await handover(a, conv.waiting);
      conv.mine = await write(a, 'Where is my order?');
      await handover(a, conv.mine);
      expect((await svc.call('POST', `/v1/conversations/${conv.mine}/take`, { key: a.adminKey })).status).toBe(200);
      conv.others = await write(a, 'Can I change my address?');
      await handover(a, conv.others);
      expect((await svc.call('POST', `/v1/conversations/${conv.others}/take`, { key: a.agentKey })).status).toBe(200);
      conv.resolved = await write(a, 'My refund arrived, thanks');
      await handover(a, conv.resolved);
      expect((await svc.call('POST', `/v1/conversations/${conv.resolved}/take`, { key: a.adminKey })).status).toBe(200);
      expect((await svc.call('POST', `/v1/conversations/${conv.resolved}/resolve`, { key: a.adminKey })).status).toBe(200);
      // Another organization, with the same words and the same name.
      await write(b, 'Mein Paket ist beschädigt angekommen', 'José Núñez');
    }, 60_000);
    afterAll(() => svc?.close());

    it('lists each view, with a count per view, relative to the caller; never another organization\'s', async () => {
      const counts = await get('/v1/conversations/counts');
      expect(counts.status).toBe(200);
      expect(counts.body).toEqual({ success: true, counts: { all: 5, bot: 1, waiting: 1, mine: 1, others: 1, unassigned: 2, resolved: 1 } });
      expect((await get('/v1/conversations/counts', a.agentKey)).body.counts).toMatchObject({ mine: 1, others: 1 });
      expect((await get('/v1/conversations/counts', b.adminKey)).body.counts).toEqual({ all: 1, bot: 1, waiting: 0, mine: 0, others: 0, unassigned: 1, resolved: 0 });
      for (const view of ['bot', 'waiting', 'mine', 'others', 'resolved'] as const) expect(await ids(`/v1/conversations?view=${view}`)).toEqual([conv[view]]);
      expect(await ids('/v1/conversations?view=mine', a.agentKey)).toEqual([conv.others]);
      expect(await ids('/v1/conversations?view=others', a.agentKey)).toEqual([conv.mine]);
      expect((await ids('/v1/conversations?view=unassigned')).sort()).toEqual([conv.bot, conv.waiting].sort());
      expect((await ids('/v1/conversations?view=all')).sort()).toEqual(Object.values(conv).sort());
      expect(await ids(`/v1/conversations?view=all&assigneeId=${a.agentId}`)).toEqual([conv.others]);
      const resolved = await get('/v1/conversations?view=resolved');
      expect(resolved.body).toMatchObject({ success: true, nextCursor: null, conversations: [{ id: conv.resolved, status: 'bot', sessionStatus: 'resolved' }] });
      const theirs = await ids('/v1/conversations?view=all', b.adminKey);
      expect(theirs).toHaveLength(1);
      expect(theirs).not.toContain(conv.bot);
    });

    it('filters by channel and contact: another organization\'s channel or contact finds nothing', async () => {
      expect(await ids(`/v1/conversations?view=all&channelId=${a.channelId}`)).toHaveLength(5);
      expect(await ids(`/v1/conversations?view=all&channelId=${a.webChannelId}`)).toEqual([]);
      expect(await ids(`/v1/conversations?view=all&channelId=${b.channelId}`)).toEqual([]);
      expect((await get(`/v1/conversations/counts?channelId=${b.channelId}`)).body.counts.all).toBe(0);
      const contact = (await get(`/v1/contacts?q=${conv.waiting.split(':')[0]}`)).body.contacts[0];
      expect(await ids(`/v1/conversations?contact=${contact.id}`)).toEqual([conv.waiting]);
      expect(await ids(`/v1/conversations?contact=${encodeURIComponent(conv.waiting)}`)).toEqual([conv.waiting]);
      expect(await ids(`/v1/conversations?contact=${contact.id}`, b.adminKey)).toEqual([]);
      expect(await ids(`/v1/conversations?contact=${encodeURIComponent(conv.waiting)}`, b.adminKey)).toEqual([]);
    });

    it('pages by cursor, stable while new conversations arrive; a cursor is bound to its view', async () => {
      const seen: string[] = [];
      const first = await get('/v1/conversations?view=all&limit=2');
      seen.push(...first.body.conversations.map((c: { id: string }) => c.id));
      expect(first.body.nextCursor).toEqual(expect.any(String));
      // A new conversation arrives: it is the newest, so it is not on the pages after the first.
      const late = await write(a, 'hello again, new here');
      let cursor: string | null = first.body.nextCursor;
      while (cursor !== null) {
        const page = await get(`/v1/conversations?view=all&limit=2&cursor=${encodeURIComponent(cursor)}`);
        expect(page.status).toBe(200);
        seen.push(...page.body.conversations.map((c: { id: string }) => c.id));
        cursor = page.body.nextCursor;
      }
      expect(seen).toHaveLength(5);
      expect(new Set(seen)).toEqual(new Set(Object.values(conv)));
      expect(seen).not.toContain(late);
      const waitingFirst = await ids('/v1/conversations?view=unassigned&sort=waiting');
      expect(waitingFirst).toHaveLength(3);
      const other = await get(`/v1/conversations?view=waiting&limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
      expect(other.status).toBe(400);
      expect(other.body.error.code).toBe('invalid_cursor');
      expect((await get('/v1/conversations?view=all&cursor=bm9wZQ')).body.error.code).toBe('invalid_cursor');
      expect((await get('/v1/conversations?view=all&page=2')).body.error.code).toBe('validation_failed');
      expect((await get('/v1/conversations?view=everything')).status).toBe(400);
      // Paging by page answers as before.
      const legacy = await get('/v1/conversations?status=queued&page=1&limit=10');
      expect(legacy.body).toMatchObject({ success: true, page: 1, limit: 10, total: 1, conversations: [{ id: conv.waiting }] });
      expect(legacy.body).not.toHaveProperty('nextCursor');
    });

    it('searches contacts and messages, case and accents folded, opening the conversation at the message; another organization\'s same words are not found', async () => {
      const r = await eventually(async () => {
        const x = await get('/v1/search?q=BESCHADIGT%20pak');
        return x.body.messages?.length > 0 ? x : null;
      });
      expect(r.status).toBe(200);
      expect(r.body.messages).toEqual([
        { sessionId: expect.any(String), messageId: expect.any(String), audienceExternalId: conv.bot, conversationId: conv.bot, snippet: 'Mein Paket ist beschädigt angekommen', sentAt: expect.any(String) },
      ]);
      const history = await get(`/v1/conversations/${conv.bot}`);
      expect(history.body.conversation.messages.map((m: { _id: string }) => m._id)).toContain(r.body.messages[0].messageId);
      expect(r.body.contacts).toEqual([]);
      const named = await get('/v1/search?q=jose%20nunez');
      expect(named.body.contacts.map((c: { audienceExternalId: string }) => c.audienceExternalId)).toEqual([conv.bot]);
      const byPhone = await get(`/v1/search?q=${encodeURIComponent('+' + conv.mine.slice(0, 6))}`);
      expect(byPhone.body.contacts.map((c: { audienceExternalId: string }) => c.audienceExternalId)).toContain(conv.mine);
      const theirs = await get('/v1/search?q=paket%20beschadigt', b.adminKey);
      expect(theirs.body.messages).toHaveLength(1);
      expect(theirs.body.messages[0].conversationId).not.toBe(conv.bot);
      expect(theirs.body.contacts.every((c: { audienceExternalId: string }) => c.audienceExternalId !== conv.bot)).toBe(true);
      // Query syntax is only words.
      expect((await get(`/v1/search?q=${encodeURIComponent('"paket" OR NEAR(*')}`)).status).toBe(200);
      expect((await get('/v1/search')).status).toBe(400);
      // Without contacts:read, messages only.
      const inboxOnly = await a.keyWith(['inbox:read']);
      expect((await get('/v1/search?q=jose', inboxOnly)).body.contacts).toEqual([]);
      expect((await get('/v1/search?q=paket', await a.keyWith(['contacts:read']))).status).toBe(403);
    });

    it('shows a contact with its conversation, sessions and tickets, and changes its name and attributes; never another organization\'s', async () => {
      const contact = (await get(`/v1/contacts?q=${conv.bot.split(':')[0]}`)).body.contacts[0];
      const ticket = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'Damaged parcel', description: 'Box torn, lid cracked', audienceExternalId: conv.bot } });
      expect(ticket.status).toBe(201);
      const page = await get(`/v1/contacts/${contact.id}`);
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({
        success: true,
        contact: { id: contact.id, name: 'José Núñez', phone: conv.bot.split(':')[0], attributes: {} },
        conversation: { id: conv.bot, status: 'bot', sessionStatus: 'open', channelId: a.channelId },
        sessions: [{ status: 'open' }],
        tickets: [{ ticketId: ticket.body.ticketId, title: 'Damaged parcel' }],
        ticketsTotal: 1,
      });
      const resolvedContact = (await get(`/v1/contacts?q=${conv.resolved.split(':')[0]}`)).body.contacts[0];
      expect((await get(`/v1/contacts/${resolvedContact.id}`)).body.sessions).toEqual([{ sessionId: expect.any(String), openedAt: expect.any(String), status: 'resolved' }]);
      expect((await get(`/v1/contacts/${contact.id}`, await a.keyWith(['contacts:read']))).body).not.toHaveProperty('tickets');
      expect((await get(`/v1/contacts/${contact.id}`, b.adminKey)).status).toBe(404);

      const patch = (body: unknown, key = a.adminKey, id = contact.id) => svc.call('PATCH', `/v1/contacts/${id}`, { key, body });
      const changed = await patch({ name: 'José Núñez-García', attributes: { plan: 'gold', city: 'Köln' } });
      expect(changed.status).toBe(200);
      expect(changed.body.contact).toMatchObject({ name: 'José Núñez-García', attributes: { plan: 'gold', city: 'Köln' } });
      expect((await patch({ attributes: { city: null, tier: '2' } })).body.contact.attributes).toEqual({ plan: 'gold', tier: '2' });
      expect((await get('/v1/search?q=garcia')).body.contacts.map((c: { id: string }) => c.id)).toEqual([contact.id]);
      expect((await patch({ name: 'Mallory' }, b.adminKey)).status).toBe(404);
      expect((await get(`/v1/contacts/${contact.id}`)).body.contact.name).toBe('José Núñez-García');
      expect((await patch({})).status).toBe(400);
      expect((await patch({ attributes: { 'bad key!': 'x' } })).status).toBe(400);
      expect((await patch({ attributes: { k: 'x'.repeat(1001) } })).status).toBe(400);
      expect((await patch({ name: 'x', extra: 1 })).status).toBe(400);
      const many = Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`k${i}`, 'v']));
      const tooMany = await patch({ attributes: many });
      expect(tooMany.status).toBe(422);
      expect(tooMany.body.error.code).toBe('too_many_attributes');
      expect((await patch({ name: 'x' }, await a.keyWith(['contacts:read']))).status).toBe(403);
    });

    it('finds tickets by words of their subject or description', async () => {
      const t = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'Drucker brennt', description: 'Im zweiten Stock qualmt es' } });
      await svc.call('POST', '/v1/tickets', { key: b.adminKey, body: { subject: 'Drucker brennt', description: 'x' } });
      const found = await get('/v1/tickets?q=DRUCKER%20qualm');
      expect(found.body).toMatchObject({ total: 1, tickets: [{ ticketId: t.body.ticketId }] });
      expect((await get('/v1/tickets?q=drucker', b.adminKey)).body.tickets.map((x: { ticketId: string }) => x.ticketId)).not.toContain(t.body.ticketId);
      expect((await get('/v1/tickets?q=drucker&status=closed')).body.total).toBe(0);
    });
  });
}

workspaceSuite('embedded', () => startMessagingService());

describe('clustered', () => {
  const servers = useClusterServers();
  workspaceSuite('clustered', () => startMessagingService({ env: { ...servers.env(`ws${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true' } }));
});
