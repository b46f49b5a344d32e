import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GraphApiNetwork, NetworkRejectedError, NetworkUnavailableError, parseWebhook, verifyHubSignature, type NetworkEvent } from '../../src/network/index.js';
import { createSqliteSandboxState, sandboxGraphRouter, SandboxNetwork, type SandboxAccount } from '../../src/network/sandbox/index.js';
import { createMemoryRateLimiter } from '../../src/store/ratelimit/memory.js';
import { openSandboxDb } from '../../src/store/index.js';
import { ManualClock } from '../../src/clock.js';
import { silentLogger } from '../../src/log.js';
import { fakeGraphApp, FAKE_RECIPIENTS, FAKE_TOKEN } from './fake-graph.js';
import { listen, rawBodyApp } from './http-helpers.js';

describe('Graph adapter against the fake Graph API (recorded shapes)', () => {
  let srv: Awaited<ReturnType<typeof listen>>;
  const requests: { path: string; body: unknown; auth: string | undefined }[] = [];
  let net: GraphApiNetwork;
  const account = { phoneNumberId: '106540352242922', businessAccountId: '102290129340398', accessToken: FAKE_TOKEN };
  beforeAll(async () => {
    srv = await listen(fakeGraphApp(requests));
    net = new GraphApiNetwork({ baseUrl: `${srv.url}/v27.0`, timeoutMs: 500 });
  });
  afterAll(() => srv.close());

  it('posts to /{phone-number-id}/messages with messaging_product and reads messages[0].id', async () => {
    const out = await net.send(account, FAKE_RECIPIENTS.ok, { type: 'template', template: { name: 'hello_world', language: { code: 'en_US', policy: 'deterministic' } } });
    expect(out).toEqual({ ok: true, messageId: expect.stringMatching(/^wamid\.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA/), waId: FAKE_RECIPIENTS.ok });
    expect(requests.at(-1)).toEqual({
      path: '/v27.0/106540352242922/messages',
      auth: `Bearer ${FAKE_TOKEN}`,
      body: { messaging_product: 'whatsapp', recipient_type: 'individual', to: FAKE_RECIPIENTS.ok, type: 'template', template: { name: 'hello_world', language: { code: 'en_US', policy: 'deterministic' } } },
    });
  });

  it('maps Graph error envelopes to code, title and details', async () => {
    const text = { type: 'text' as const, text: { body: 'x' } };
    expect(await net.send(account, FAKE_RECIPIENTS.templateMissing, text)).toEqual({
      ok: false,
      rejection: { code: 132001, title: 'Template does not exist', message: 'template name (order_updat) does not exist in en_US', httpStatus: 404, fbtraceId: 'A3mQzLk0c' },
    });
    expect(await net.send(account, FAKE_RECIPIENTS.rateLimited, text)).toMatchObject({ ok: false, rejection: { code: 130429, title: 'Rate limit hit' } });
    expect(await net.send(account, FAKE_RECIPIENTS.paramMismatch, text)).toMatchObject({ ok: false, rejection: { code: 132000, httpStatus: 400 } });
    // A code the adapter has no title for keeps the network's own words.
    expect(await net.send(account, FAKE_RECIPIENTS.notAllowed, text)).toMatchObject({ ok: false, rejection: { code: 131030, title: 'OAuthException', message: expect.stringContaining('allowed list') } });
    expect(await net.send({ ...account, accessToken: 'wrong' }, FAKE_RECIPIENTS.ok, text)).toMatchObject({ ok: false, rejection: { code: 190, httpStatus: 401, message: 'Invalid OAuth access token - Cannot parse access token' } });
  });

  it('treats a non-Graph error page, a timeout and an unreadable 2xx as "network unavailable"', async () => {
    const text = { type: 'text' as const, text: { body: 'x' } };
    await expect(net.send(account, FAKE_RECIPIENTS.serverDown, text)).rejects.toMatchObject({ name: 'NetworkUnavailableError', maybeSent: true });
    await expect(net.send(account, FAKE_RECIPIENTS.hang, text)).rejects.toMatchObject({ name: 'NetworkUnavailableError', maybeSent: true });
    await expect(net.send(account, FAKE_RECIPIENTS.garbage2xx, text)).rejects.toBeInstanceOf(NetworkUnavailableError);
    const refused = new GraphApiNetwork({ baseUrl: 'http://127.0.0.1:1/v27.0' });
    await expect(refused.send(account, FAKE_RECIPIENTS.ok, text)).rejects.toMatchObject({ maybeSent: false });
  });

  it('lists templates across pages, following paging.next', async () => {
    const list = await net.listTemplates(account);
    expect(list.map((t) => t.name)).toEqual(['hello_world', 'order_update']);
    await expect(net.listTemplates({ ...account, accessToken: 'nope' })).rejects.toBeInstanceOf(NetworkRejectedError);
  });
});

