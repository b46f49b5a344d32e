import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../../src/http/errors.js';
import { silentLogger } from '../../src/log.js';
import { signHubSignature } from '../../src/network/index.js';
import { EXAMPLE_IDS } from '../../src/http/openapi-examples.js';
import { mayHoldUnstorableText, storableCopy, unstorableText } from '../../src/storable-text.js';
import type { WhatsAppChannel } from '../../src/store/channels/port.js';
import { adminSession, credentialsFor, documentedOperations, swapIds } from '../harness/openapi-sweep.js';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { InboxClient } from '../inbox/client.js';
import { MCP_HEADERS, rawPost } from '../mcp/helpers.js';
import { eventually, messagingOrg, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';
import { VisitorSocket, visitorCall, webChat } from '../webchat/helpers.js';

/**
 * Text no store keeps: U+0000 (PostgreSQL refuses it in `text` and `jsonb`)
 * and unpaired surrogates (`jsonb` refuses them; they are not Unicode). It is
 * refused where it comes in, in both modes alike, and never answered with a
 * 5xx. Before these checks a clustered node answered 500 to it on most
 * writes, and a conversation that had been sent such text refused every
 * later command (its list row could not be written).
 */
describe('finding text no store keeps', () => {
  it('finds U+0000 and unpaired surrogates in values and keys, and lets pairs and escaped backslashes be', () => {
    expect(unstorableText({ a: ['ok', { b: 'x\u0000y' }] })).toEqual({ path: ['a', 1, 'b'], problem: 'nul' });
    expect(unstorableText({ 'k\u0000': 1 })).toEqual({ path: ['k\u0000'], problem: 'nul' });
    expect(unstorableText(['\ud800x'])).toEqual({ path: [0], problem: 'unpaired_surrogate' });
    expect(unstorableText('x\udc00')).toEqual({ path: [], problem: 'unpaired_surrogate' });
    expect(unstorableText({ emoji: '😀 \ud83d\ude00', n: 1, t: true, z: null, literal: '\\u0000' })).toBeNull();
    const json = (v: unknown) => Buffer.from(JSON.stringify(v));
    expect(mayHoldUnstorableText(json({ a: 'x\u0000' }))).toBe(true);
    expect(mayHoldUnstorableText(json({ a: '\ud800' }))).toBe(true);
    expect(mayHoldUnstorableText(Buffer.from('{"a":"\\uD800"}'))).toBe(true);
    expect(mayHoldUnstorableText(json({ a: 'plain é 😀', b: '\\n' }))).toBe(false);
    expect(storableCopy({ 'k\u0000': ['a\u0000b', 'x\ud800', '😀'] })).toEqual({ 'k\ufffd': ['a\ufffdb', 'x\ufffd', '😀'] });
    const clean = { a: ['b'] };
    expect(storableCopy(clean)).toBe(clean);
    // Iterative: socket frames reach it before any depth check.
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unstorableText(deep)?.path).toHaveLength(100_000);
  });
});

describe('the error mapper', () => {
  it('answers PostgreSQL refusing text with 400, not 500, should such text get past the checks', async () => {
    const app = express();
    app.get('/nul', () => {
      throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
    });
    app.get('/escape', () => {
      throw Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' });
    });
    app.get('/other', () => {
      throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
    });
    app.use(errorHandler(silentLogger));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const path of ['/nul', '/escape']) {
        const r = await fetch(base + path);
        expect(r.status).toBe(400);
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
      }
      expect((await fetch(`${base}/other`)).status).toBe(500);
    } finally {
      server.close();
    }
  });
});

/** Every string and key of `value` in turn made hostile, each with where it is. */
function* hostile(value: unknown, path: string[] = []): Generator<[string, unknown]> {
  if (typeof value === 'string') {
    for (const bad of ['\u0000', '\ud800']) yield [`${path.join('.')} with ${JSON.stringify(bad)}`, `${value}${bad}`];
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) for (const [where, v] of hostile(value[i], [...path, String(i)])) yield [where, value.map((x, j) => (j === i ? v : x))];
  } else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) for (const [where, v] of hostile(o[k], [...path, k])) yield [where, { ...o, [k]: v }];
    yield [`a key of ${path.join('.') || 'the body'}`, { ...o, 'k\u0000': 'v' }];
  }
}

