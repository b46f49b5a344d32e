import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/events/types.js';
import { ManualClock } from '../../src/clock.js';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually, messagingOrg, op, orderUpdate, startMessagingService, type MessagingOrg } from './messaging-helpers.js';

const HOUR = 3600_000;

/**
 * The whole messaging loop through the REST API, the conversation actors, the
 * real Graph adapter over HTTP and the sandbox network's signed webhooks:
 * once on one embedded node, once on two clustered nodes (Redis + NATS)
 * with calls alternating between them.
 */
function messagingSuite(name: string, start: (clock: ManualClock) => Promise<TestService[]>) {
  describe(`messaging loop (${name})`, () => {
    const clock = new ManualClock(Date.now());
    let nodes: TestService[];
    let a: MessagingOrg;
    let turn = 0;
    const call: TestService['call'] = (...args) => nodes[turn++ % nodes.length]!.call(...args);
    const seen: DomainEvent[] = [];
    const events = (type: string, pred: (d: any) => boolean = () => true) => seen.filter((e) => e.type === type && pred(e.data));

    beforeAll(async () => {
      nodes = await start(clock);
      a = await messagingOrg(nodes[0]!, 'A');
      await nodes[0]!.running.services.events.consume(`messaging-flow-${Date.now()}`, async (e) => {
        if (e.organizationId === a.id) seen.push(e);
      });
    }, 60_000);
    afterAll(async () => {
      await Promise.all((nodes ?? []).map((n) => n.close()));
    });

    const sandbox = (phone: string, what: string, body: unknown) => call('POST', `/v1/sandbox/channels/${a.channelId}/customers/${phone}/${what}`, { key: a.adminKey, body });
    const buttons = (to: string) =>
      call('POST', '/v1/messages/buttons', {
        key: a.adminKey,
        body: { channelId: a.channelId, to, interactive: { body: { text: 'How can we help?' }, buttons: [{ id: 'track', title: 'Track order' }, { id: 'agent', title: 'Talk to us' }] } },
      });
    const media = (to: string) => call('POST', '/v1/messages/media', { key: a.adminKey, body: { channelId: a.channelId, to, media: { type: 'document', document: { link: 'https://example.com/invoice.pdf', filename: 'invoice.pdf', caption: 'Your invoice' } } } });

    it('template → contact → statuses → reply → window open → buttons → 24 h later refused', async () => {
      const to = '4915100000001';
      const aeid = `${to}:${a.phoneNumberId}`;

      const sent = await call('POST', '/v2/wa/template', { key: a.adminKey, body: orderUpdate(a.channelId, to) });
      expect(sent.status).toBe(201);
      expect(sent.body).toEqual({ success: true, messageId: expect.stringMatching(/^wamid\./), timestamp: expect.any(String) });
      const templateId = sent.body.messageId as string;

      // The first send created the contact and its conversation.
      const contacts = await op(nodes[0]!, 'GET', `/admin/v1/organizations/${a.id}/contacts`);
      expect(contacts.body.contacts.map((c: { audienceExternalId: string }) => c.audienceExternalId)).toContain(aeid);
      const sentEvent = await eventually(async () => events('message.sent', (d) => d.messageId === templateId)[0]);
      expect(sentEvent.data).toMatchObject({ audienceExternalId: aeid, channelId: a.channelId, to, sender: 'bot', status: 'accepted', content: { type: 'template' } });
      const sessionId = (sentEvent.data as { sessionId: string }).sessionId;

      // The network reports sent, delivered, read: published against the messageId, applied to the stored message.
      await eventually(async () => events('message_status', (d) => d.messageId === templateId).length === 3);
      expect(events('message_status', (d) => d.messageId === templateId).map((e) => (e.data as { status: string }).status)).toEqual(['sent', 'delivered', 'read']);
      // A status's event is published before the status is stored (a stored status implies its event): wait for the last write.
      const history = await eventually(async () => {
        const h = await call('GET', `/v1/sessions/${sessionId}/messages`, { key: a.adminKey });
        return h.body?.[0]?.status === 'read' ? h : undefined;
      });
      expect(history.status).toBe(200);
      expect(history.body).toEqual([
        expect.objectContaining({
          sessionId,
          sender: 'bot',
          direction: 'outbound',
          messageId: templateId,
          status: 'read',
          content: expect.objectContaining({ type: 'template', text: 'Hi Ann, your order A-1001 has shipped and arrives on Monday.' }),
        }),
      ]);

      // The customer never wrote: free-form sends are refused before the network.
      const early = await buttons(to);
      expect(early.status).toBe(422);
      expect(early.body).toMatchObject({ success: false, error: { code: 'outside_customer_service_window', details: { lastInboundAt: null } } });

      // The customer replies: the window opens.
      const reply = await sandbox(to, 'messages', { text: 'Where is my parcel?', profileName: 'Ann' });
      expect(reply).toMatchObject({ status: 201, body: { delivered: true } });
      const inbound = await eventually(async () => events('inbound_message', (d) => d.messageId === reply.body.messageId)[0]);
      expect(inbound.data).toMatchObject({ audienceExternalId: aeid, sessionId, from: to, profileName: 'Ann', handover: false, content: { type: 'text', text: 'Where is my parcel?' } });

      const btn = await buttons(to);
      expect(btn.status).toBe(200);
      expect(btn.body).toEqual({ success: true, messageId: expect.stringMatching(/^wamid\./) });
      const doc = await media(to);
      expect(doc.body).toEqual({ success: true, messageId: expect.stringMatching(/^wamid\./) });

      // Taps reach the service as inbound messages: the reply button's id and title, the quick reply's payload.
      await eventually(async () => events('message_status', (d) => d.messageId === btn.body.messageId && d.status === 'delivered').length === 1);
      const tap = await sandbox(to, 'button-replies', { messageId: btn.body.messageId, buttonId: 'agent' });
      expect(tap.status).toBe(201);
      const tapEvent = await eventually(async () => events('inbound_message', (d) => d.messageId === tap.body.messageId)[0]);
      expect(tapEvent.data).toMatchObject({ content: { type: 'button_reply', buttonId: 'agent', text: 'Talk to us' }, replyTo: btn.body.messageId });
      const qr = await sandbox(to, 'quick-replies', { messageId: templateId, index: 0 });
      const qrEvent = await eventually(async () => events('inbound_message', (d) => d.messageId === qr.body.messageId)[0]);
      expect(qrEvent.data).toMatchObject({ content: { type: 'button_reply', payload: 'Track my order', text: 'Track my order' }, replyTo: templateId });

      await eventually(async () => events('message_status', (d) => d.messageId === doc.body.messageId && d.status === 'read').length === 1);
      const all = await call('GET', `/v1/sessions/${sessionId}/messages`, { key: a.adminKey });
      expect(all.body.map((m: { sender: string; content: { type: string } }) => `${m.sender}:${m.content.type}`)).toEqual([
        'bot:template',
        'contact:text',
        'bot:interactive',
        'bot:document',
        'contact:button_reply',
        'contact:button_reply',
      ]);
      expect(all.body[2]).toMatchObject({ content: { buttons: [{ id: 'track', title: 'Track order' }, { id: 'agent', title: 'Talk to us' }] } });
      expect(all.body[3]).toMatchObject({ content: { mediaUrl: 'https://example.com/invoice.pdf', filename: 'invoice.pdf', caption: 'Your invoice' }, status: 'read' });

      // 24 hours after the customer's last message the window is closed again.
      clock.advance(24 * HOUR + 1000);
      const late = await buttons(to);
      expect(late.status).toBe(422);
      expect(late.body.error.code).toBe('outside_customer_service_window');
      expect(Date.parse(late.body.error.details.closedAt)).toBeLessThanOrEqual(clock.now());
      expect((await media(to)).status).toBe(422);
      // Templates always go.
      expect((await call('POST', '/v2/wa/template', { key: a.adminKey, body: orderUpdate(a.channelId, to) })).status).toBe(201);
    });

    it('while a human has the conversation the bot cannot send free-form, templates still go, inbound is marked handover', async () => {
      const to = '4915100000002';
      const aeid = `${to}:${a.phoneNumberId}`;
      expect((await call('POST', '/v2/wa/template', { key: a.adminKey, body: orderUpdate(a.channelId, to) })).status).toBe(201);
      await sandbox(to, 'messages', { text: 'I want a human' });
      expect((await buttons(to)).status).toBe(200);
      expect(await call('POST', '/v1/handover', { key: a.adminKey, body: { audienceExternalId: aeid } })).toMatchObject({ status: 200, body: { success: true } });
      const refused = await buttons(to);
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('conversation_with_agent');
      expect((await media(to)).status).toBe(409);
      expect((await call('POST', '/v2/wa/template', { key: a.adminKey, body: orderUpdate(a.channelId, to) })).status).toBe(201);
      const r = await sandbox(to, 'messages', { text: 'hello?' });
      const ev = await eventually(async () => events('inbound_message', (d) => d.messageId === r.body.messageId)[0]);
      expect(ev.data).toMatchObject({ handover: true, handoverStatus: 'queued' });
      expect(await call('PATCH', '/v1/handover/open', { key: a.adminKey, body: { audienceExternalId: aeid } })).toMatchObject({ body: { success: true } });
      expect((await buttons(to)).status).toBe(200);
    });

    it('a number that is not on the network: accepted, then failed with 131026, and the credits come back', async () => {
      const before = (await op(nodes[0]!, 'GET', `/admin/v1/organizations/${a.id}/credits`)).body.balance as number;
      const sent = await call('POST', '/v2/wa/template', { key: a.adminKey, body: orderUpdate(a.channelId, '9990000001') });
      expect(sent.status).toBe(201);
      const failed = await eventually(async () => events('message_status', (d) => d.messageId === sent.body.messageId)[0]);
      expect(failed.data).toMatchObject({ status: 'failed', errors: [{ code: 131026, title: 'Message undeliverable' }] });
      await eventually(async () => (await op(nodes[0]!, 'GET', `/admin/v1/organizations/${a.id}/credits`)).body.balance === before);
    });
  });
}

messagingSuite('embedded', async (clock) => [await startMessagingService({ clock })]);

const servers = useClusterServers();

messagingSuite('clustered, two nodes', async (clock) => {
  const env = (id: string) => ({
    ...servers.env('msg'),
    NODE_ID: id,
    ACTOR_PARTITIONS: '8',
    ACTOR_LEASE_MS: '2000',
    SECRETS_KEY: '1'.repeat(64),
    SANDBOX_NETWORK: 'true',
  });
  return Promise.all(['m1', 'm2'].map((id) => startMessagingService({ env: env(id), clock })));
});
