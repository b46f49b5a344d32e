import { beforeAll, describe, expect, it } from 'vitest';
import { signHubSignature } from '../../src/network/index.js';
import { NetworkWebhookReceiver, type ConversationGateway } from '../../src/messaging/index.js';
import type { WhatsAppChannel } from '../../src/store/channels/port.js';
import { silentLogger } from '../../src/log.js';
import { eventually, orderUpdate, useTwoOrgs } from './messaging-helpers.js';

/** The network webhook receiver: verification, signatures, redeliveries, out-of-order statuses. */
describe('network webhook receiver', () => {
  const orgs = useTwoOrgs({ events: 'all' });
  const { seen } = orgs;
  let chA: WhatsAppChannel;
  let chB: WhatsAppChannel;

  beforeAll(async () => {
    const repo = orgs.svc.running.services.messaging.stores.channels;
    chA = (await repo.get(orgs.a.id, orgs.a.channelId)) as WhatsAppChannel;
    chB = (await repo.get(orgs.b.id, orgs.b.channelId)) as WhatsAppChannel;
  });

  const envelope = (ch: WhatsAppChannel, value: Record<string, unknown>) => ({
    object: 'whatsapp_business_account',
    entry: [{ id: ch.businessAccountId, changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001111', phone_number_id: ch.phoneNumberId }, ...value } }] }],
  });
  const inbound = (ch: WhatsAppChannel, from: string, id: string, text: string, ts = Math.floor(Date.now() / 1000)) =>
    envelope(ch, { contacts: [{ profile: { name: 'Kim' }, wa_id: from }], messages: [{ from, id, timestamp: String(ts), type: 'text', text: { body: text } }] });
  const status = (ch: WhatsAppChannel, id: string, s: string, to: string) => envelope(ch, { statuses: [{ id, status: s, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: to }] });
  const deliver = (channelId: string, body: string, signature?: string) =>
    orgs.svc.call('POST', `/webhooks/whatsapp/${channelId}`, { rawBody: body, headers: signature === undefined ? {} : { 'x-hub-signature-256': signature } });
  const contactsOf = async (org: string) => (await orgs.svc.running.services.store.contacts.list(org)).map((c) => c.audienceExternalId);

  it('answers the subscription check with the challenge, only for the right verify token', async () => {
    const q = (token: string, mode = 'subscribe', challenge = '1158201444') => `/webhooks/whatsapp/${orgs.a.channelId}?hub.mode=${mode}&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=${challenge}`;
    const ok = await orgs.svc.call('GET', q(chA.credentials.verifyToken));
    expect(ok.status).toBe(200);
    expect(ok.body).toBe(1158201444);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await orgs.svc.call('GET', q('wrong-token'))).status).toBe(403);
    expect((await orgs.svc.call('GET', q(chB.credentials.verifyToken))).status).toBe(403);
    expect((await orgs.svc.call('GET', q(chA.credentials.verifyToken, 'unsubscribe'))).status).toBe(403);
    expect((await orgs.svc.call('GET', q(chA.credentials.verifyToken, 'subscribe', ''))).status).toBe(403);
    expect((await orgs.svc.call('GET', `/webhooks/whatsapp/ch_nope?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1`)).status).toBe(403);
    // The sandbox network performs the same check against its callback URL.
    expect(await orgs.svc.running.services.messaging.sandbox!.verifyCallback(chA.phoneNumberId)).toBe(true);
  });

  it('a forged webhook changes nothing: missing, wrong, other-channel or re-serialized signatures are 401', async () => {
    const from = '4917000000001';
    const body = JSON.stringify(inbound(chA, from, 'wamid.forged1', 'let me in'));
    const before = seen.length;
    for (const r of [
      await deliver(orgs.a.channelId, body),
      await deliver(orgs.a.channelId, body, ''),
      await deliver(orgs.a.channelId, body, 'sha256=' + '0'.repeat(64)),
      await deliver(orgs.a.channelId, body, signHubSignature(chB.credentials.appSecret, body)),
      await deliver(orgs.a.channelId, JSON.stringify(JSON.parse(body), null, 2), signHubSignature(chA.credentials.appSecret, body)),
      await deliver(orgs.a.channelId, body, signHubSignature(chA.credentials.appSecret, body).replace('sha256=', 'sha1=')),
      await deliver('ch_nope', body, signHubSignature(chA.credentials.appSecret, body)),
    ]) {
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ success: false, error: { code: 'invalid_signature' } });
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.length).toBe(before);
    expect(await contactsOf(orgs.a.id)).not.toContain(`${from}:${chA.phoneNumberId}`);
  });

  it('a genuine webhook is recorded once, however often it is delivered', async () => {
    const from = '4917000000002';
    const body = JSON.stringify(inbound(chA, from, 'wamid.genuine1', 'hello there'));
    const sig = signHubSignature(chA.credentials.appSecret, body);
    const first = await deliver(orgs.a.channelId, body, sig);
    expect(first).toMatchObject({ status: 200, body: { received: 1, applied: 1, duplicates: 0 } });
    const again = await Promise.all([deliver(orgs.a.channelId, body, sig), deliver(orgs.a.channelId, body, sig)]);
    for (const r of again) expect(r).toMatchObject({ status: 200, body: { received: 1, applied: 0, duplicates: 1 } });
    const stored = await orgs.svc.running.services.messaging.stores.messages.getByNetworkId(orgs.a.id, 'wamid.genuine1');
    expect(stored).toMatchObject({ sender: 'contact', direction: 'inbound', content: { type: 'text', text: 'hello there' } });
    const history = await orgs.svc.call('GET', `/v1/sessions/${stored!.sessionId}/messages`, { key: orgs.a.adminKey });
    expect(history.body).toHaveLength(1);
    await eventually(async () => seen.some((e) => e.type === 'inbound_message' && (e.data as { messageId: string }).messageId === 'wamid.genuine1'));
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.filter((e) => e.type === 'inbound_message' && (e.data as { messageId: string }).messageId === 'wamid.genuine1')).toHaveLength(1);
    expect(await contactsOf(orgs.a.id)).toContain(`${from}:${chA.phoneNumberId}`);
  });

  it('statuses never go backwards, and replayed or late ones publish nothing new', async () => {
    const to = '4917000000003';
    const sent = await orgs.svc.call('POST', '/v2/wa/template', { key: orgs.a.adminKey, body: orderUpdate(orgs.a.channelId, to) });
    const id = sent.body.messageId as string;
    const statuses = () => seen.filter((e) => e.type === 'message_status' && (e.data as { messageId: string }).messageId === id).map((e) => (e.data as { status: string }).status);
    await eventually(async () => statuses().length === 3);
    for (const s of ['delivered', 'sent', 'failed', 'read']) {
      const body = JSON.stringify(status(chA, id, s, to));
      const r = await deliver(orgs.a.channelId, body, signHubSignature(chA.credentials.appSecret, body));
      expect(r).toMatchObject({ status: 200, body: { applied: 0 } });
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(statuses()).toEqual(['sent', 'delivered', 'read']);
    expect(await orgs.svc.running.services.messaging.stores.messages.getByNetworkId(orgs.a.id, id)).toMatchObject({ status: 'read' });
  });

  it('an event naming another organization\'s number is skipped, even when signed', async () => {
    const body = JSON.stringify(inbound(chB, '4917000000004', 'wamid.crossorg1', 'sneaky'));
    const r = await deliver(orgs.a.channelId, body, signHubSignature(chA.credentials.appSecret, body));
    expect(r.status).toBe(200);
    expect(r.body.applied).toBe(0);
    expect(r.body.skipped[0]).toContain('not a channel of this app');
    expect(await orgs.svc.running.services.messaging.stores.messages.getByNetworkId(orgs.b.id, 'wamid.crossorg1')).toBeNull();
    expect(await contactsOf(orgs.b.id)).not.toContain(`4917000000004:${chB.phoneNumberId}`);
  });

  it('a signed body that is not the webhook envelope is acknowledged and ignored', async () => {
    const body = JSON.stringify({ object: 'page', entry: [] });
    expect(await deliver(orgs.a.channelId, body, signHubSignature(chA.credentials.appSecret, body))).toMatchObject({ status: 200, body: { received: 0 } });
  });
});