function suite(mode: string, start: () => Promise<TestService>) {
  describe(`text no store keeps (${mode})`, () => {
    let svc: TestService;
    let org: MessagingOrg;
    let phone = 4917700000000 + Math.floor(Math.random() * 1e6) * 100;

    beforeAll(async () => {
      svc = await start();
      org = await messagingOrg(svc, 'Hostile');
    }, 60_000);
    afterAll(() => svc?.close());

    /** The customer at a new number writes; resolves with the conversation's id once it is listed. */
    const customerWrites = async (text: string) => {
      const p = String(phone++);
      expect((await svc.call('POST', `/v1/sandbox/channels/${org.channelId}/customers/${p}/messages`, { key: org.adminKey, body: { text } })).status).toBe(201);
      const aeid = `${p}:${org.phoneNumberId}`;
      await eventually(async () => (await svc.call('GET', `/v1/conversations/${aeid}`, { key: org.adminKey })).status === 200);
      return { phone: p, aeid };
    };

    it('every documented operation answers such text in a body or a parameter with a 4xx, never a 5xx', async () => {
      const { phone: customer, aeid } = await customerWrites('Hi, my order is late.');
      const ticket = await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'Late order', description: 'It is late.', audienceExternalId: aeid } });
      expect(ticket.status).toBe(201);
      const pairs: [string, string][] = [
        [EXAMPLE_IDS.audienceExternalId, aeid],
        [EXAMPLE_IDS.customerPhone, customer],
        [EXAMPLE_IDS.ticketId, ticket.body.ticketId],
        [EXAMPLE_IDS.organizationId, org.id],
        [EXAMPLE_IDS.userId, org.adminId],
        [EXAMPLE_IDS.channelId, org.channelId],
        [EXAMPLE_IDS.phoneNumberId, org.phoneNumberId],
      ];
      const session = await adminSession(svc, org);

      const fivexx: string[] = [];
      let asked = 0;
      for (const { path, method, op, schemes } of await documentedOperations(svc)) {
        // The deprecated send answers every failure with an opaque 500, as the spec has it.
        if (path === '/v1/wa/template') continue;
        const { key, headers } = credentialsFor(schemes, { apiKey: org.adminKey, session });
        const url = (over: Record<string, string> = {}) => {
          let u = path;
          const query: string[] = [];
          for (const p of op.parameters ?? []) {
            const value = over[p.name] ?? (p.example === undefined ? undefined : encodeURIComponent(String(swapIds(p.example, pairs))));
            if (p.in === 'path') u = u.replace(`{${p.name}}`, value ?? 'x');
            else if (p.in === 'query' && value !== undefined) query.push(`${p.name}=${value}`);
          }
          return query.length === 0 ? u : `${u}?${query.join('&')}`;
        };
        const example = op.requestBody?.content['application/json']?.example;
        const body = example === undefined ? undefined : swapIds(example, pairs);
        const tries: [string, string, unknown][] = [];
        for (const p of op.parameters ?? []) if (p.in === 'path' || p.in === 'query') tries.push([`${p.in} ${p.name} with %00`, url({ [p.name]: 'a%00b' }), body]);
        if (body !== undefined) for (const [where, hostileBody] of hostile(body)) tries.push([`body ${where}`, url(), hostileBody]);
        for (const [where, u, b] of tries) {
          asked++;
          const r = await svc.call(method.toUpperCase(), u, { key, headers, body: b }).catch((e: Error) => ({ status: 0, body: e.message }));
          if (r.status === 0 || r.status >= 500) fivexx.push(`${method.toUpperCase()} ${path}, ${where}: ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
        }
      }
      expect(asked).toBeGreaterThan(500);
      expect(fivexx).toEqual([]);
    }, 300_000);

    it('refuses it with validation_failed naming the field, and the conversation takes the next send', async () => {
      const r = await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'Printer\u0000', description: 'On fire' } });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'validation_failed', message: 'subject must not contain the NUL character (U+0000)', details: [{ field: 'body.subject', code: 'invalid_text' }] });
      const s = await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'Printer', description: 'On fire \ud83d', attributes: {} } });
      expect(s.status).toBe(400);
      expect(s.body.error.details[0]).toMatchObject({ field: 'body.description', code: 'invalid_text' });
      expect((await svc.call('GET', '/v1/tickets?q=a%00b', { key: org.adminKey })).body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'query.q' }] });
      expect((await svc.call('GET', '/v1/tickets/T-1%00', { key: org.adminKey })).status).toBe(404);

      const { phone: customer } = await customerWrites('Hello');
      const text = (t: string) => svc.call('POST', '/v1/messages/text', { key: org.adminKey, body: { channelId: org.channelId, to: customer, text: { body: t } } });
      expect((await text('Sure\u0000')).status).toBe(400);
      expect((await text('Sure \ud800')).status).toBe(400);
      const ok = await text('Sure, here it is.');
      expect(ok.status).toBe(200);
      expect(ok.body.success).toBe(true);

      // A cursor is the service's own, but a caller can forge one.
      const page = await svc.call('GET', '/v1/conversations?view=all&limit=1', { key: org.adminKey });
      const cursor = JSON.parse(Buffer.from(page.body.nextCursor, 'base64url').toString('utf8'));
      const forged = Buffer.from(JSON.stringify({ ...cursor, k: `${cursor.k}\u0000` })).toString('base64url');
      expect((await svc.call('GET', `/v1/conversations?view=all&limit=1&cursor=${forged}`, { key: org.adminKey })).body.error.code).toBe('invalid_cursor');
    });

    it("keeps a customer's message with such text from the network readable (U+FFFD) instead of refusing it", async () => {
      const ch = (await svc.running.services.messaging.stores.channels.get(org.id, org.channelId)) as WhatsAppChannel;
      const from = String(phone++);
      const body = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [{ id: ch.businessAccountId, changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001111', phone_number_id: ch.phoneNumberId }, contacts: [{ profile: { name: 'K\u0000im' }, wa_id: from }], messages: [{ from, id: `wamid.nul${from}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: 'a\u0000b \ud800c' } }] } }] }],
      });
      const r = await svc.call('POST', `/webhooks/whatsapp/${org.channelId}`, { rawBody: body, headers: { 'x-hub-signature-256': signHubSignature(ch.credentials.appSecret, body) } });
      expect(r).toMatchObject({ status: 200, body: { received: 1, applied: 1 } });
      const stored = await svc.running.services.messaging.stores.messages.getByNetworkId(org.id, `wamid.nul${from}`);
      expect(stored?.content).toMatchObject({ type: 'text', text: 'a\ufffdb \ufffdc' });
      // The conversation goes on: the next message is recorded too.
      await eventually(async () => (await svc.call('GET', `/v1/conversations/${from}:${ch.phoneNumberId}`, { key: org.adminKey })).status === 200);
      expect((await svc.call('POST', `/v1/sandbox/channels/${org.channelId}/customers/${from}/messages`, { key: org.adminKey, body: { text: 'and more' } })).status).toBe(201);
    });

    it('the inbox socket, the web chat socket and MCP refuse it the same way', async () => {
      const inbox = await InboxClient.connect(svc.url, org.adminKey);
      try {
        await inbox.waitFor((f) => f.type === 'welcome');
        const refused = await inbox.command({ type: 'ticket_create', ticket: { subject: 'x\u0000', description: 'd' } });
        expect(refused).toMatchObject({ type: 'error', error: { code: 'validation_failed', message: 'ticket.subject must not contain the NUL character (U+0000)' } });
        expect((await inbox.command({ type: 'ticket_create', ticket: { subject: 'fine', description: 'd' } })).type).toBe('ack');
        // A frame nesting 30,000 deep (within the 64 KB a frame may have) is refused like any frame of no known type.
        inbox.ws.send(`${'['.repeat(30_000)}${']'.repeat(30_000)}`);
        await inbox.waitFor((f) => f.type === 'error' && f.error?.code === 'unknown_frame_type');
        expect((await svc.call('GET', '/healthz')).status).toBe(200);
      } finally {
        inbox.close();
      }

      const site = await webChat(svc, org.id);
      const v = visitorCall(svc, site.id);
      const { token } = (await v('POST', '/visitors', { body: {} })).body;
      expect((await v('POST', '/messages', { token, body: { text: 'hi\u0000' } })).status).toBe(400);
      const socket = await VisitorSocket.open(svc, site.id, token);
      try {
        await socket.until((f) => f.type === 'welcome');
        socket.send({ type: 'message', text: 'hello \ud800', clientId: 'c1' });
        expect(await socket.until((f) => f.type === 'error')).toMatchObject({ error: { code: 'validation_failed', message: expect.stringMatching(/^text must be Unicode text/) } });
        socket.send({ type: 'message', text: 'hello', clientId: 'c2' });
        expect(await socket.until((f) => f.type === 'ack')).toMatchObject({ clientId: 'c2' });
      } finally {
        socket.close();
      }

      const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_ticket', arguments: { subject: 'x\u0000', description: 'd' } } };
      const mcp = await rawPost(`${svc.running.mcpUrl}/mcp/platform`, JSON.stringify(call), { ...MCP_HEADERS, authorization: `Bearer ${org.adminKey}` });
      expect(mcp.status).toBe(400);
      expect(mcp.json.error).toMatchObject({ code: -32602, message: 'Invalid params: params.arguments.subject must not contain the NUL character (U+0000)' });
    });

    it("the sandbox providers refuse it in the provider's own shape", async () => {
      const providers = `${svc.url}/sandbox/providers`;
      const post = (url: string, key: string, body: string, type = 'application/json') => fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body });
      const refusedAccount = await post(`${providers}/stripe/accounts`, org.adminKey, JSON.stringify({ name: 'Shop\u0000' }));
      expect(refusedAccount.status).toBe(400);
      const account = await post(`${providers}/stripe/accounts`, org.adminKey, JSON.stringify({ name: 'Shop' }));
      expect(account.status).toBe(201);
      const stripeKey = ((await account.json()) as { api_key: string }).api_key;
      // Stripe's clients send forms: %00 there is a NUL in the value.
      const session = await post(`${providers}/stripe/v1/checkout/sessions`, stripeKey, 'mode=payment&line_items[0][quantity]=1&line_items[0][price_data][currency]=eur&line_items[0][price_data][unit_amount]=500&line_items[0][price_data][product_data][name]=Lid%00', 'application/x-www-form-urlencoded');
      expect(session.status).toBe(400);
      expect(await session.json()).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('must not contain the NUL character') } });
    });

    it('the sandbox Graph API refuses it as Graph does an invalid parameter', async () => {
      const ch = (await svc.running.services.messaging.stores.channels.get(org.id, org.channelId)) as WhatsAppChannel;
      const graph = `${svc.url}/sandbox/graph/v27.0/${ch.phoneNumberId}/messages`;
      const res = await fetch(graph, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ch.credentials.accessToken}` },
        body: JSON.stringify({ messaging_product: 'whatsapp', to: String(phone++), type: 'text', text: { body: 'x\u0000' } }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 100, type: 'OAuthException', error_data: { details: 'text.body must not contain the NUL character (U+0000)' } } });
    });
  });
}

suite('embedded', () => startMessagingService({ env: { SANDBOX_TOOLS: 'true' } }));

describe('clustered', () => {
  const servers = useClusterServers();
  suite('clustered', () => startMessagingService({ env: { ...servers.env(`ut${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true', SANDBOX_TOOLS: 'true' } }));
});