describe('Graph adapter against the sandbox network over HTTP', () => {
  let graph: Awaited<ReturnType<typeof listen>>;
  let receiver: Awaited<ReturnType<typeof listen>>;
  let sandbox: SandboxNetwork;
  let net: GraphApiNetwork;
  let acct: SandboxAccount;
  const clock = new ManualClock(Date.parse('2030-03-01T09:00:00Z'));
  const received: NetworkEvent[] = [];
  let receiverStatus = 200;
  let badSignatures = 0;

  beforeEach(async () => {
    received.length = 0;
    receiverStatus = 200;
    const hook = rawBodyApp();
    hook.post('/hook', (req, res) => {
      const raw = (req as unknown as { rawBody: Buffer }).rawBody;
      if (!verifyHubSignature(acct.appSecret, raw, req.headers['x-hub-signature-256'] as string | undefined)) {
        badSignatures++;
        res.sendStatus(401);
        return;
      }
      if (receiverStatus !== 200) {
        res.sendStatus(receiverStatus);
        return;
      }
      const parsed = parseWebhook(req.body);
      if (parsed.ok) received.push(...parsed.value.events);
      res.sendStatus(200);
    });
    hook.get('/hook', (req, res) => {
      if (req.query['hub.mode'] === 'subscribe' && req.query['hub.verify_token'] === acct.verifyToken) res.send(String(req.query['hub.challenge']));
      else res.sendStatus(403);
    });
    receiver = await listen(hook);
    const db = await openSandboxDb(null);
    sandbox = new SandboxNetwork({
      state: createSqliteSandboxState(db),
      limiter: createMemoryRateLimiter(clock),
      clock,
      log: silentLogger,
      statusDelayMs: 0,
      maxMessagesPerSecond: 5,
      webhookBaseUrl: () => receiver.url,
      retryDelaysMs: [20, 20],
    });
    const app = rawBodyApp();
    app.use('/sandbox/graph', sandboxGraphRouter(sandbox));
    graph = await listen(app);
    net = new GraphApiNetwork({ baseUrl: `${graph.url}/sandbox/graph/v27.0` });
    acct = await sandbox.provisionAccount({ callbackUrl: '/hook' });
  });
  afterEach(async () => {
    await sandbox.close();
    await graph.close();
    await receiver.close();
  });

  const account = () => ({ phoneNumberId: acct.phoneNumberId, businessAccountId: acct.businessAccountId, accessToken: acct.accessToken });
  const orderUpdate = (params: string[]) => ({
    type: 'template' as const,
    template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' as const }, components: [{ type: 'body' as const, parameters: params.map((t) => ({ type: 'text' as const, text: t })) }] },
  });

  it('echoes biz_opaque_callback_data in every status webhook of the message, as the Cloud API does; refuses one over 512 characters', async () => {
    const out = await net.send(account(), '4915112345678', orderUpdate(['Ann', 'A-1', 'Monday']), 'sb1.send.1');
    expect(out.ok).toBe(true);
    await sandbox.idle();
    expect(received.map((e) => e.kind === 'status' && [e.status, e.callbackData])).toEqual([
      ['sent', 'sb1.send.1'],
      ['delivered', 'sb1.send.1'],
      ['read', 'sb1.send.1'],
    ]);
    received.length = 0;
    const plain = await net.send(account(), '4915112345678', orderUpdate(['Ann', 'A-1', 'Monday']));
    expect(plain.ok).toBe(true);
    await sandbox.idle();
    expect(received.every((e) => e.kind === 'status' && e.callbackData === undefined)).toBe(true);
    const tooLong = await net.send(account(), '4915112345678', orderUpdate(['Ann', 'A-1', 'Monday']), 'x'.repeat(513));
    expect(tooLong).toMatchObject({ ok: false, rejection: { code: 100 } });
  });

  it('the callback URL passes the hub.challenge verification', async () => {
    expect(await sandbox.verifyCallback(acct.phoneNumberId)).toBe(true);
  });

  it('accepts a template send, then reports sent, delivered, read through signed webhooks', async () => {
    const out = await net.send(account(), '4915112345678', orderUpdate(['Ann', 'A-1', 'Monday']));
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.messageId).toMatch(/^wamid\./);
    await sandbox.idle();
    expect(received.map((e) => e.kind === 'status' && `${e.networkMessageId === out.messageId}:${e.status}`)).toEqual(['true:sent', 'true:delivered', 'true:read']);
    expect(badSignatures).toBe(0);
  });

  it('rejects like the network: unknown template 132001, wrong count 132000, wrong type 132012, paused 132015, bad fields 100, bad token 190', async () => {
    const rej = async (msg: Parameters<GraphApiNetwork['send']>[2], acc = account(), to = '4915112345678') => {
      clock.advance(1000); // stay under the throughput limit
      const out = await net.send(acc, to, msg);
      if (out.ok) throw new Error('expected a rejection');
      return out.rejection;
    };
    expect(await rej({ type: 'template', template: { name: 'nope', language: { code: 'en_US' } } })).toMatchObject({ code: 132001, httpStatus: 404, message: 'template name (nope) does not exist in en_US' });
    expect(await rej({ type: 'template', template: { name: 'hello_world', language: { code: 'fr' } } })).toMatchObject({ code: 132001 });
    expect(await rej(orderUpdate(['only one']))).toMatchObject({ code: 132000 });
    expect(await rej(orderUpdate(['a', 'b', 'c', 'd']))).toMatchObject({ code: 132000 });
    expect(
      await rej({
        type: 'template',
        template: { name: 'appointment_reminder', language: { code: 'en_US' }, components: [{ type: 'header', parameters: [{ type: 'text', text: 'x' }] }, { type: 'body', parameters: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, { type: 'button', sub_type: 'url', index: 2, parameters: [{ type: 'text', text: 'x' }] }] },
      }),
    ).toMatchObject({ code: 132012 });
    expect(await rej({ type: 'template', template: { name: 'winter_promo', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'a' }] }] } })).toMatchObject({ code: 132015 });
    expect(await rej({ type: 'image', image: { link: 'https://x.example/a.png', id: 'both' } })).toMatchObject({ code: 100 });
    expect(await rej({ type: 'text', text: { body: 'hi' } }, account(), '12ab')).toMatchObject({ code: 100 });
    expect(await rej({ type: 'interactive', interactive: { type: 'button', body: { text: 'x' }, action: { buttons: [] } } })).toMatchObject({ code: 131009 });
    expect(await rej({ type: 'text', text: { body: 'hi' } }, { ...account(), accessToken: 'EAAnope' })).toMatchObject({ code: 190, httpStatus: 401 });
    expect(await rej({ type: 'text', text: { body: 'hi' } }, { ...account(), phoneNumberId: '123' })).toMatchObject({ code: 100 });
  });

  it('past the throughput limit answers 130429', async () => {
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await net.send(account(), '4915112345678', { type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } }));
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.rejection.code)).toEqual([130429, 130429]);
  });

  it('a free-form send outside the 24-hour window fails with 131047; inside it is delivered', async () => {
    const out = await net.send(account(), '4915112345678', { type: 'text', text: { body: 'hello?' } });
    expect(out.ok).toBe(true);
    await sandbox.idle();
    expect(received).toMatchObject([{ kind: 'status', status: 'failed', errors: [{ code: 131047, title: 'Re-engagement message' }] }]);
    received.length = 0;

    const tap = await sandbox.customerText(acct.phoneNumberId, '4915112345678', 'Hi, I need help', 'Ann');
    expect(tap.delivered).toBe(true);
    expect(received).toMatchObject([{ kind: 'message', from: '4915112345678', profileName: 'Ann', content: { type: 'text', text: 'Hi, I need help' } }]);
    received.length = 0;
    const again = await net.send(account(), '4915112345678', { type: 'interactive', interactive: { type: 'button', body: { text: 'Pick one' }, action: { buttons: [{ type: 'reply', reply: { id: 'a', title: 'A' } }, { type: 'reply', reply: { id: 'b', title: 'B' } }] } } });
    await sandbox.idle();
    expect(received.map((e) => e.kind === 'status' && e.status)).toEqual(['sent', 'delivered', 'read']);

    received.length = 0;
    if (!again.ok) throw new Error('send failed');
    await sandbox.customerTapButton(acct.phoneNumberId, '4915112345678', again.messageId, 'b');
    expect(received).toMatchObject([{ kind: 'message', content: { type: 'button_reply', buttonId: 'b', text: 'B' }, replyTo: again.messageId }]);
    await expect(sandbox.customerTapButton(acct.phoneNumberId, '4915112345678', again.messageId, 'zzz')).rejects.toMatchObject({ code: 'no_such_button' });
    await expect(sandbox.customerTapButton(acct.phoneNumberId, '4915100000000', again.messageId, 'b')).rejects.toMatchObject({ status: 404 });

    clock.advance(24 * 3600_000);
    received.length = 0;
    await net.send(account(), '4915112345678', { type: 'text', text: { body: 'still there?' } });
    await sandbox.idle();
    expect(received).toMatchObject([{ kind: 'status', status: 'failed', errors: [{ code: 131047 }] }]);
  });

  it('a number that is not on WhatsApp fails with 131026', async () => {
    await net.send(account(), '9991234567', { type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } });
    await sandbox.idle();
    expect(received).toMatchObject([{ kind: 'status', status: 'failed', errors: [{ code: 131026 }] }]);
  });

  it('a quick-reply tap carries the payload given at send time, or the button text', async () => {
    const out = await net.send(account(), '4915112345678', {
      type: 'template',
      template: {
        name: 'order_update',
        language: { code: 'en_US' },
        components: [
          { type: 'body', parameters: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'text', text: 'c' }] },
          { type: 'button', sub_type: 'quick_reply', index: 0, parameters: [{ type: 'payload', payload: 'TRACK-A-1' }] },
        ],
      },
    });
    if (!out.ok) throw new Error('send failed');
    await sandbox.idle();
    received.length = 0;
    await sandbox.customerTapQuickReply(acct.phoneNumberId, '4915112345678', out.messageId, 0);
    await sandbox.customerTapQuickReply(acct.phoneNumberId, '4915112345678', out.messageId, 1);
    expect(received).toMatchObject([
      { kind: 'message', content: { type: 'button_reply', payload: 'TRACK-A-1', text: 'Track my order' }, replyTo: out.messageId },
      { kind: 'message', content: { type: 'button_reply', payload: 'Talk to an agent', text: 'Talk to an agent' } },
    ]);
    const phone = await sandbox.customerPhone(acct.phoneNumberId, '4915112345678');
    expect(phone.map((m) => m.direction)).toEqual(['to_customer', 'from_customer', 'from_customer']);
    expect(phone[0]!.status).toBe('read');
  });

  it('redelivers a webhook the receiver did not take, with the same signed body', async () => {
    receiverStatus = 503;
    const first = await sandbox.customerText(acct.phoneNumberId, '4915112345678', 'are you there?');
    expect(first.delivered).toBe(false);
    receiverStatus = 200;
    await sandbox.idle();
    expect(received).toMatchObject([{ kind: 'message', networkMessageId: first.messageId }]);
  });

  it('serves the template API with paging, and creates and deletes templates', async () => {
    const all = await net.listTemplates(account());
    expect(all.map((t) => `${t.name}/${t.language}/${t.status}`)).toContain('order_update/en_US/APPROVED');
    expect(all.length).toBe(7);
    const res = await fetch(`${graph.url}/sandbox/graph/v27.0/${acct.businessAccountId}/message_templates?limit=2`, { headers: { authorization: `Bearer ${acct.accessToken}` } });
    const page = (await res.json()) as { data: unknown[]; paging: { next?: string } };
    expect(page.data).toHaveLength(2);
    expect(page.paging.next).toContain('after=');
    const created = await fetch(`${graph.url}/sandbox/graph/v27.0/${acct.businessAccountId}/message_templates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'new_one', language: 'en_US', category: 'utility', components: [{ type: 'BODY', text: 'Hi {{1}}' }] }),
    });
    expect(await created.json()).toMatchObject({ status: 'APPROVED', category: 'UTILITY' });
    expect((await net.listTemplates(account())).length).toBe(8);
    const del = await fetch(`${graph.url}/sandbox/graph/v27.0/${acct.businessAccountId}/message_templates?name=new_one`, { method: 'DELETE', headers: { authorization: `Bearer ${acct.accessToken}` } });
    expect(await del.json()).toEqual({ success: true });
    const other = await sandbox.provisionAccount({ callbackUrl: '/hook' });
    await expect(net.listTemplates({ businessAccountId: acct.businessAccountId, accessToken: other.accessToken })).rejects.toMatchObject({ rejection: { code: 100 } });
  });
});
