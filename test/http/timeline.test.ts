import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/events/types.js';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually, messagingOrg, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';

interface Entry {
  _id: string;
  sender: string;
  direction: string;
  content: { text?: string };
  system?: { event: string; by?: { type: string; userId?: string }; from?: string | null; to?: string; ticketId?: string };
  note?: true;
  agentId?: string;
}

/**
 * The conversation's timeline over the API: system entries for what happens
 * to a conversation, private notes, and moving a bot conversation to the
 * queue; once embedded and once clustered. The customer never gets any of
 * it, and another organization never sees it.
 */
function timelineSuite(name: string, start: () => Promise<TestService>) {
  describe(`conversation timeline (${name})`, () => {
    let svc: TestService;
    let a: MessagingOrg;
    let b: MessagingOrg;
    let phone = 4917000000000 + Math.floor(Math.random() * 1e6) * 100;
    const events: DomainEvent[] = [];

    const write = async (o: MessagingOrg, text: string, p = String(phone++)) => {
      const aeid = `${p}:${o.phoneNumberId}`;
      expect((await svc.call('POST', `/v1/sandbox/channels/${o.channelId}/customers/${p}/messages`, { key: o.adminKey, body: { text, profileName: 'Cleo' } })).status).toBe(201);
      await eventually(async () => (await svc.call('GET', `/v1/conversations/${aeid}`, { key: o.adminKey })).status === 200);
      return aeid;
    };
    const post = (path: string, key: string, body?: unknown) => svc.call('POST', path, { key, body });
    const detail = async (aeid: string, key = a.adminKey) => {
      const r = await svc.call('GET', `/v1/conversations/${aeid}`, { key });
      expect(r.status).toBe(200);
      return r.body.conversation as { sessionId: string; status: string; unreadCount: number; messages: Entry[] };
    };
    const history = async (sessionId: string, query = '', key = a.adminKey) => {
      const r = await svc.call('GET', `/v1/sessions/${sessionId}/messages${query}`, { key });
      expect(r.status).toBe(200);
      return r.body as Entry[];
    };
    /** What the sandbox customer's phone shows. */
    const phoneOf = async (o: MessagingOrg, aeid: string) => {
      const r = await svc.call('GET', `/v1/sandbox/channels/${o.channelId}/customers/${aeid.split(':')[0]}/messages`, { key: o.adminKey });
      expect(r.status).toBe(200);
      return JSON.stringify(r.body.messages);
    };
    const timeline = (entries: Entry[]) => entries.map((m) => (m.system ? `system:${m.system.event}` : m.note ? `note:${m.content.text}` : `${m.sender}:${m.content.text}`));

    beforeAll(async () => {
      svc = await start();
      a = await messagingOrg(svc, 'A', 100);
      b = await messagingOrg(svc, 'B', 100);
      await svc.running.services.events.consume(`timeline-test-${Date.now()}`, async (e) => {
        events.push(e);
      });
    }, 60_000);
    afterAll(() => svc?.close());

    it('writes a system entry for each change, in order with the messages, never to the customer, never unread', async () => {
      const aeid = await write(a, 'My parcel is late');
      expect((await post('/v1/handover', a.adminKey, { audienceExternalId: aeid })).body).toEqual({ success: true });
      expect((await post(`/v1/conversations/${aeid}/take`, a.adminKey)).status).toBe(200);
      expect((await post(`/v1/conversations/${aeid}/reply`, a.adminKey, { type: 'text', text: 'Looking into it' })).status).toBe(200);
      expect((await post(`/v1/conversations/${aeid}/transfer`, a.adminKey, { agentId: a.agentId })).status).toBe(200);
      expect((await post(`/v1/conversations/${aeid}/hand-back`, a.agentKey)).status).toBe(200);
      const first = await detail(aeid);
      expect((await post(`/v1/conversations/${aeid}/take`, a.agentKey)).status).toBe(200);
      expect((await post(`/v1/conversations/${aeid}/resolve`, a.agentKey)).status).toBe(200);
      const ticket = await post('/v1/tickets', a.adminKey, { subject: 'Late parcel', description: 'Lost in transit?', audienceExternalId: aeid });
      expect(ticket.status).toBe(201);

      const entries = await history(first.sessionId);
      expect(timeline(entries)).toEqual([
        'contact:My parcel is late',
        'system:handover_requested',
        'system:taken',
        'agent:Looking into it',
        'system:transferred',
        'system:handed_back',
        'system:taken',
        'system:resolved',
        'system:ticket_created',
      ]);
      const sys = entries.filter((m) => m.system);
      for (const m of sys) expect(m).toMatchObject({ sender: 'system', direction: 'internal', messageId: null });
      expect(sys.map((m) => m.system)).toEqual([
        { event: 'handover_requested', by: expect.objectContaining({ type: 'api', userId: a.adminId }) },
        { event: 'taken', by: { type: 'agent', userId: a.adminId } },
        { event: 'transferred', by: { type: 'agent', userId: a.adminId }, from: a.adminId, to: a.agentId },
        { event: 'handed_back', by: { type: 'agent', userId: a.agentId }, from: a.agentId },
        { event: 'taken', by: { type: 'agent', userId: a.agentId } },
        { event: 'resolved', by: { type: 'agent', userId: a.agentId }, from: a.agentId },
        { event: 'ticket_created', by: expect.objectContaining({ type: 'api' }), ticketId: ticket.body.ticketId, subject: 'Late parcel' },
      ]);
      expect(sys[2]!.content.text).toBe(`Transferred from agent ${a.adminId} to agent ${a.agentId}`);
      // The customer writes again: a new session, opened by a `reopened` entry before the message.
      await post(`/v1/sandbox/channels/${a.channelId}/customers/${aeid.split(':')[0]}/messages`, a.adminKey, { text: 'Still nothing', profileName: 'Cleo' });
      const reopened = await eventually(async () => {
        const d = await detail(aeid);
        return d.sessionId !== first.sessionId && d.messages.length >= 2 ? d : null;
      });
      expect(timeline(reopened.messages)).toEqual(['system:reopened', 'contact:Still nothing']);
      expect(reopened.messages[0]!.system).toEqual({ event: 'reopened', by: { type: 'contact' } });
      expect(reopened.unreadCount).toBe(1);
      // Exactly once each, and none of it on the customer's phone.
      expect(new Set(entries.map((m) => m._id)).size).toBe(entries.length);
      const shown = await phoneOf(a, aeid);
      expect(shown).toContain('Looking into it');
      for (const m of [...sys, reopened.messages[0]!]) expect(shown).not.toContain(m.content.text!);
      // Another organization sees none of it.
      expect((await svc.call('GET', `/v1/sessions/${first.sessionId}/messages`, { key: b.adminKey })).status).toBe(404);
      expect((await svc.call('GET', `/v1/conversations/${aeid}`, { key: b.adminKey })).status).toBe(404);
    });

    it('keeps private notes for agents: in their timeline and events, never in the customer-facing history or on the phone', async () => {
      const aeid = await write(a, 'Can I return this?');
      const r = await post(`/v1/conversations/${aeid}/notes`, a.agentKey, { text: 'Customer is a reseller, check the contract' });
      expect(r.status).toBe(201);
      expect(r.body.note).toMatchObject({ sender: 'agent', direction: 'internal', note: true, agentId: a.agentId, content: { type: 'text', text: 'Customer is a reseller, check the contract' }, messageId: null });
      const d = await detail(aeid);
      expect(timeline(d.messages)).toEqual(['contact:Can I return this?', 'note:Customer is a reseller, check the contract']);
      expect(d.unreadCount).toBe(1);
      expect(timeline(await history(d.sessionId))).toEqual(['contact:Can I return this?']);
      expect(timeline(await history(d.sessionId, '?include=notes'))).toEqual(['contact:Can I return this?', 'note:Customer is a reseller, check the contract']);
      // Asking for notes needs inbox:read; a bot's key without it gets the refusal, not the notes.
      const botKey = await a.keyWith(['conversation:handover:request']);
      expect((await svc.call('GET', `/v1/sessions/${d.sessionId}/messages?include=notes`, { key: botKey })).status).toBe(403);
      expect(timeline(await history(d.sessionId, '', botKey))).toEqual(['contact:Can I return this?']);
      const ev = await eventually(async () => events.find((e) => e.type === 'conversation.note_added' && (e.data as { audienceExternalId: string }).audienceExternalId === aeid));
      expect(ev).toMatchObject({ organizationId: a.id, data: { audienceExternalId: aeid, sessionId: d.sessionId, messageId: r.body.note._id, agentId: a.agentId, text: 'Customer is a reseller, check the contract' } });
      expect(await phoneOf(a, aeid)).not.toContain('reseller');
      // A retry with the same key leaves one note.
      const again = async () => svc.call('POST', `/v1/conversations/${aeid}/notes`, { key: a.agentKey, body: { text: 'once' }, headers: { 'idempotency-key': 'note-1' } });
      const [n1, n2] = [await again(), await again()];
      expect(n1.status).toBe(201);
      expect(n2.body.note._id).toBe(n1.body.note._id);
      expect(timeline((await detail(aeid)).messages).filter((t) => t === 'note:once')).toHaveLength(1);
    });

    it('refuses notes across organizations, without the scope, with bad input, and before any conversation', async () => {
      const aeid = await write(a, 'Hello');
      expect((await post(`/v1/conversations/${aeid}/notes`, b.adminKey, { text: 'sneaky' })).status).toBe(404);
      const readOnly = await a.keyWith(['inbox:read']);
      const scoped = await post(`/v1/conversations/${aeid}/notes`, readOnly, { text: 'x' });
      expect(scoped.status).toBe(403);
      expect(scoped.body.error.code).toBe('insufficient_scope');
      for (const body of [{}, { text: '' }, { text: '   ' }, { text: 'x'.repeat(4097) }, { text: 'x', extra: 1 }, { text: 5 }]) {
        const bad = await post(`/v1/conversations/${aeid}/notes`, a.adminKey, body);
        expect(bad.status, JSON.stringify(body)).toBe(400);
        expect(bad.body.error.code).toBe('validation_failed');
      }
      expect(timeline((await detail(aeid)).messages)).toEqual(['contact:Hello']);
      // A contact nobody has written with yet has no conversation to note on.
      const c = await a.contact(`${phone++}:${a.phoneNumberId}`);
      const none = await post(`/v1/conversations/${c.audienceExternalId}/notes`, a.adminKey, { text: 'x' });
      expect(none.status).toBe(409);
      expect(none.body.error.code).toBe('no_conversation');
      // B never saw A's note events.
      expect(events.filter((e) => e.type === 'conversation.note_added' && e.organizationId === b.id)).toEqual([]);
    });

    it('moves a bot conversation to the queue (the handover command and event), takes it, and keeps the bot out meanwhile', async () => {
      const aeid = await write(a, 'Talk to a person please');
      const queued = await post(`/v1/conversations/${aeid}/queue`, a.agentKey);
      expect(queued.status).toBe(200);
      expect(queued.body.conversation).toMatchObject({ status: 'queued', assigneeId: null });
      const ev = await eventually(async () => events.find((e) => e.type === 'handover.requested' && (e.data as { audienceExternalId: string }).audienceExternalId === aeid));
      expect(ev.data).toMatchObject({ requestedBy: { type: 'api', userId: a.agentId } });
      const again = await post(`/v1/conversations/${aeid}/queue`, a.agentKey);
      expect([again.status, again.body.error.code]).toEqual([409, 'already_queued']);
      expect((await post(`/v1/conversations/${aeid}/take`, a.agentKey)).body.conversation).toMatchObject({ status: 'assigned', assigneeId: a.agentId });
      const held = await post(`/v1/conversations/${aeid}/queue`, a.adminKey);
      expect([held.status, held.body.error.code]).toEqual([409, 'with_agent']);
      // The bot is refused while the agent holds it.
      const bot = await post('/v1/messages/text', a.adminKey, { channelId: a.channelId, to: aeid.split(':')[0], text: { body: 'bot here' } });
      expect([bot.status, bot.body.error.code]).toEqual([409, 'conversation_with_agent']);
      // A bot conversation can also be taken directly.
      const direct = await write(a, 'Another question');
      expect((await post(`/v1/conversations/${direct}/take`, a.agentKey)).body.conversation).toMatchObject({ status: 'assigned', assigneeId: a.agentId });
      expect(timeline((await detail(direct)).messages)).toEqual(['contact:Another question', 'system:taken']);
      expect(timeline((await detail(aeid)).messages)).toEqual(['contact:Talk to a person please', 'system:handover_requested', 'system:taken']);
      // Another organization cannot queue it; a key without inbox:write cannot either.
      expect((await post(`/v1/conversations/${direct}/queue`, b.adminKey)).status).toBe(404);
      expect((await post(`/v1/conversations/${direct}/queue`, await a.keyWith(['inbox:read']))).status).toBe(403);
    });

    it("writes the queueing by the channel's routing as a handover requested by automation, after the message", async () => {
      const routing = (firstResponder: string) => svc.call('PATCH', `/v1/channels/${a.channelId}`, { key: a.adminKey, body: { routing: { firstResponder } } });
      expect((await routing('agents')).status).toBe(200);
      try {
        const aeid = await write(a, 'Hi, anyone there?');
        const d = await eventually(async () => {
          const c = await detail(aeid);
          return c.messages.length >= 2 ? c : null;
        });
        expect(timeline(d.messages)).toEqual(['contact:Hi, anyone there?', 'system:handover_requested']);
        expect(d.messages[1]).toMatchObject({ system: { event: 'handover_requested', by: { type: 'automation' }, reason: 'first_responder' }, content: { text: 'Handover requested by an automation' } });
      } finally {
        expect((await routing('bot')).status).toBe(200);
      }
    });
  });
}

timelineSuite('embedded', () => startMessagingService());

describe('clustered', () => {
  const servers = useClusterServers();
  timelineSuite('clustered', () => startMessagingService({ env: { ...servers.env(`tl${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true' } }));
});