describe('network webhook receiver, when recording fails', () => {
  it('answers 503 (so the network delivers again) unless every event was recorded', async () => {
    const channel: WhatsAppChannel = {
      id: 'ch_1',
      organizationId: 'o1',
      name: 'x',
      kind: 'whatsapp_cloud',
      network: 'graph',
      phoneNumberId: '111',
      businessAccountId: '222',
      displayPhoneNumber: null,
      credentials: { accessToken: 't', appSecret: 'secret', verifyToken: 'v' },
      createdAt: '',
      updatedAt: '',
    };
    const recorded: string[] = [];
    let failFor = '4917000000009';
    const gateway: ConversationGateway = {
      ask: async (_org, aeid, cmd) => {
        if (aeid.startsWith(failFor)) throw new Error('event log down');
        recorded.push(`${aeid}:${cmd.kind}`);
        return { duplicate: false, sessionId: 's' } as never;
      },
    };
    const receiver = new NetworkWebhookReceiver({
      channels: { getGlobal: async () => channel, getByPhoneNumberId: async () => null } as never,
      messages: { getByNetworkId: async () => null } as never,
      // Every person is new: their first id names them.
      contacts: { identify: async (_org: string, ids: readonly string[]) => ({ canonical: ids[0]!, conflicting: [] }), resolve: async (_org: string, id: string) => id, get: async () => null, merge: async () => false },
      conversations: gateway,
      log: silentLogger,
    });
    const body = Buffer.from(
      JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: '222',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { phone_number_id: '111' },
                  messages: [
                    { from: '4917000000008', id: 'w1', timestamp: '1700000000', type: 'text', text: { body: 'a' } },
                    { from: '4917000000009', id: 'w2', timestamp: '1700000000', type: 'text', text: { body: 'b' } },
                  ],
                },
              },
            ],
          },
        ],
      }),
    );
    await expect(receiver.receive('ch_1', body, signHubSignature('secret', body))).rejects.toMatchObject({ status: 503, code: 'not_recorded' });
    failFor = 'nobody';
    await expect(receiver.receive('ch_1', body, signHubSignature('secret', body))).resolves.toMatchObject({ received: 2, applied: 2 });
    expect(recorded).toEqual(['4917000000008:111:network.inbound', '4917000000008:111:network.inbound', '4917000000009:111:network.inbound']);
  });
});
