import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { signHubSignature } from '../../src/network/signature.js';
import { fakeGraphApp, FAKE_RECIPIENTS, FAKE_TOKEN } from './fake-graph.js';
import { listen } from './http-helpers.js';
import { eventually, op, startMessagingService } from './messaging-helpers.js';

const PN = '106540352242922';
const APP_SECRET = 'the-app-secret';

/**
 * A channel on the "real" network with customers who hide their number: the
 * network's signed webhooks in Meta's shapes go in, and the Graph requests
 * the adapter makes are recorded. GRAPH_API_BASE_URL is the host alone, as
 * it is set now: the version is the service's default.
 */
describe('customers without phone numbers on a Graph API channel (fake with recorded shapes)', () => {
  let graph: Awaited<ReturnType<typeof listen>>;
  let svc: TestService;
  let org: Awaited<ReturnType<TestService['createOrg']>>;
  let channelId: string;
  const requests: { path: string; body: unknown; auth: string | undefined }[] = [];
  let n = 0;

  const webhook = (message: Record<string, unknown>, contact?: Record<string, unknown>) => {
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [{ id: '102290129340398', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001111', phone_number_id: PN }, ...(contact ? { contacts: [contact] } : {}), messages: [{ id: `wamid.in.${n++}`, timestamp: String(Math.floor(Date.now() / 1000)), ...message }] } }] }],
    });
    return fetch(`${svc.url}/webhooks/whatsapp/${channelId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signHubSignature(APP_SECRET, body) }, body });
  };

  beforeAll(async () => {
    graph = await listen(fakeGraphApp(requests));
    svc = await startMessagingService({ env: { GRAPH_API_BASE_URL: graph.url, GRAPH_API_TIMEOUT_MS: '500' } });
    org = await svc.createOrg('Real');
    const ch = await op(svc, 'POST', `/admin/v1/organizations/${org.id}/channels`, {
      kind: 'whatsapp_cloud',
      name: 'Prod',
      network: 'graph',
      phoneNumberId: PN,
      businessAccountId: '102290129340398',
      accessToken: FAKE_TOKEN,
      appSecret: APP_SECRET,
      verifyToken: 'the-verify-token',
    });
    expect(ch.status).toBe(201);
    expect(ch.body.graphApi).toEqual({ version: 'v27.0', expiresOn: null });
    channelId = ch.body.id;
    await op(svc, 'POST', `/admin/v1/organizations/${org.id}/credits/top-up`, { amount: 10 });
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await graph?.close();
  });

  it('a BSUID-only message is the customer\'s; the reply goes by `recipient`, with the current version in the path', async () => {
    const userId = 'US.13491208655302741918';
    expect((await webhook({ from_user_id: userId, type: 'text', text: { body: 'hi, it is Ann' } }, { profile: { name: 'Ann', username: 'ann.lee' }, user_id: userId })).status).toBe(200);
    const aeid = `${userId}:${PN}`;
    const conv = await eventually(async () => (await svc.call('GET', `/v1/conversations/${aeid}`, { key: org.adminKey })).body.conversation);
    expect(conv).toMatchObject({ phone: null, userId, username: 'ann.lee', contactName: 'Ann' });
    const r = await svc.call('POST', '/v1/messages/text', { key: org.adminKey, body: { channelId, to: userId, text: { body: 'Hello Ann' } } });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    const sent = requests.at(-1)!;
    expect(sent.path).toBe(`/v27.0/${PN}/messages`);
    expect(sent.body).toMatchObject({ messaging_product: 'whatsapp', recipient_type: 'individual', recipient: userId, type: 'text', text: { body: 'Hello Ann' } });
    expect((sent.body as { to?: string }).to).toBeUndefined();
  });

  it('a template to a phone, then a reply with phone and BSUID, then a BSUID-only message: one contact, one conversation; statuses by BSUID find it', async () => {
    const phone = FAKE_RECIPIENTS.ok;
    const userId = 'US.77700000000000000001';
    const t = await svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: { channelId, to: phone, template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }] }] } } });
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    expect((requests.at(-1)!.body as { to?: string }).to).toBe(phone);
    expect((await webhook({ from: phone, from_user_id: userId, type: 'button', button: { payload: 'Track my order', text: 'Track my order' }, context: { from: '15550001111', id: t.body.messageId } }, { profile: { name: 'Kim' }, wa_id: phone, user_id: userId })).status).toBe(200);
    expect((await webhook({ from_user_id: userId, type: 'text', text: { body: 'still there?' } }, { profile: { name: 'Kim', username: 'kim' }, user_id: userId })).status).toBe(200);
    const contacts = (await svc.running.services.store.contacts.list(org.id)).filter((c) => c.audienceExternalId.startsWith(phone) || c.userId === userId);
    expect(contacts.map((c) => c.audienceExternalId)).toEqual([`${phone}:${PN}`]);
    const conv = await eventually(async () => (await svc.call('GET', `/v1/conversations/${userId}:${PN}`, { key: org.adminKey })).body.conversation);
    expect(conv).toMatchObject({ audienceExternalId: `${phone}:${PN}`, phone, userId, username: 'kim' });
    const history = await eventually(async () => {
      const h = (await svc.call('GET', `/v1/sessions/${conv.sessionId}/messages`, { key: org.adminKey })).body as unknown[];
      return h.length === 3 ? h : null;
    });
    expect(history).toHaveLength(3);
    // A status naming the customer by BSUID only reaches the message.
    const status = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [{ id: '102290129340398', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: PN }, statuses: [{ id: t.body.messageId, status: 'delivered', timestamp: String(Math.floor(Date.now() / 1000)), recipient_user_id: userId }] } }] }],
    });
    const sr = await fetch(`${svc.url}/webhooks/whatsapp/${channelId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signHubSignature(APP_SECRET, status) }, body: status });
    expect(((await sr.json()) as { applied: number }).applied).toBe(1);
    // /readyz names the channel's version and Meta's expiry of it.
    const ready = (await (await fetch(`${svc.url}/readyz`)).json()) as { graphApi: Record<string, unknown> };
    expect(ready.graphApi[channelId]).toEqual({ version: 'v27.0', expiresOn: null });
  });
});
