import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/events/types.js';
import { signHubSignature } from '../../src/network/index.js';
import type { WhatsAppChannel } from '../../src/store/channels/port.js';
import type { TestService } from '../harness/service.js';
import { eventually, messagingOrg, orderUpdate, startMessagingService, type MessagingOrg } from './messaging-helpers.js';

type Json = Record<string, unknown>;
interface Change {
  field: string;
  value: { metadata?: { phone_number_id: string; display_phone_number: string }; messages?: Json[]; statuses?: Json[] };
}
interface Payload {
  object: string;
  entry: { id: string; changes: Change[] }[];
}

const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'meta-webhook-examples.json'), 'utf8')) as {
  source: Record<string, string>;
  examples: { name: string; payload: Payload }[];
};

/** What each network message type becomes; any other type is kept as `unsupported` with the message as it came. */
const STORED_AS: Record<string, string> = {
  text: 'text',
  reaction: 'reaction',
  image: 'image',
  location: 'location',
  contacts: 'contacts',
  button: 'button_reply',
  interactive: 'button_reply',
};

/**
 * Every webhook example Meta publishes for the Cloud API (its OpenAPI
 * description, test/fixtures/meta-webhook-examples.json, written by
 * scripts/extract-meta-webhook-examples.ts), posted signed to a channel's
 * webhook URL of a running service, as the network would post them.
 */
