import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { messagingOrg, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';

/** An agent's reply beyond text: a location, contact cards, a reaction, sent through the chat network. */
describe('an agent sends a location, contact cards and a reaction', () => {
  let svc: TestService;
  let a: MessagingOrg;
  let b: MessagingOrg;
  const phone = '4915112360001';
  let aeid: string;
  let asked: string;

  beforeAll(async () => {
    svc = await startMessagingService();
    a = await messagingOrg(svc, 'A', 1000);
    b = await messagingOrg(svc, 'B', 1000);
    aeid = `${phone}:${a.phoneNumberId}`;
    const wrote = await svc.call('POST', `/v1/sandbox/channels/${a.channelId}/customers/${phone}/messages`, { key: a.adminKey, body: { text: 'Where can I pick it up?', profileName: 'Ann' } });
    expect(wrote.status).toBe(201);
    asked = wrote.body.messageId as string;
    expect((await svc.call('POST', `/v1/conversations/${aeid}/take`, { key: a.adminKey })).status).toBe(200);
  }, 60_000);
  afterAll(() => svc?.close());

  const reply = (body: unknown, key = a.adminKey, id = aeid) => svc.call('POST', `/v1/conversations/${id}/reply`, { key, body });
  const phoneShows = async () => (await svc.call('GET', `/v1/sandbox/channels/${a.channelId}/customers/${phone}/messages`, { key: a.adminKey })).body.messages as { id: string; type: string; message: Record<string, unknown> }[];
  const stored = (messageId: string) => svc.running.services.messaging.stores.messages.getByNetworkId(a.id, messageId);

  it('each reaches the customer in the network\'s shape and is stored in the session history as what it is', async () => {
    const loc = await reply({ type: 'location', location: { latitude: 52.5219, longitude: 13.4132, name: 'Parcel shop', address: 'Karl-Marx-Allee 1, Berlin' } });
    expect(loc).toMatchObject({ status: 200, body: { success: true, messageId: expect.stringMatching(/^wamid\./) } });
    const card = { name: { formatted_name: 'Ben Lee', first_name: 'Ben' }, org: { company: 'Parcel Co' }, phones: [{ phone: '+49 151 2345678', type: 'CELL', wa_id: '491512345678' }] };
    const contacts = await reply({ type: 'contacts', contacts: [card] });
    expect(contacts.status).toBe(200);
    const reaction = await reply({ type: 'reaction', reaction: { messageId: asked, emoji: '👍' } });
    expect(reaction.status).toBe(200);

    const onPhone = await phoneShows();
    const byId = (id: string) => onPhone.find((m) => m.id === id);
    expect(byId(loc.body.messageId)).toMatchObject({ type: 'location', message: { location: { latitude: 52.5219, longitude: 13.4132, name: 'Parcel shop', address: 'Karl-Marx-Allee 1, Berlin' } } });
    expect(byId(contacts.body.messageId)).toMatchObject({ type: 'contacts', message: { contacts: [card] } });
    expect(byId(reaction.body.messageId)).toMatchObject({ type: 'reaction', message: { reaction: { message_id: asked, emoji: '👍' } } });

    expect(await stored(loc.body.messageId)).toMatchObject({ sender: 'agent', direction: 'outbound', content: { type: 'location', location: { latitude: 52.5219, longitude: 13.4132, name: 'Parcel shop' }, text: 'Parcel shop, Karl-Marx-Allee 1, Berlin' } });
    expect(await stored(contacts.body.messageId)).toMatchObject({ content: { type: 'contacts', contacts: [card], text: 'Ben Lee' } });
    expect(await stored(reaction.body.messageId)).toMatchObject({ content: { type: 'reaction', reaction: { messageId: asked, emoji: '👍' } } });
    // Taken back: an empty emoji.
    expect((await reply({ type: 'reaction', reaction: { messageId: asked, emoji: '' } })).status).toBe(200);
  });

  it('a reaction to a message not of this conversation, and bad input, are refused with nothing sent', async () => {
    const before = (await phoneShows()).length;
    const other = await svc.call('POST', `/v1/sandbox/channels/${b.channelId}/customers/${phone}/messages`, { key: b.adminKey, body: { text: 'another org' } });
    for (const messageId of [other.body.messageId as string, 'wamid.nothing']) {
      const r = await reply({ type: 'reaction', reaction: { messageId, emoji: '👍' } });
      expect([r.status, r.body.error.code]).toEqual([422, 'no_such_message']);
    }
    for (const body of [
      { type: 'location', location: { latitude: 91, longitude: 0 } },
      { type: 'location', location: { latitude: 1, longitude: 2, url: 'https://x.example' } },
      { type: 'contacts', contacts: [] },
      { type: 'contacts', contacts: [{ name: {} }] },
      { type: 'reaction', reaction: { messageId: asked, emoji: 'ok' } },
    ]) {
      const r = await reply(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect((await phoneShows()).length).toBe(before);
  });

  it("another organization's key cannot send into the conversation", async () => {
    const r = await reply({ type: 'location', location: { latitude: 1, longitude: 2 } }, b.adminKey);
    expect(r.status).toBe(404);
  });
});
