import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ManualClock } from '../../src/clock.js';
import { orderUpdate, useTwoOrgs, type MessagingOrg } from '../messaging/messaging-helpers.js';
import { call, errorText, MCP_HEADERS, mcpClient, rawPost, structured } from './helpers.js';

const HOUR = 3600_000;
const ids = (h: { messages: { _id: string; content: unknown }[] }) => h.messages.map((m) => [m._id, m.content]);

/**
 * The conversation tools against the whole embedded stack: the sandbox chat
 * network, the conversation actors, the messaging and handover services. The
 * REST twins are called beside them to show they follow the same rules.
 */
describe('MCP platform tools: handover, history and sends', () => {
  const clock = new ManualClock(Date.now());
  const orgs = useTwoOrgs({ clock });
  const { customer: customerWrites } = orgs;
  let ca: Client;
  let cb: Client;
  let url: string;

  beforeAll(async () => {
    url = `${orgs.svc.running.mcpUrl}/mcp/platform`;
    ca = await mcpClient(url, orgs.a.adminKey);
    cb = await mcpClient(url, orgs.b.adminKey);
  }, 60_000);
  afterAll(async () => {
    await ca?.close();
    await cb?.close();
  });

  /** A template send opens the contact and its conversation; returns the contact's audienceExternalId. */
  const openContact = async (org: MessagingOrg, phone: string) => {
    const r = await orgs.svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, phone) });
    expect(r.status).toBe(201);
    return `${phone}:${org.phoneNumberId}`;
  };
  const text = (org: MessagingOrg, to: string, body: string) => ({ channelId: org.channelId, to, text: { body } });

  it('lists all the platform tools', async () => {
    const names = (await ca.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(
      [
        'create_ticket',
        'comment_on_ticket',
        'get_conversation_history',
        'get_ticket',
        'list_tickets',
        'request_handover',
        'send_buttons_message',
        'send_media_message',
        'send_location_message',
        'send_contacts_message',
        'send_reaction',
        'send_text_message',
        'send_template_message',
        'list_channels',
        'update_ticket',
        'list_conversations',
        'take_conversation',
        'reply_in_conversation',
        'hand_back_conversation',
      ].sort(),
    );
  });

  it('goes from a ticket to its conversation: list_channels, then a template and a text by the ticket\'s audienceExternalId', async () => {
    const to = '4915200000031';
    const aeid = await openContact(orgs.a, to);
    const ticket = structured(await call(ca, 'create_ticket', { subject: 'Where is it', description: 'd', audienceExternalId: aeid }));
    expect(ticket.audienceExternalId).toBe(aeid);
    const { channels } = structured(await call(ca, 'list_channels'));
    expect(channels.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining([orgs.a.channelId, orgs.a.webChannelId]));
    expect(channels.find((c: { id: string }) => c.id === orgs.a.channelId)).toMatchObject({ kind: 'whatsapp_cloud', phoneNumberId: orgs.a.phoneNumberId });
    expect(channels.map((c: { id: string }) => c.id)).not.toContain(orgs.b.channelId);
    // Outside the window the error names the tool that works.
    expect(errorText(await call(ca, 'send_text_message', { audienceExternalId: ticket.audienceExternalId, text: { body: 'Hi' } }))).toContain('send_template_message');
    const tpl = structured(await call(ca, 'send_template_message', { audienceExternalId: ticket.audienceExternalId, template: orderUpdate(orgs.a.channelId, to).template }));
    expect(tpl).toMatchObject({ success: true, messageId: expect.stringMatching(/^wamid\./) });
    await customerWrites(orgs.a, to, 'ok');
    expect(structured(await call(ca, 'send_text_message', { audienceExternalId: aeid, text: { body: 'On its way' } })).success).toBe(true);
    // Another organization's contact is not reachable this way.
    expect(errorText(await call(cb, 'send_template_message', { audienceExternalId: aeid, template: orderUpdate(orgs.a.channelId, to).template }))).toContain('list_channels');
  });

  it('sends text, buttons and media inside the window, refuses them outside it with a model-actionable error, like the REST twins', async () => {
    const to = '4915200000001';
    const aeid = await openContact(orgs.a, to);

    // Nobody wrote yet: outside the window. Tool error says to send a template; REST says 422.
    const early = await call(ca, 'send_text_message', text(orgs.a, to, 'Hello!'));
    expect(errorText(early)).toContain('outside_customer_service_window');
    expect(errorText(early)).toMatch(/template/);
    const earlyRest = await orgs.svc.call('POST', '/v1/messages/text', { key: orgs.a.adminKey, body: text(orgs.a, to, 'Hello!') });
    expect(earlyRest.status).toBe(422);
    expect(earlyRest.body.error.code).toBe('outside_customer_service_window');

    expect((await customerWrites(orgs.a, to, 'Where is my parcel?')).status).toBe(201);

    const sent = structured(await call(ca, 'send_text_message', { ...text(orgs.a, to, 'It ships today.'), idempotencyKey: 'reply-1' }));
    expect(sent).toEqual({ success: true, messageId: expect.stringMatching(/^wamid\./) });
    // A retry with the same key is the same send, not a second message.
    expect(structured(await call(ca, 'send_text_message', { ...text(orgs.a, to, 'It ships today.'), idempotencyKey: 'reply-1' }))).toEqual(sent);
    const restText = await orgs.svc.call('POST', '/v1/messages/text', { key: orgs.a.adminKey, body: text(orgs.a, to, 'Sent through REST') });
    expect(restText.status).toBe(200);
    expect(restText.body).toEqual({ success: true, messageId: expect.stringMatching(/^wamid\./) });

    const buttons = structured(
      await call(ca, 'send_buttons_message', {
        channelId: orgs.a.channelId,
        to,
        interactive: { body: { text: 'Anything else?' }, buttons: [{ id: 'yes', title: 'Yes' }, { id: 'no', title: 'No' }] },
      }),
    );
    expect(buttons.success).toBe(true);
    const media = structured(
      await call(ca, 'send_media_message', { channelId: orgs.a.channelId, to, media: { type: 'document', document: { link: 'https://example.com/invoice.pdf', filename: 'invoice.pdf' } } }),
    );
    expect(media.success).toBe(true);

    // History by contact (latest session) and by session id: the same messages, in order.
    const byContact = structured(await call(ca, 'get_conversation_history', { audienceExternalId: aeid }));
    expect(byContact.sessionId).toEqual(expect.any(String));
    const kinds = byContact.messages.map((m: { sender: string; content: { type: string } }) => `${m.sender}:${m.content.type}`);
    expect(kinds).toEqual(['bot:template', 'contact:text', 'bot:text', 'bot:text', 'bot:interactive', 'bot:document']);
    expect(byContact.messages[2]).toMatchObject({ content: { type: 'text', text: 'It ships today.' }, messageId: sent.messageId });
    expect(byContact.messages[1]).not.toHaveProperty('organizationId');
    const bySession = structured(await call(ca, 'get_conversation_history', { sessionId: byContact.sessionId }));
    // (Statuses move on asynchronously as the sandbox reports sent / delivered / read.)
    expect(ids(bySession)).toEqual(ids(byContact));
    expect(bySession.sessionId).toBe(byContact.sessionId);
    const rest = await orgs.svc.call('GET', `/v1/sessions/${byContact.sessionId}/messages`, { key: orgs.a.adminKey });
    expect(rest.body.map((m: { _id: string }) => m._id)).toEqual(byContact.messages.map((m: { _id: string }) => m._id));

    // 24 hours after the customer's last message the window is closed again.
    clock.advance(24 * HOUR + 1000);
    expect(errorText(await call(ca, 'send_text_message', text(orgs.a, to, 'Still there?')))).toContain('outside_customer_service_window');
    expect((await orgs.svc.call('POST', '/v1/messages/text', { key: orgs.a.adminKey, body: text(orgs.a, to, 'Still there?') })).status).toBe(422);
  });

  it('hands a conversation to a human; then sends are refused (409 on REST) until it is handed back', async () => {
    const to = '4915200000002';
    const aeid = await openContact(orgs.a, to);
    await customerWrites(orgs.a, to, 'I want a human');

    const first = structured(await call(ca, 'request_handover', { audienceExternalId: aeid }));
    expect(first).toEqual({ success: true, status: 'queued', sessionId: expect.any(String) });
    const again = structured(await call(ca, 'request_handover', { audienceExternalId: aeid }));
    expect(again).toEqual({ success: false, reason: 'already_queued', status: 'queued', sessionId: first.sessionId });

    const refused = await call(ca, 'send_text_message', text(orgs.a, to, 'bot here'));
    expect(errorText(refused)).toContain('conversation_with_agent');
    expect(errorText(refused)).toMatch(/human agent/);
    const restRefused = await orgs.svc.call('POST', '/v1/messages/text', { key: orgs.a.adminKey, body: text(orgs.a, to, 'bot here') });
    expect(restRefused.status).toBe(409);
    expect(restRefused.body.error.code).toBe('conversation_with_agent');

    expect((await orgs.svc.call('PATCH', '/v1/handover/open', { key: orgs.a.adminKey, body: { audienceExternalId: aeid } })).body).toEqual({ success: true });
    expect(structured(await call(ca, 'send_text_message', text(orgs.a, to, 'bot is back'))).success).toBe(true);
  });

  it('reads an empty history for a contact whose conversation has no message yet', async () => {
    const contact = await orgs.a.contact('4915200000009:777');
    const r = structured(await call(ca, 'get_conversation_history', { audienceExternalId: contact.audienceExternalId }));
    expect(r).toEqual({ sessionId: null, messages: [] });
    // A handover opens a conversation; it has no message yet, only the system entry of the handover, which names the bot.
    structured(await call(ca, 'request_handover', { audienceExternalId: contact.audienceExternalId }));
    const after = structured(await call(ca, 'get_conversation_history', { audienceExternalId: contact.audienceExternalId }));
    expect(after).toEqual({
      sessionId: expect.any(String),
      messages: [expect.objectContaining({ sender: 'system', direction: 'internal', system: { event: 'handover_requested', by: expect.objectContaining({ type: 'bot' }) } })],
    });
  });

  it('answers success: false for a channel that is not on the chat network', async () => {
    expect(structured(await call(ca, 'send_text_message', { channelId: orgs.a.webChannelId, to: '4915200000003', text: { body: 'hi' } }))).toEqual({ success: false });
  });

  it('reports unknown contacts, sessions and channels as tool errors', async () => {
    expect(errorText(await call(ca, 'request_handover', { audienceExternalId: '4900000000000:1' }))).toMatch(/not_found/);
    expect(errorText(await call(ca, 'get_conversation_history', { audienceExternalId: '4900000000000:1' }))).toMatch(/not_found/);
    expect(errorText(await call(ca, 'get_conversation_history', { sessionId: 'no-such-session' }))).toMatch(/not_found/);
    expect(errorText(await call(ca, 'send_text_message', { channelId: 'nope', to: '4915200000003', text: { body: 'hi' } }))).toMatch(/channel_not_found/);
  });

  it('reaches a customer who hides their number by BSUID, by `to` or by their BSUID-form audienceExternalId; another organization cannot', async () => {
    const made = await orgs.svc.call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers`, { key: orgs.a.adminKey, body: { username: 'mcp.quiet', hidePhone: true } });
    const userId = made.body.customer.userId as string;
    expect((await orgs.svc.call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${userId}/messages`, { key: orgs.a.adminKey, body: { text: 'hello from a hidden number' } })).status).toBe(201);
    const aeid = `${userId}:${orgs.a.phoneNumberId}`;
    expect(structured(await call(ca, 'send_text_message', text(orgs.a, userId, 'Hi, by BSUID'))).success).toBe(true);
    expect(structured(await call(ca, 'send_text_message', { audienceExternalId: aeid, text: { body: 'Hi again' } })).success).toBe(true);
    const h = structured(await call(ca, 'get_conversation_history', { audienceExternalId: aeid }));
    expect(h.messages.map((m: { content: { text?: string } }) => m.content.text)).toEqual(['hello from a hidden number', 'Hi, by BSUID', 'Hi again']);
    expect(errorText(await call(cb, 'get_conversation_history', { audienceExternalId: aeid }))).toMatch(/not found|no such/i);
  });

  it('reports each missing scope as a tool error naming it', async () => {
    const c = await mcpClient(url, await orgs.a.keyWith(['mcp:access', 'tickets:read']));
    const aeid = await openContact(orgs.a, '4915200000004');
    const cases: [string, Record<string, unknown>, string][] = [
      ['request_handover', { audienceExternalId: aeid }, 'conversation:handover:request'],
      ['get_conversation_history', { audienceExternalId: aeid }, 'conversation:handover:request'],
      ['send_text_message', text(orgs.a, '4915200000004', 'x'), 'message:send'],
      ['send_buttons_message', { channelId: orgs.a.channelId, to: '4915200000004', interactive: { body: { text: 'x' }, buttons: [{ id: 'a', title: 'A' }] } }, 'message:send'],
      ['send_media_message', { channelId: orgs.a.channelId, to: '4915200000004', media: { type: 'image', image: { link: 'https://example.com/a.png' } } }, 'message:send'],
    ];
    for (const [tool, args, scope] of cases) {
      const r = await call(c, tool, args);
      expect(errorText(r), tool).toContain(`lacks the scope ${scope}`);
    }
    // Nothing was handed over by the refused call.
    expect(structured(await call(ca, 'request_handover', { audienceExternalId: aeid })).success).toBe(true);
    await c.close();
  });

  it('refuses invalid arguments as tool errors the model can correct', async () => {
    const auth = { ...MCP_HEADERS, authorization: `Bearer ${orgs.a.adminKey}` };
    const bad = [
      { name: 'send_buttons_message', arguments: { channelId: orgs.a.channelId, to: '4915200000005', interactive: { body: { text: 'x' }, buttons: [1, 2, 3, 4].map((i) => ({ id: `b${i}`, title: `B${i}` })) } } },
      { name: 'send_text_message', arguments: { channelId: orgs.a.channelId, to: '+49 151', text: { body: 'x' } } },
      { name: 'send_media_message', arguments: { channelId: orgs.a.channelId, to: '4915200000005', media: { type: 'image', video: { link: 'https://example.com/v.mp4' } } } },
      { name: 'get_conversation_history', arguments: { sessionId: 's', audienceExternalId: '4915100000001:2' } },
      { name: 'get_conversation_history', arguments: {} },
    ];
    for (const params of bad) {
      const r = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }), auth);
      expect(r.json.result?.isError, JSON.stringify(params)).toBe(true);
    }
  });

  it('POST /v1/messages/text validates like its siblings: 401, 403, 400 with the failing fields', async () => {
    const body = text(orgs.a, '4915200000008', 'hi');
    expect((await orgs.svc.call('POST', '/v1/messages/text', { body })).status).toBe(401);
    const noScope = await orgs.svc.call('POST', '/v1/messages/text', { key: await orgs.a.keyWith(['tickets:read']), body });
    expect(noScope.status).toBe(403);
    expect(noScope.body.error.details).toEqual({ requiredScope: 'message:send' });
    for (const bad of [{ ...body, text: { body: '' } }, { ...body, to: '+4915200000008' }, { ...body, text: { body: 'x'.repeat(4097) } }, { channelId: orgs.a.channelId }]) {
      const r = await orgs.svc.call('POST', '/v1/messages/text', { key: orgs.a.adminKey, body: bad });
      expect(r.status, JSON.stringify(bad).slice(0, 80)).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
    }
    expect((await orgs.svc.call('POST', '/v1/messages/text', { key: orgs.a.adminKey, rawBody: '{"channelId": ' })).status).toBe(400);
  });

  describe('cross-organization isolation', () => {
    it("a key of organization B cannot read, hand over or message organization A's conversations", async () => {
      const to = '4915200000006';
      const aeid = await openContact(orgs.a, to);
      await customerWrites(orgs.a, to, 'private to A');
      const history = structured(await call(ca, 'get_conversation_history', { audienceExternalId: aeid }));

      expect(errorText(await call(cb, 'get_conversation_history', { sessionId: history.sessionId }))).toMatch(/not_found/);
      expect(errorText(await call(cb, 'get_conversation_history', { audienceExternalId: aeid }))).toMatch(/not_found/);
      expect(errorText(await call(cb, 'request_handover', { audienceExternalId: aeid }))).toMatch(/not_found/);
      expect(errorText(await call(cb, 'send_text_message', text(orgs.a, to, 'from B')))).toMatch(/channel_not_found/);
      const restB = await orgs.svc.call('POST', '/v1/messages/text', { key: orgs.b.adminKey, body: text(orgs.a, to, 'from B') });
      expect(restB.status).toBe(404);
      expect(restB.body.error.code).toBe('channel_not_found');
      expect(errorText(await call(cb, 'send_buttons_message', { channelId: orgs.a.channelId, to, interactive: { body: { text: 'B' }, buttons: [{ id: 'x', title: 'X' }] } }))).toMatch(/channel_not_found/);
      expect(errorText(await call(cb, 'send_media_message', { channelId: orgs.a.channelId, to, media: { type: 'image', image: { link: 'https://example.com/b.png' } } }))).toMatch(/channel_not_found/);

      // A's conversation is untouched: still with the bot, no message from B.
      const after = structured(await call(ca, 'get_conversation_history', { audienceExternalId: aeid }));
      expect(ids(after)).toEqual(ids(history));
      expect(after.messages.map((m: { content: { text?: string } }) => m.content.text)).not.toContain('from B');
      expect(structured(await call(ca, 'request_handover', { audienceExternalId: aeid })).success).toBe(true);
    });

    it("B's own conversation with the same phone number is B's, not A's", async () => {
      const to = '4915200000007';
      const aeidA = await openContact(orgs.a, to);
      await customerWrites(orgs.a, to, 'hello A');
      const aeidB = await openContact(orgs.b, to);
      expect(aeidB).not.toBe(aeidA);
      const hb = structured(await call(cb, 'get_conversation_history', { audienceExternalId: aeidB }));
      expect(hb.messages.map((m: { content: { type: string } }) => m.content.type)).toEqual(['template']);
    });
  });
});
