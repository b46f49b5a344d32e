import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { fakeGraphApp, FAKE_RECIPIENTS, FAKE_TOKEN } from './fake-graph.js';
import { listen } from './http-helpers.js';
import { op, startMessagingService } from './messaging-helpers.js';

/**
 * A channel on the "real" network: the whole service (REST → actor → Graph
 * adapter) against the recorded-shape fake Graph API, so the network's own
 * error envelopes come back through the API.
 */
describe('a channel on the Graph API (fake with recorded shapes)', () => {
  let graph: Awaited<ReturnType<typeof listen>>;
  let svc: TestService;
  let org: Awaited<ReturnType<TestService['createOrg']>>;
  let channelId: string;
  const requests: { path: string; body: unknown; auth: string | undefined }[] = [];

  beforeAll(async () => {
    graph = await listen(fakeGraphApp(requests));
    svc = await startMessagingService({ env: { GRAPH_API_BASE_URL: `${graph.url}/v27.0`, GRAPH_API_TIMEOUT_MS: '500' } });
    org = await svc.createOrg('Real');
    const ch = await op(svc, 'POST', `/admin/v1/organizations/${org.id}/channels`, {
      kind: 'whatsapp_cloud',
      name: 'Prod',
      network: 'graph',
      phoneNumberId: '106540352242922',
      businessAccountId: '102290129340398',
      accessToken: FAKE_TOKEN,
      appSecret: 'the-app-secret',
      verifyToken: 'the-verify-token',
    });
    expect(ch.status).toBe(201);
    expect(ch.body.templateSync).toEqual({ ok: true, synced: 2 });
    channelId = ch.body.id;
    await op(svc, 'POST', `/admin/v1/organizations/${org.id}/credits/top-up`, { amount: 10 });
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await graph?.close();
  });

  const send = (to: string) =>
    svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: { channelId, to, template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }] }] } } });
  const balance = async () => (await op(svc, 'GET', `/admin/v1/organizations/${org.id}/credits`)).body.balance as number;

  it('sends with the channel\'s token to /{phone-number-id}/messages and returns the network\'s message id', async () => {
    const r = await send(FAKE_RECIPIENTS.ok);
    expect(r.status).toBe(201);
    expect(r.body.messageId).toMatch(/^wamid\.HBgL/);
    expect(requests.at(-1)).toMatchObject({ path: '/v27.0/106540352242922/messages', auth: `Bearer ${FAKE_TOKEN}`, body: { messaging_product: 'whatsapp', to: FAKE_RECIPIENTS.ok, type: 'template' } });
    expect(await balance()).toBe(9);
    expect((await svc.running.services.store.contacts.list(org.id)).map((c) => c.audienceExternalId)).toEqual([`${FAKE_RECIPIENTS.ok}:106540352242922`]);
  });

  it('a rejection is a 502 with the network\'s code, title and details, and the credits come back', async () => {
    const r1 = await send(FAKE_RECIPIENTS.templateMissing);
    expect(r1.status).toBe(502);
    expect(r1.body).toMatchObject({ success: false, error: { code: 'network_rejected' }, errorDetails: { code: 132001, title: 'Template does not exist', message: 'template name (order_updat) does not exist in en_US' } });
    expect((await send(FAKE_RECIPIENTS.rateLimited)).body.errorDetails.code).toBe(130429);
    expect((await send(FAKE_RECIPIENTS.notAllowed)).body.errorDetails).toMatchObject({ code: 131030, message: expect.stringContaining('allowed list') });
    expect(await balance()).toBe(9);
  });

  it('no answer is a 503: charged when the message may have left, refunded when it cannot have', async () => {
    const down = await send(FAKE_RECIPIENTS.serverDown);
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: 'network_unavailable', details: { maybeSent: true } });
    expect((await send(FAKE_RECIPIENTS.hang)).body.error.details.maybeSent).toBe(true);
    expect(await balance()).toBe(7);
    await graph.close();
    const refused = await send(FAKE_RECIPIENTS.ok);
    expect(refused.status).toBe(503);
    expect(refused.body.error.details.maybeSent).toBe(false);
    expect(await balance()).toBe(7);
  });
});
