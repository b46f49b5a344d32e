import { describe, expect, it } from 'vitest';
import { parseWebhook } from '../../src/network/inbound.js';
import { aliveGraphVersions, graphVersionExpired, splitGraphBase } from '../../src/network/graph-versions.js';
import { signHubSignature } from '../../src/network/signature.js';
import type { WhatsAppChannel } from '../../src/store/channels/port.js';
import { eventually, orderUpdate, useTwoOrgs } from './messaging-helpers.js';

const BSUID = 'US.13491208655302741918';
const PN = '106540352242922';

/** A `messages` webhook in Meta's shape, for a customer with a phone and a BSUID, or a BSUID alone. */
function webhook(message: Record<string, unknown>, who: { phone?: string; userId: string; username?: string }, withContacts = true) {
  const contact: Record<string, unknown> = { profile: { name: 'Ann', ...(who.username === undefined ? {} : { username: who.username }) }, user_id: who.userId };
  if (who.phone !== undefined) contact.wa_id = who.phone;
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550001111', phone_number_id: PN },
              ...(withContacts ? { contacts: [contact] } : {}),
              messages: [{ ...(who.phone === undefined ? {} : { from: who.phone }), from_user_id: who.userId, id: 'wamid.1', timestamp: '1767225600', ...message }],
            },
          },
        ],
      },
    ],
  };
}

const MESSAGE_TYPES: Record<string, Record<string, unknown>> = {
  text: { type: 'text', text: { body: 'hi' } },
  image: { type: 'image', image: { id: '1234', mime_type: 'image/jpeg', sha256: 'x' } },
  video: { type: 'video', video: { id: '1235', mime_type: 'video/mp4' } },
  audio: { type: 'audio', audio: { id: '1236', mime_type: 'audio/ogg' } },
  document: { type: 'document', document: { id: '1237', mime_type: 'application/pdf', filename: 'a.pdf' } },
  sticker: { type: 'sticker', sticker: { id: '1238', mime_type: 'image/webp' } },
  button: { type: 'button', button: { payload: 'track', text: 'Track my order' }, context: { from: '15550001111', id: 'wamid.out' } },
  button_reply: { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } } },
  list_reply: { type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'r1', title: 'Row 1' } } },
  reaction: { type: 'reaction', reaction: { message_id: 'wamid.out', emoji: '👍' } },
  location: { type: 'location', location: { latitude: 52.5, longitude: 13.4, name: 'Office' } },
  contacts: { type: 'contacts', contacts: [{ name: { formatted_name: 'Bob' }, phones: [{ phone: '+4915100000009' }] }] },
  unsupported: { type: 'unsupported', errors: [{ code: 131051, title: 'Message type unknown' }] },
};

describe('who a customer is: business-scoped user ids on every inbound path', () => {
  for (const [name, message] of Object.entries(MESSAGE_TYPES)) {
    it(`${name}: read with a BSUID only (no from, no wa_id) and with phone and BSUID, never skipped`, () => {
      const only = parseWebhook(webhook(message, { userId: BSUID, username: 'ann.lee' }));
      expect(only.ok).toBe(true);
      if (!only.ok) return;
      expect(only.value.skipped).toEqual([]);
      expect(only.value.events).toHaveLength(1);
      expect(only.value.events[0]).toMatchObject({ kind: 'message', customer: { userId: BSUID, username: 'ann.lee' } });
      expect((only.value.events[0] as { from?: string }).from).toBeUndefined();
      const both = parseWebhook(webhook(message, { phone: '4915112345678', userId: BSUID }));
      expect(both.ok && both.value.events[0]).toMatchObject({ from: '4915112345678', customer: { phone: '4915112345678', userId: BSUID } });
    });
  }

  it('system messages (no contacts array): a new number and a new BSUID are read as identity changes of the person', () => {
    const number = parseWebhook(
      webhook({ type: 'system', system: { body: 'User Ann changed from 4915112345678 to 4915199999999', wa_id: '4915199999999', type: 'user_changed_number', user_id: 'US.2', previous_user_id: BSUID } }, { phone: '4915112345678', userId: BSUID }, false),
    );
    expect(number.ok && number.value.skipped).toEqual([]);
    expect(number.ok && number.value.events[0]).toMatchObject({ customer: { phone: '4915112345678', userId: BSUID }, identityChange: { kind: 'user_changed_number', phone: '4915199999999', userId: 'US.2', previousUserId: BSUID } });
    const raw = webhook({ type: 'system', system: { body: 'BSUID changed', type: 'user_changed_user_id', user_id: 'US.3', previous_user_id: BSUID } }, { userId: BSUID }, false);
    delete (raw.entry[0]!.changes[0]!.value.messages[0] as Record<string, unknown>).from_user_id;
    const id = parseWebhook(raw);
    expect(id.ok && id.value.events[0]).toMatchObject({ customer: { userId: BSUID }, identityChange: { kind: 'user_changed_user_id', userId: 'US.3' } });
  });

  it('only what is not a customer message is skipped: a message with neither a phone nor a BSUID', () => {
    const raw = webhook({ type: 'text', text: { body: 'x' } }, { userId: BSUID }, false);
    delete (raw.entry[0]!.changes[0]!.value.messages[0] as Record<string, unknown>).from_user_id;
    const r = parseWebhook(raw);
    expect(r.ok && r.value.events).toEqual([]);
    expect(r.ok && r.value.skipped[0]).toMatch(/no sender/);
  });

  it('statuses carry the recipient BSUID', () => {
    const body = {
      object: 'whatsapp_business_account',
      entry: [{ id: 'w', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: PN }, statuses: [{ id: 'wamid.s', status: 'delivered', timestamp: '1767225600', recipient_user_id: BSUID }] } }] }],
    };
    const r = parseWebhook(body);
    expect(r.ok && r.value.events[0]).toMatchObject({ kind: 'status', recipientUserId: BSUID });
  });
});