describe("Meta's published webhook examples", () => {
  let svc: TestService;
  let org: MessagingOrg;
  let ch: WhatsAppChannel;
  const seen: DomainEvent[] = [];
  const examples = fixture.examples;
  const usedIds = new Set<string>();

  beforeAll(async () => {
    // The sandbox network's own statuses would come a minute later: the statuses here are the ones posted.
    svc = await startMessagingService({ env: { SANDBOX_STATUS_DELAY_MS: '60000' } });
    org = await messagingOrg(svc, 'Meta examples');
    ch = (await svc.running.services.messaging.stores.channels.get(org.id, org.channelId)) as WhatsAppChannel;
    await svc.running.services.events.consume(`meta-examples-${Date.now()}`, async (e) => {
      seen.push(e);
    });
  }, 60_000);
  afterAll(() => svc?.close());

  /**
   * The example addressed to the test channel (its phone number id and
   * display number); everything else as Meta published it, except that the
   * examples reuse one message id for several types (the network's ids are
   * unique), so a repeated id gets a suffix.
   */
  const addressed = (p: Payload, name: string): Payload => {
    const copy = structuredClone(p);
    for (const change of copy.entry.flatMap((e) => e.changes)) {
      if (change.value.metadata) change.value.metadata = { ...change.value.metadata, phone_number_id: ch.phoneNumberId, display_phone_number: ch.displayPhoneNumber ?? change.value.metadata.display_phone_number };
      for (const m of change.value.messages ?? []) {
        if (usedIds.has(m.id as string)) m.id = `${m.id as string}.${name.replace(/\W+/g, '_')}`;
        usedIds.add(m.id as string);
      }
    }
    return copy;
  };
  const post = (payload: unknown) => {
    const body = JSON.stringify(payload);
    return svc.call('POST', `/webhooks/whatsapp/${org.channelId}`, { rawBody: body, headers: { 'x-hub-signature-256': signHubSignature(ch.credentials.appSecret, body) } });
  };
  const inboundEvent = (id: string) => seen.find((e) => e.type === 'inbound_message' && (e.data as { messageId: string }).messageId === id);

  it('the fixture is the published set: every example, with its source', () => {
    expect(fixture.source).toMatchObject({ repository: 'https://github.com/facebook/openapi', file: 'business-messaging-api_v23.0.yaml', version: 'v23.0' });
    expect(examples.length).toBeGreaterThanOrEqual(16);
    const types = new Set(examples.flatMap((e) => e.payload.entry.flatMap((x) => x.changes.flatMap((c) => (c.value.messages ?? []).map((m) => m.type as string)))));
    for (const t of ['text', 'reaction', 'image', 'location', 'contacts', 'unsupported', 'button', 'interactive', 'order', 'system']) expect(types).toContain(t);
  });

  it('every inbound message of every example is stored in the session history and announced, none lost, never a 500', async () => {
    const posted: { id: string; raw: Json; name: string }[] = [];
    for (const ex of examples) {
      const payload = addressed(ex.payload, ex.name);
      const messages = payload.entry.flatMap((e) => e.changes.filter((c) => c.field === 'messages').flatMap((c) => c.value.messages ?? []));
      const r = await post(payload);
      expect(r.status, ex.name).toBe(200);
      expect(r.body, ex.name).toMatchObject({ received: messages.length, applied: messages.length, duplicates: 0 });
      // Changes of other fields (WhatsApp groups) are acknowledged and named, not stored.
      for (const c of payload.entry.flatMap((e) => e.changes).filter((c) => c.field !== 'messages')) expect(r.body.skipped).toContain(`entry[0].changes[0]: field ${c.field}`);
      for (const m of messages) posted.push({ id: m.id as string, raw: m, name: ex.name });
    }
    expect(posted.length).toBe(13);

    const messages = svc.running.services.messaging.stores.messages;
    const sessions = new Set<string>();
    for (const { id, raw, name } of posted) {
      const stored = await messages.getByNetworkId(org.id, id);
      expect(stored, name).toMatchObject({ sender: 'contact', direction: 'inbound', audienceExternalId: `${raw.from as string}:${ch.phoneNumberId}` });
      const type = STORED_AS[raw.type as string];
      if (type === undefined) expect(stored!.content, name).toMatchObject({ type: 'unsupported', originalType: raw.type, raw });
      else expect(stored!.content.type, name).toBe(type);
      sessions.add(stored!.sessionId);
      await eventually(async () => inboundEvent(id));
      expect((inboundEvent(id)!.data as { content: unknown }).content, name).toEqual(stored!.content);
    }
    const history = (await Promise.all([...sessions].map(async (s) => (await svc.call('GET', `/v1/sessions/${s}/messages`, { key: org.adminKey })).body as { messageId: string | null }[]))).flat();
    for (const { id } of posted) expect(history.map((m) => m.messageId)).toContain(id);

    // What each type carries is kept, down to the fields a first reading would drop.
    const byName = async (name: string) => (await messages.getByNetworkId(org.id, posted.find((p) => p.name === name)!.id))!.content;
    expect(await byName('Text Message with Context (Product Inquiry)')).toMatchObject({ type: 'text', text: 'Is this still available?', referredProduct: { catalogId: '194836987003835', productRetailerId: 'di9ozbzfi4' } });
    expect((await byName('Text Message from Click to WhatsApp Ad')).referral).toMatchObject({ source_type: 'ad', ctwa_clid: expect.any(String), welcome_message: { text: expect.any(String) } });
    expect(await byName('Location Message')).toMatchObject({ location: { latitude: 37.44221496582, longitude: -122.16165924072, name: 'Philz Coffee', address: '101 Forest Ave, Palo Alto, CA 94301', url: 'https://philzcoffee.com/' } });
    expect(await byName('Contact Sharing Message')).toMatchObject({ text: 'Lucía Gómez', contacts: [{ org: { company: 'Google' }, phones: [{ phone: '+1 (983) 555-2319', wa_id: '19835552319' }] }] });
    expect(await byName('Reaction Message')).toMatchObject({ reaction: { emoji: '👍', messageId: expect.stringMatching(/^wamid\./) } });
    expect(await byName('Image Message')).toMatchObject({ mediaId: '1003383421387256', mimeType: 'image/jpeg', caption: 'Taj Mahal' });
    expect(await byName('Interactive List Reply Message')).toMatchObject({ buttonId: 'priority_express', text: 'Priority Mail Express', description: 'Next Day to 2 Days' });
    expect(await byName('Button Message')).toMatchObject({ text: 'Unsubscribe', payload: 'Unsubscribe' });
    expect(await byName('Order Message')).toMatchObject({ type: 'unsupported', originalType: 'order', text: 'Order: 2 items' });
  }, 60_000);

  it('a message of a known type whose fields are not the shape expected is kept as unsupported, with the rest of the webhook', async () => {
    const payload = addressed(examples.find((e) => e.name === 'Location Message')!.payload, 'odd');
    const value = payload.entry[0]!.changes[0]!.value;
    const odd = { ...value.messages![0]!, id: 'wamid.odd-location', location: { latitude: '37.44', longitude: '-122.16' } };
    const fine = { ...value.messages![0]!, id: 'wamid.fine-location' };
    value.messages = [odd, { timestamp: '1744344496', type: 'text' }, fine];
    const r = await post(payload);
    expect(r).toMatchObject({ status: 200, body: { received: 2, applied: 2, skipped: ['entry[0].changes[0].messages[1]: no sender, id or timestamp'] } });
    const messages = svc.running.services.messaging.stores.messages;
    expect((await messages.getByNetworkId(org.id, 'wamid.odd-location'))!.content).toEqual({ type: 'unsupported', originalType: 'location', raw: odd });
    expect((await messages.getByNetworkId(org.id, 'wamid.fine-location'))!.content).toMatchObject({ type: 'location', location: { name: 'Philz Coffee' } });
  });

  it("statuses (the file has no status example; built to its StatusMessageValue schema) update a message the service sent", async () => {
    const to = '16505551234';
    const sent = await svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, to) });
    expect(sent.status).toBe(201);
    const id = sent.body.messageId as string;
    const base = addressed(examples[0]!.payload, 'status');
    const statuses = () => seen.filter((e) => e.type === 'message_status' && (e.data as { messageId: string }).messageId === id).map((e) => (e.data as { status: string }).status);
    for (const status of ['sent', 'delivered', 'read']) {
      const payload = { ...base, entry: [{ id: base.entry[0]!.id, changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: base.entry[0]!.changes[0]!.value.metadata, statuses: [{ id, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: to }] } }] }] };
      expect(await post(payload)).toMatchObject({ status: 200, body: { received: 1, applied: 1 } });
    }
    await eventually(async () => statuses().length === 3);
    expect(statuses()).toEqual(['sent', 'delivered', 'read']);
    expect(await svc.running.services.messaging.stores.messages.getByNetworkId(org.id, id)).toMatchObject({ status: 'read' });
  });
});
