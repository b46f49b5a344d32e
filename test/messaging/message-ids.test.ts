import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { MESSAGE_ID_PATTERN } from '../../src/domain/message-id.js';
import { eventually, messagingOrg, orderUpdate, startMessagingService, type MessagingOrg } from './messaging-helpers.js';

/** One id scheme for every stored message, whoever sent it; the network's id kept apart. */
describe('stored message ids', () => {
  let svc: TestService;
  let org: MessagingOrg;
  beforeAll(async () => {
    svc = await startMessagingService();
    org = await messagingOrg(svc, 'Ids', 100);
  });
  afterAll(() => svc?.close());

  it('every stored message (template, keyed and not; inbound; bot text; agent reply) has a msg_ id, and the wamid only as messageId', async () => {
    const phone = '4915900000301';
    const aeid = `${phone}:${org.phoneNumberId}`;
    const send = (path: string, body: unknown, headers: Record<string, string> = {}) => svc.call('POST', path, { key: org.adminKey, body, headers });
    expect((await send('/v2/wa/template', orderUpdate(org.channelId, phone))).status).toBe(201);
    expect((await send('/v2/wa/template', orderUpdate(org.channelId, phone, ['Bo', 'B-2', 'Tuesday']), { 'Idempotency-Key': 'ids-keyed-1' })).status).toBe(201);
    expect((await svc.call('POST', `/v1/sandbox/channels/${org.channelId}/customers/${phone}/messages`, { key: org.adminKey, body: { text: 'Hello?', profileName: 'Ann' } })).status).toBeLessThan(300);
    // The inbound message is stored by its actor: wait for it before the window-bound sends.
    const sessionId = await eventually(async () => {
      const c = await svc.call('GET', `/v1/conversations/${encodeURIComponent(aeid)}`, { key: org.adminKey });
      return c.body.conversation?.messages?.some((m: { direction: string }) => m.direction === 'inbound') ? (c.body.conversation.sessionId as string) : undefined;
    });
    expect((await send('/v1/messages/text', { channelId: org.channelId, to: phone, text: { body: 'A bot answer' } })).status).toBe(200);
    expect((await send(`/v1/conversations/${encodeURIComponent(aeid)}/take`, undefined)).status).toBe(200);
    expect((await send(`/v1/conversations/${encodeURIComponent(aeid)}/reply`, { type: 'text', text: 'An agent answer' })).status).toBe(200);

    const messages: { _id: string; messageId: string | null; sender: string; direction: string }[] = (await svc.call('GET', `/v1/sessions/${sessionId}/messages`, { key: org.adminKey })).body;
    expect(messages.map((m) => `${m.direction}/${m.sender}`)).toEqual(['outbound/bot', 'outbound/bot', 'inbound/contact', 'outbound/bot', 'internal/system', 'outbound/agent']);
    for (const m of messages) {
      expect(m._id).toMatch(MESSAGE_ID_PATTERN);
      // A system entry (the take) never went to the network.
      if (m.direction === 'internal') expect(m.messageId).toBeNull();
      else expect(m.messageId).toMatch(/^wamid\./);
    }
    expect(new Set(messages.map((m) => m._id)).size).toBe(messages.length);
  });
});