describe('the Graph API version', () => {
  it('splits a base into host and version; Meta serves an expired version with the oldest one alive', () => {
    expect(splitGraphBase('https://graph.facebook.com')).toEqual({ host: 'https://graph.facebook.com', version: null });
    expect(splitGraphBase('https://graph.facebook.com/v21.0/')).toEqual({ host: 'https://graph.facebook.com', version: 'v21.0' });
    expect(graphVersionExpired('v21.0', new Date('2027-01-20T12:00:00Z'))).toBe(false);
    expect(graphVersionExpired('v21.0', new Date('2027-01-21T00:00:00Z'))).toBe(true);
    expect(aliveGraphVersions(new Date('2027-02-01T00:00:00Z'))[0]!.version).toBe('v22.0');
  });
});

describe('one contact per person, in the embedded service', () => {
  const orgs = useTwoOrgs({ env: { TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000' } });
  const call = (method: string, path: string, body?: unknown, key = orgs.a.adminKey) => orgs.svc.call(method, path, { key, body });

  it('a template to a phone, a reply with phone and BSUID, then a BSUID-only message: one contact, one conversation', async () => {
    const phone = '4915120000001';
    const sent = await call('POST', '/v2/wa/template', orderUpdate(orgs.a.channelId, phone));
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    expect((await orgs.customer(orgs.a, phone, 'thanks')).status).toBe(201);
    const aeid = orgs.aeid(orgs.a, phone);
    const first = await eventually(async () => (await call('GET', `/v1/conversations/${aeid}`)).body.conversation);
    expect(first).toMatchObject({ audienceExternalId: aeid, phone, userId: expect.stringMatching(/^US\.\d{20}$/) });
    const userId = first.userId as string;
    // The same person adopts a username and hides their number: their messages carry only the BSUID.
    const hidden = await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers`, { phone, username: 'kim.h', hidePhone: true });
    expect(hidden.status, JSON.stringify(hidden.body)).toBe(201);
    expect(hidden.body.customer).toEqual({ userId, username: 'kim.h', phone, hidePhone: true });
    expect((await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${userId}/messages`, { text: 'it is me again' })).status).toBe(201);
    const history = await eventually(async () => {
      const r = await call('GET', `/v1/sessions/${first.sessionId}/messages`);
      return Array.isArray(r.body) && r.body.length === 3 ? r.body : null;
    });
    expect(history.map((m: { sender: string }) => m.sender)).toEqual(['bot', 'contact', 'contact']);
    // Either id reaches the same contact and conversation; responses name the canonical id.
    const byAlias = await call('GET', `/v1/contacts/${userId}:${orgs.a.phoneNumberId}`);
    expect(byAlias.status).toBe(200);
    expect(byAlias.body.contact).toMatchObject({ audienceExternalId: aeid, phone, userId, username: 'kim.h' });
    const list = await call('GET', '/v1/conversations?view=all');
    expect(list.body.conversations.filter((c: { userId: string | null }) => c.userId === userId)).toHaveLength(1);
    // A reply by BSUID reaches the same conversation.
    const reply = await call('POST', '/v1/messages/text', { channelId: orgs.a.channelId, to: userId, text: { body: 'hello again' } });
    expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(300);
    expect((await call('GET', `/v1/sessions/${first.sessionId}/messages`)).body).toHaveLength(4);
  });

  it('a customer first seen without a phone: named <BSUID>:<phone number id>, phone null; replies go by BSUID; an authentication template is refused with 422', async () => {
    const made = await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers`, { username: 'no.number', hidePhone: true, profileName: 'Noa' });
    expect(made.status).toBe(201);
    const userId = made.body.customer.userId as string;
    expect(made.body.customer.phone).toBeNull();
    expect((await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${userId}/messages`, { text: 'hi, no number here' })).status).toBe(201);
    const aeid = `${userId}:${orgs.a.phoneNumberId}`;
    const conv = await eventually(async () => (await call('GET', `/v1/conversations/${aeid}`)).body.conversation);
    expect(conv).toMatchObject({ audienceExternalId: aeid, phone: null, userId, username: 'no.number', contactName: 'Noa' });
    const reply = await call('POST', '/v1/messages/text', { audienceExternalId: aeid, text: { body: 'how can we help?' } });
    expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(300);
    const phoneView = await call('GET', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${userId}/messages`);
    expect(phoneView.status).toBe(200);
    expect(JSON.stringify(phoneView.body)).toContain('how can we help?');
    const otp = await call('POST', '/v2/wa/template', {
      channelId: orgs.a.channelId,
      to: userId,
      template: { name: 'verification_code', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '123456' }] }, { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'text', text: '123456' }] }] },
    });
    expect(otp.status, JSON.stringify(otp.body)).toBe(422);
    expect(otp.body.error.code).toBe('phone_number_required');
  });

  it("asking a customer who hides their number to share it: Meta's contact-information request, and the number they share linked to them", async () => {
    const phone = '4915120000077';
    const made = await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers`, { phone, username: 'asked', hidePhone: true });
    const userId = made.body.customer.userId as string;
    await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${userId}/messages`, { text: 'call me back?' });
    const aeid = `${userId}:${orgs.a.phoneNumberId}`;
    expect((await eventually(async () => (await call('GET', `/v1/conversations/${aeid}`)).body.conversation)).phone).toBeNull();
    const asked = await call('POST', `/v1/conversations/${aeid}/request-phone`, { text: 'Could you share your number?' });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    const shared = await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${userId}/contact-shares`, { messageId: asked.body.messageId });
    expect(shared.status, JSON.stringify(shared.body)).toBe(201);
    const contact = await eventually(async () => {
      const r = await call('GET', `/v1/contacts/${aeid}`);
      return r.body.contact?.phone === phone ? r.body.contact : null;
    });
    expect(contact).toMatchObject({ audienceExternalId: aeid, phone, userId });
    // The number now reaches the same person.
    expect((await call('GET', `/v1/contacts/${phone}:${orgs.a.phoneNumberId}`)).body.contact.id).toBe(contact.id);
    const again = await call('POST', `/v1/conversations/${aeid}/request-phone`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('phone_already_known');
    expect((await call('POST', `/v1/conversations/${aeid}/request-phone`, { text: 'x' }, orgs.b.adminKey)).status).toBe(404);
    expect((await call('POST', `/v1/conversations/${aeid}/request-phone`, { nope: 1 })).status).toBe(400);
  });

  it("another organization never reaches a customer's ids", async () => {
    const made = await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers`, { username: 'only.a', hidePhone: true });
    const userId = made.body.customer.userId as string;
    await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${userId}/messages`, { text: 'for A' });
    const aeid = `${userId}:${orgs.a.phoneNumberId}`;
    await eventually(async () => (await call('GET', `/v1/contacts/${aeid}`)).status === 200);
    expect((await call('GET', `/v1/contacts/${aeid}`, undefined, orgs.b.adminKey)).status).toBe(404);
    expect((await call('GET', `/v1/conversations/${aeid}`, undefined, orgs.b.adminKey)).status).toBe(404);
    expect((await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers`, { username: 'x', hidePhone: true }, orgs.b.adminKey)).status).toBe(404);
    expect((await call('POST', '/v1/messages/text', { channelId: orgs.b.channelId, to: userId, text: { body: 'x' } }, orgs.b.adminKey)).status).toBeGreaterThanOrEqual(400);
  });

  it('the sandbox serves an expired Graph API version with the oldest alive one, and refuses one Meta never released', async () => {
    const ok = await fetch(`${orgs.svc.url}/sandbox/graph/v27.0/${orgs.a.phoneNumberId}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(ok.headers.get('facebook-api-version')).toBe('v27.0');
    const old = await fetch(`${orgs.svc.url}/sandbox/graph/v17.0/${orgs.a.phoneNumberId}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(old.headers.get('facebook-api-version')).toBe(aliveGraphVersions(new Date())[0]!.version);
    const never = await fetch(`${orgs.svc.url}/sandbox/graph/v99.0/${orgs.a.phoneNumberId}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(never.status).toBe(400);
    const ready = await fetch(`${orgs.svc.url}/readyz`);
    expect(((await ready.json()) as { graphApi?: unknown }).graphApi).toEqual({});
  });
});

describe('a merge of two contacts that turn out to be one person', () => {
  const orgs = useTwoOrgs({ events: 'a' });
  const call = (method: string, path: string, body?: unknown, key = orgs.a.adminKey) => orgs.svc.call(method, path, { key, body });
  const channelOfA = async () => (await orgs.svc.running.services.messaging.stores.channels.get(orgs.a.id, orgs.a.channelId)) as WhatsAppChannel;
  /** The network's signed `messages` webhook to organization A's channel, as Meta shapes it (no contacts array on system messages). */
  const post = async (messages: Record<string, unknown>[], contacts?: Record<string, unknown>[]) => {
    const channel = await channelOfA();
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: channel.businessAccountId, changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: channel.phoneNumberId }, ...(contacts ? { contacts } : {}), messages } }] }] });
    const r = await fetch(`${orgs.svc.url}/webhooks/whatsapp/${channel.id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signHubSignature(channel.credentials.appSecret, body) }, body });
    expect(r.status).toBe(200);
  };

  it('a phone contact and a BSUID contact linked by a later webhook: one contact, both histories, a contact_merged entry and a contact.merged event; nothing lost or doubled', async () => {
    const pn = (await channelOfA()).phoneNumberId;
    let n = 0;
    const write = async (who: { phone?: string; userId?: string }, text: string) => {
      const message: Record<string, unknown> = { id: `wamid.merge.${n++}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: text } };
      const contact: Record<string, unknown> = { profile: { name: 'Mia' } };
      if (who.phone !== undefined) {
        message.from = who.phone;
        contact.wa_id = who.phone;
      }
      if (who.userId !== undefined) {
        message.from_user_id = who.userId;
        contact.user_id = who.userId;
      }
      await post([message], [contact]);
    };
    const phone = '4915130000001';
    const userId = 'US.40000000000000000001';
    await write({ phone }, 'first, by phone');
    await write({ userId }, 'second, by BSUID: no link known yet');
    const byPhone = (await call('GET', `/v1/contacts/${phone}:${pn}`)).body.contact;
    const byUser = (await call('GET', `/v1/contacts/${userId}:${pn}`)).body.contact;
    expect(byPhone.id).not.toBe(byUser.id);
    // Meta shows both ids together: the two contacts are one person.
    await write({ phone, userId }, 'third, by both');
    const merged = await call('GET', `/v1/contacts/${userId}:${pn}`);
    expect(merged.body.contact).toMatchObject({ id: byPhone.id, audienceExternalId: `${phone}:${pn}` });
    expect(merged.body.sessions).toHaveLength(2);
    const texts: string[] = [];
    for (const s of merged.body.sessions as { sessionId: string }[]) {
      for (const m of (await call('GET', `/v1/sessions/${s.sessionId}/messages`)).body as { sender: string; content: { text?: string } }[]) if (m.sender === 'contact') texts.push(m.content.text ?? '');
    }
    expect(texts.sort()).toEqual(['first, by phone', 'second, by BSUID: no link known yet', 'third, by both']);
    // One conversation in the lists; the merged one's id reaches it.
    const list = (await call('GET', '/v1/conversations?view=all&limit=100')).body.conversations as { audienceExternalId: string }[];
    expect(list.filter((c) => c.audienceExternalId === `${phone}:${pn}` || c.audienceExternalId === `${userId}:${pn}`).map((c) => c.audienceExternalId)).toEqual([`${phone}:${pn}`]);
    const conv = (await call('GET', `/v1/conversations/${userId}:${pn}`)).body;
    expect(conv.conversation.audienceExternalId).toBe(`${phone}:${pn}`);
    const thread = (await call('GET', `/v1/sessions/${conv.conversation.sessionId}/messages?notes=true`)).body as { system?: { event: string; from?: string } }[];
    expect(thread.filter((m) => m.system?.event === 'contact_merged')).toEqual([expect.objectContaining({ system: expect.objectContaining({ from: `${userId}:${pn}` }) })]);
    const ev = await eventually(async () => orgs.events('contact.merged')[0]);
    expect(ev.data).toMatchObject({ audienceExternalId: `${phone}:${pn}`, contactId: byPhone.id, mergedAudienceExternalId: `${userId}:${pn}`, mergedContactId: byUser.id });
    // From now on a BSUID-only message is the person's.
    await write({ userId }, 'fourth, by BSUID again');
    const last = await call('GET', `/v1/sessions/${conv.conversation.sessionId}/messages`);
    expect((last.body as { content: { text?: string } }[]).some((m) => m.content.text === 'fourth, by BSUID again')).toBe(true);
    expect(orgs.events('contact.merged')).toHaveLength(1);
    // Another organization sees nothing of it.
    expect((await call('GET', `/v1/contacts/${userId}:${pn}`, undefined, orgs.b.adminKey)).status).toBe(404);
  });

  it('message_status events name the BSUID and the username of a customer who hides their number', async () => {
    const made = await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers`, { username: 'status.user', hidePhone: true });
    const userId = made.body.customer.userId as string;
    await call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${userId}/messages`, { text: 'hi' });
    const aeid = `${userId}:${orgs.a.phoneNumberId}`;
    await eventually(async () => (await call('GET', `/v1/conversations/${aeid}`)).status === 200);
    const sent = await call('POST', '/v1/messages/text', { audienceExternalId: aeid, text: { body: 'hello' } });
    expect(sent.status).toBeLessThan(300);
    const inbound = await eventually(async () => orgs.events('inbound_message', (d) => d.audienceExternalId === aeid)[0]);
    expect(inbound.data).toMatchObject({ from: userId, phone: null, userId, username: 'status.user' });
    const status = await eventually(async () => orgs.events('message_status', (d) => d.messageId === sent.body.messageId && d.status === 'delivered')[0]);
    expect(status.data).toMatchObject({ audienceExternalId: aeid, recipientId: userId, userId, username: 'status.user' });
  });

  it('a system message that the customer changed their number (and so their BSUID): the new ids reach the same person and history', async () => {
    const pn = (await channelOfA()).phoneNumberId;
    const ts = String(Math.floor(Date.now() / 1000));
    await post([{ from: '4915140000001', from_user_id: 'US.50000000000000000001', id: 'wamid.cn.1', timestamp: ts, type: 'text', text: { body: 'old number' } }], [{ profile: { name: 'Ola' }, wa_id: '4915140000001', user_id: 'US.50000000000000000001' }]);
    // No contacts array on system messages.
    await post([{ from: '4915140000001', id: 'wamid.cn.2', timestamp: ts, type: 'system', system: { body: 'User Ola changed from 4915140000001 to 4915140000002', wa_id: '4915140000002', type: 'user_changed_number', user_id: 'US.50000000000000000002', previous_user_id: 'US.50000000000000000001' } }]);
    await post([{ from: '4915140000002', from_user_id: 'US.50000000000000000002', id: 'wamid.cn.3', timestamp: ts, type: 'text', text: { body: 'new number' } }], [{ profile: { name: 'Ola' }, wa_id: '4915140000002', user_id: 'US.50000000000000000002' }]);
    const c = (await call('GET', `/v1/contacts/4915140000002:${pn}`)).body;
    expect(c.contact.audienceExternalId).toBe(`4915140000001:${pn}`);
    expect((await call('GET', `/v1/contacts/US.50000000000000000002:${pn}`)).body.contact.id).toBe(c.contact.id);
    const history = (await call('GET', `/v1/sessions/${c.sessions[0].sessionId}/messages`)).body as { content: { type: string; text?: string } }[];
    expect(history.map((m) => m.content.text)).toEqual(['old number', 'User Ola changed from 4915140000001 to 4915140000002', 'new number']);
  });
});
