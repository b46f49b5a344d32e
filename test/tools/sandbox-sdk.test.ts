import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { gmail as gmailApi } from '@googleapis/gmail';
import { calendar as calendarApi } from '@googleapis/calendar';
import { CodeChallengeMethod, OAuth2Client } from 'google-auth-library';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { fieldProblems } from './provider-fields.js';
import { schemaProblems } from './provider-schemas.js';
import type { DomainEvent } from '../../src/events/types.js';
import { GraphApiNetwork } from '../../src/network/index.js';

/*
 * The sandboxes as a developer meets them: the providers' official clients,
 * configured with nothing but their documented base-URL options and the
 * credentials `GET /sandbox` hands out. Every object the sandboxes return is
 * held to the field lists of the clients' own typings
 * (test/fixtures/provider-fields.json) and validated against the providers'
 * published definitions: Meta's OpenAPI of the Cloud API, Google's discovery
 * documents, Stripe's OpenAPI spec (test/fixtures/provider-schemas.json).
 */

interface Directory {
  graph: string;
  google: string;
  googleOAuth: string;
  stripe: string;
  credentials?: any;
}

/**
 * Google's JSON error envelope, which the discovery documents do not define:
 * as Google documents it for its JSON APIs ("Standard error responses" of the
 * Google API design guide / AIP-193 in their v1 JSON form).
 */
function googleErrorProblems(body: any): string[] {
  const out: string[] = [];
  const e = body?.error;
  if (typeof e !== 'object' || e === null) return ['no error object'];
  if (!Number.isInteger(e.code)) out.push('error.code is not an integer');
  if (typeof e.message !== 'string') out.push('error.message is not a string');
  if (typeof e.status !== 'string' || !/^[A-Z_]+$/.test(e.status)) out.push('error.status is not a canonical code name');
  if (!Array.isArray(e.errors)) out.push('error.errors is not a list');
  for (const x of e.errors ?? []) if (typeof x.message !== 'string' || typeof x.domain !== 'string' || typeof x.reason !== 'string') out.push(`error.errors entry ${JSON.stringify(x)} lacks message, domain or reason`);
  for (const k of Object.keys(e)) if (!['code', 'message', 'errors', 'status', 'details'].includes(k)) out.push(`unknown error.${k}`);
  return out;
}

/** Signs in on the sandbox consent page as `email` and returns the `code` the redirect carries. */
async function consent(authUrl: string, email: string): Promise<URL> {
  const page = await (await fetch(authUrl)).text();
  const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1]?.replace(/&amp;/g, '&');
  const request = /name="request" value="([^"]+)"/.exec(page)?.[1];
  if (action === undefined || request === undefined) throw new Error(`no consent form: ${page.slice(0, 300)}`);
  const r = await fetch(action, { method: 'POST', body: new URLSearchParams({ request, email, decision: 'approve' }), redirect: 'manual' });
  expect(r.status).toBe(302);
  return new URL(r.headers.get('location')!);
}

describe('the sandboxes driven by the official clients, by base URL only', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let dir: Directory;
  let stripeA: Stripe;
  let stripeB: Stripe;
  let receiver: Server;
  const received: { signature: string; body: string }[] = [];
  const stripeKeys = new Map<string, string>();

  beforeAll(async () => {
    // The webhook receiver of the developer's app runs on this machine.
    svc = await startTestService({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
    a = await svc.createOrg('A');
    b = await svc.createOrg('B');
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ signature: String(req.headers['stripe-signature']), body });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    dir = (await (await fetch(`${svc.url}/sandbox`)).json()) as Directory;
    const stripeFor = async (key: string, name: string) => {
      const account = (await (await fetch(`${svc.url}/sandbox/providers/stripe/accounts`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ name }) })).json()) as { api_key: string };
      const u = new URL(dir.stripe);
      stripeKeys.set(name, account.api_key);
      return new Stripe(account.api_key, { host: u.hostname, port: Number(u.port), protocol: 'http', maxNetworkRetries: 0 });
    };
    stripeA = await stripeFor(a.adminKey, 'Lid Shop');
    stripeB = await stripeFor(b.adminKey, 'Other Shop');
  });
  afterAll(async () => {
    await new Promise((r) => receiver?.close(r));
    await svc?.close();
  });

  it('GET /sandbox: the four base URLs at the roots of origins of their own; with an API key the credentials', async () => {
    for (const k of ['graph', 'google', 'googleOAuth', 'stripe'] as const) expect(dir[k]).toMatch(/^http:\/\/localhost:\d+$/);
    expect(new Set([dir.graph, dir.google, dir.googleOAuth, dir.stripe]).size).toBe(4);
    expect(dir.credentials).toBeUndefined();
    const withKey = (await svc.call('GET', '/sandbox', { key: a.adminKey })).body;
    expect(withKey.credentials.googleOAuth).toMatchObject({ clientId: expect.any(String), clientSecret: expect.any(String) });
    expect(withKey.credentials.stripe.createAccount.url).toBe(`${svc.running.url}/sandbox/providers/stripe/accounts`);
    expect((await svc.call('GET', '/sandbox', { key: 'sk_not_a_key' })).status).toBe(401);
  });

  describe('Stripe (stripe with host, port and protocol)', () => {
    it('account: every field Stripe always returns; Request-Id req_… on the answer', async () => {
      const account = await stripeA.accounts.retrieveCurrent();
      expect(fieldProblems('stripe', 'account', account)).toEqual([]);
      expect(schemaProblems('stripe', 'account', account)).toEqual([]);
      expect(account).toMatchObject({ object: 'account', type: 'standard', details_submitted: true, payouts_enabled: true, email: expect.stringContaining('@') });
      expect(account.lastResponse.requestId).toMatch(/^req_[A-Za-z0-9]{14}$/);
    });

    it('checkout session: create, retrieve, list, expire; complete objects; metadata kept', async () => {
      const created = await stripeA.checkout.sessions.create({
        mode: 'payment',
        line_items: [{ quantity: 2, price_data: { currency: 'eur', unit_amount: 1250, product_data: { name: 'Replacement lid' } } }],
        success_url: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
        metadata: { order: '1042' },
        locale: 'de',
      });
      expect(fieldProblems('stripe', 'checkout.session', created)).toEqual([]);
      expect(schemaProblems('stripe', 'checkout.session', created)).toEqual([]);
      expect(created).toMatchObject({ object: 'checkout.session', status: 'open', payment_status: 'unpaid', amount_total: 2500, metadata: { order: '1042' }, locale: 'de', ui_mode: 'hosted', payment_method_types: ['card'] });
      const again = await stripeA.checkout.sessions.retrieve(created.id);
      expect(again.id).toBe(created.id);
      expect(fieldProblems('stripe', 'checkout.session', again)).toEqual([]);
      expect(schemaProblems('stripe', 'checkout.session', again)).toEqual([]);
      expect((await stripeA.checkout.sessions.list({ limit: 1 })).data.map((s) => s.id)).toEqual([created.id]);
      const expired = await stripeA.checkout.sessions.expire(created.id);
      expect(expired).toMatchObject({ status: 'expired', url: null });
      expect(fieldProblems('stripe', 'checkout.session', expired)).toEqual([]);
      expect(schemaProblems('stripe', 'checkout.session', expired)).toEqual([]);
    });

    it('webhook endpoint: create (description and metadata kept) and list; a paid session → its payment intent and its event, retrievable, signed webhook the SDK verifies', async () => {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/stripe`;
      const endpoint = await stripeA.webhookEndpoints.create({ url, enabled_events: ['checkout.session.completed'], description: 'orders', metadata: { team: 'support' } });
      expect(fieldProblems('stripe', 'webhook_endpoint', endpoint)).toEqual([]);
      expect(schemaProblems('stripe', 'webhook_endpoint', endpoint)).toEqual([]);
      expect(endpoint).toMatchObject({ description: 'orders', metadata: { team: 'support' }, livemode: false, secret: expect.stringMatching(/^whsec_/) });
      const listed = await stripeA.webhookEndpoints.list();
      expect(listed.data.map((e) => e.id)).toEqual([endpoint.id]);
      expect(listed.data[0]!.secret).toBeUndefined();
      expect(fieldProblems('stripe', 'webhook_endpoint', listed.data[0])).toEqual([]);
      expect(schemaProblems('stripe', 'webhook_endpoint', listed.data[0])).toEqual([]);

      const session = await stripeA.checkout.sessions.create({ mode: 'payment', line_items: [{ quantity: 1, price_data: { currency: 'eur', unit_amount: 900, product_data: { name: 'Mug' } } }] });
      // The customer pays on the sandbox's checkout page.
      const page = await (await fetch(session.url!)).text();
      const action = /<form method="post" action="([^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&');
      expect((await fetch(action, { method: 'POST', body: new URLSearchParams({ email: 'ada@example.com', card: '4242424242424242' }) })).status).toBe(200);

      const paid = await stripeA.checkout.sessions.retrieve(session.id);
      expect(paid).toMatchObject({ status: 'complete', payment_status: 'paid', customer_details: { email: 'ada@example.com' } });
      expect(fieldProblems('stripe', 'checkout.session', paid)).toEqual([]);
      expect(schemaProblems('stripe', 'checkout.session', paid)).toEqual([]);
      const intent = await stripeA.paymentIntents.retrieve(paid.payment_intent as string);
      expect(fieldProblems('stripe', 'payment_intent', intent)).toEqual([]);
      expect(schemaProblems('stripe', 'payment_intent', intent)).toEqual([]);
      expect(intent).toMatchObject({ id: paid.payment_intent, status: 'succeeded', amount: 900, amount_received: 900, currency: 'eur', receipt_email: 'ada@example.com' });

      const events = await stripeA.events.list({ type: 'checkout.session.completed' });
      expect(events.data).toHaveLength(1);
      const event = await stripeA.events.retrieve(events.data[0]!.id);
      expect(fieldProblems('stripe', 'event', event)).toEqual([]);
      expect(schemaProblems('stripe', 'event', event)).toEqual([]);
      expect(event).toMatchObject({ type: 'checkout.session.completed', request: { id: null, idempotency_key: null }, data: { object: { id: session.id, payment_status: 'paid' } } });

      expect(received).toHaveLength(1);
      const delivered = stripeA.webhooks.constructEvent(received[0]!.body, received[0]!.signature, endpoint.secret!);
      expect(delivered.id).toBe(event.id);

      // Refunds: part, then the rest by charge; no more than was paid; each retrievable and listed, each a refund.created event.
      const part = await stripeA.refunds.create({ payment_intent: intent.id, amount: 400, reason: 'requested_by_customer', metadata: { ticket: 'T-1' } }, { idempotencyKey: 'refund-1' });
      expect(part).toMatchObject({ object: 'refund', amount: 400, currency: 'eur', status: 'succeeded', payment_intent: intent.id, charge: intent.latest_charge, reason: 'requested_by_customer', metadata: { ticket: 'T-1' } });
      expect(part.lastResponse.requestId).toMatch(/^req_/);
      expect(fieldProblems('stripe', 'refund', part)).toEqual([]);
      expect(schemaProblems('stripe', 'refund', part)).toEqual([]);
      expect((await stripeA.refunds.create({ payment_intent: intent.id, amount: 400, reason: 'requested_by_customer', metadata: { ticket: 'T-1' } }, { idempotencyKey: 'refund-1' })).id).toBe(part.id);
      await expect(stripeA.refunds.create({ payment_intent: intent.id, amount: 501 })).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, code: 'amount_too_large' });
      const rest = await stripeA.refunds.create({ charge: intent.latest_charge as string });
      expect(rest.amount).toBe(500);
      await expect(stripeA.refunds.create({ payment_intent: intent.id })).rejects.toMatchObject({ statusCode: 400, code: 'charge_already_refunded' });
      await expect(stripeB.refunds.create({ payment_intent: intent.id })).rejects.toMatchObject({ statusCode: 404, code: 'resource_missing' });
      await expect(stripeB.refunds.retrieve(part.id)).rejects.toMatchObject({ statusCode: 404 });
      expect(schemaProblems('stripe', 'refund', await stripeA.refunds.retrieve(part.id))).toEqual([]);
      expect((await stripeA.refunds.list({ payment_intent: intent.id })).data.map((r) => r.id).sort()).toEqual([part.id, rest.id].sort());
      const refundEvents = (await stripeA.events.list({ type: 'refund.created' })).data;
      expect(refundEvents.map((e) => (e.data.object as { id: string }).id).sort()).toEqual([part.id, rest.id].sort());
      for (const e of refundEvents) expect(schemaProblems('stripe', 'event', e)).toEqual([]);
      expect(refundEvents.find((e) => (e.data.object as { id: string }).id === part.id)!.request).toMatchObject({ id: part.lastResponse.requestId, idempotency_key: 'refund-1' });
    });

    it("another account's objects answer 404 (resource_missing), never its data", async () => {
      const mine = await stripeA.checkout.sessions.list({ limit: 100 });
      const paid = mine.data.find((s) => s.payment_status === 'paid')!;
      for (const call of [() => stripeB.checkout.sessions.retrieve(paid.id), () => stripeB.paymentIntents.retrieve(paid.payment_intent as string), () => stripeB.events.retrieve((mine.data[0] as any).id.replace('cs_', 'evt_'))]) {
        await expect(call()).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404 });
      }
      expect((await stripeB.events.list()).data).toEqual([]);
      expect((await stripeB.refunds.list()).data).toEqual([]);
      expect((await stripeB.webhookEndpoints.list()).data).toEqual([]);
      expect((await stripeB.checkout.sessions.list()).data).toEqual([]);
    });

    it('an unknown path answers in Stripe\'s error shape: the SDK raises its typed error with the request id', async () => {
      const err = await stripeA.rawRequest('GET', '/v1/not_a_resource').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(err).toMatchObject({ statusCode: 404, type: 'StripeInvalidRequestError', requestId: expect.stringMatching(/^req_/) });
      expect((err as Error).message).toContain('Unrecognized request URL');
      const raw = await fetch(`${dir.stripe}/nothing/here`);
      expect(raw.headers.get('request-id')).toMatch(/^req_/);
      const body = await raw.json();
      expect(body).toEqual({ error: { type: 'invalid_request_error', message: expect.stringContaining('Unrecognized request URL') } });
      expect(schemaProblems('stripe', 'error', body)).toEqual([]);
      // A known path refused answers the same envelope (a session of nobody's).
      const missing = await fetch(`${dir.stripe}/v1/checkout/sessions/cs_test_nothing`, { headers: { authorization: `Bearer ${stripeKeys.get('Lid Shop')}` } });
      expect(missing.status).toBe(404);
      expect(schemaProblems('stripe', 'error', await missing.json())).toEqual([]);
    });
  });

  describe('Google (google-auth-library endpoints, googleapis rootUrl)', () => {
    let oauth: OAuth2Client;

    it('OAuth: authorization code with PKCE exchanged by google-auth-library at the sandbox endpoints (loopback redirect URI)', async () => {
      const creds = (await svc.call('GET', '/sandbox', { key: a.adminKey })).body.credentials.googleOAuth;
      oauth = new OAuth2Client({
        clientId: creds.clientId,
        clientSecret: creds.clientSecret,
        redirectUri: 'http://127.0.0.1:8765/oauth2callback',
        endpoints: { oauth2AuthBaseUrl: `${dir.googleOAuth}/o/oauth2/v2/auth`, oauth2TokenUrl: `${dir.googleOAuth}/token`, oauth2RevokeUrl: `${dir.googleOAuth}/revoke` },
      });
      const { codeVerifier, codeChallenge } = await oauth.generateCodeVerifierAsync();
      const authUrl = oauth.generateAuthUrl({ access_type: 'offline', scope: creds.scopes, state: 'st-1', code_challenge_method: CodeChallengeMethod.S256, code_challenge: codeChallenge! });
      const back = await consent(authUrl, 'dev@example.com');
      expect(back.origin + back.pathname).toBe('http://127.0.0.1:8765/oauth2callback');
      expect(back.searchParams.get('state')).toBe('st-1');
      const { tokens } = await oauth.getToken({ code: back.searchParams.get('code')!, codeVerifier });
      expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^ya29\./), refresh_token: expect.any(String), token_type: 'Bearer' });
      oauth.setCredentials(tokens);
    });

    it('Gmail: profile, messages list/get (full and raw), attachments.get, send', async () => {
      const gmail = gmailApi({ version: 'v1', auth: oauth, rootUrl: `${dir.google}/` });
      const profile = (await gmail.users.getProfile({ userId: 'me' })).data;
      expect(profile).toMatchObject({ emailAddress: 'dev@example.com', messagesTotal: 3 });
      expect(fieldProblems('gmail', 'Profile', profile)).toEqual([]);
      expect(schemaProblems('gmail', 'Profile', profile)).toEqual([]);
      const list = (await gmail.users.messages.list({ userId: 'me', q: 'has:attachment' })).data;
      expect(fieldProblems('gmail', 'ListMessagesResponse', list)).toEqual([]);
      expect(schemaProblems('gmail', 'ListMessagesResponse', list)).toEqual([]);
      expect(list.messages).toHaveLength(1);
      const id = list.messages![0]!.id!;
      const full = (await gmail.users.messages.get({ userId: 'me', id })).data;
      expect(fieldProblems('gmail', 'Message', full)).toEqual([]);
      expect(schemaProblems('gmail', 'Message', full)).toEqual([]);
      for (const f of ['id', 'threadId', 'labelIds', 'snippet', 'payload', 'sizeEstimate', 'historyId', 'internalDate']) expect(full, f).toHaveProperty(f);
      const raw = (await gmail.users.messages.get({ userId: 'me', id, format: 'raw' })).data;
      expect(raw.payload).toBeUndefined();
      expect(schemaProblems('gmail', 'Message', raw)).toEqual([]);
      for (const format of ['minimal', 'metadata'] as const) expect(schemaProblems('gmail', 'Message', (await gmail.users.messages.get({ userId: 'me', id, format })).data), format).toEqual([]);
      const rfc822 = Buffer.from(raw.raw!, 'base64url').toString('utf8');
      expect(rfc822).toMatch(/^From: Billing <billing@example.com>\r\n/);
      expect(rfc822).toContain('Content-Disposition: attachment; filename="receipt-11.pdf"');
      const part = full.payload!.parts!.find((p) => p.filename === 'receipt-11.pdf')!;
      const attachment = (await gmail.users.messages.attachments.get({ userId: 'me', messageId: id, id: part.body!.attachmentId! })).data;
      expect(fieldProblems('gmail', 'MessagePartBody', attachment)).toEqual([]);
      expect(schemaProblems('gmail', 'MessagePartBody', attachment)).toEqual([]);
      expect(Buffer.from(attachment.data!, 'base64url').toString()).toBe('%PDF-1.4 sandbox receipt');
      expect(attachment.size).toBe(part.body!.size);
      await expect(gmail.users.messages.attachments.get({ userId: 'me', messageId: id, id: 'ANGjdnot-listed' })).rejects.toMatchObject({ status: 404 });

      const mail = ['To: someone@example.com', 'Subject: Hello from the SDK', 'Content-Type: text/plain; charset="UTF-8"', '', 'Sent through @googleapis/gmail.'].join('\r\n');
      const sent = (await gmail.users.messages.send({ userId: 'me', requestBody: { raw: Buffer.from(mail).toString('base64url') } })).data;
      expect(sent.labelIds).toContain('SENT');
      expect(schemaProblems('gmail', 'Message', sent)).toEqual([]);
      expect(schemaProblems('gmail', 'ListLabelsResponse', (await gmail.users.labels.list({ userId: 'me' })).data)).toEqual([]);
      const draft = (await gmail.users.drafts.create({ userId: 'me', requestBody: { message: { raw: Buffer.from(mail).toString('base64url') } } })).data;
      expect(schemaProblems('gmail', 'Draft', draft)).toEqual([]);
      const back = (await gmail.users.messages.get({ userId: 'me', id: sent.id!, format: 'raw' })).data;
      expect(Buffer.from(back.raw!, 'base64url').toString()).toContain('Subject: Hello from the SDK');
      const thread = (await gmail.users.threads.get({ userId: 'me', id: sent.threadId! })).data;
      expect(fieldProblems('gmail', 'Thread', thread)).toEqual([]);
      expect(schemaProblems('gmail', 'Thread', thread)).toEqual([]);
      expect(thread.messages!.map((m) => m.id)).toEqual([sent.id]);
    });

    it('Calendar: events insert and list', async () => {
      const calendar = calendarApi({ version: 'v3', auth: oauth, rootUrl: `${dir.google}/` });
      const start = new Date(Date.now() + 86_400_000);
      start.setUTCMinutes(0, 0, 0);
      const inserted = (await calendar.events.insert({ calendarId: 'primary', requestBody: { summary: 'Call about order 1042', start: { dateTime: start.toISOString() }, end: { dateTime: new Date(start.getTime() + 1_800_000).toISOString() } } })).data;
      expect(fieldProblems('calendar', 'Event', inserted)).toEqual([]);
      expect(schemaProblems('calendar', 'Event', inserted)).toEqual([]);
      expect(inserted).toMatchObject({ summary: 'Call about order 1042', status: 'confirmed' });
      const events = (await calendar.events.list({ calendarId: 'primary', timeMin: new Date().toISOString(), singleEvents: true, orderBy: 'startTime' })).data;
      expect(fieldProblems('calendar', 'Events', events)).toEqual([]);
      expect(schemaProblems('calendar', 'Events', events)).toEqual([]);
      expect(events.items!.map((e) => e.id)).toContain(inserted.id);
      for (const e of events.items!) expect(fieldProblems('calendar', 'Event', e)).toEqual([]);
      for (const e of events.items!) expect(schemaProblems('calendar', 'Event', e)).toEqual([]);
      expect(schemaProblems('calendar', 'Event', (await calendar.events.get({ calendarId: 'primary', eventId: inserted.id! })).data)).toEqual([]);
      expect(schemaProblems('calendar', 'CalendarList', (await calendar.calendarList.list()).data)).toEqual([]);
      const busy = (await calendar.freebusy.query({ requestBody: { timeMin: new Date().toISOString(), timeMax: new Date(Date.now() + 7 * 86_400_000).toISOString(), items: [{ id: 'primary' }] } })).data;
      expect(schemaProblems('calendar', 'FreeBusyResponse', busy)).toEqual([]);
    });

    it("unknown paths answer in Google's error shape; another user's token does not reach this mailbox", async () => {
      const r = await fetch(`${dir.google}/gmail/v1/users/me/nothing`, { headers: { authorization: `Bearer ${oauth.credentials.access_token}` } });
      expect(r.status).toBe(404);
      const notFound = await r.json();
      expect(notFound).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', errors: [expect.objectContaining({ reason: 'notFound' })] } });
      expect(googleErrorProblems(notFound)).toEqual([]);
      const unauthorized = await fetch(`${dir.google}/calendar/v3/users/me/calendarList`, { headers: { authorization: 'Bearer ya29.not-a-token' } });
      expect(unauthorized.status).toBe(401);
      expect(googleErrorProblems(await unauthorized.json())).toEqual([]);
      expect((await fetch(`${dir.googleOAuth}/nothing`)).status).toBe(404);
      // Someone else signs in: their mailbox is their own.
      const other = new OAuth2Client({ clientId: oauth._clientId, clientSecret: oauth._clientSecret, redirectUri: 'http://localhost:9/cb', endpoints: { oauth2AuthBaseUrl: `${dir.googleOAuth}/o/oauth2/v2/auth`, oauth2TokenUrl: `${dir.googleOAuth}/token` } });
      const { codeVerifier, codeChallenge } = await other.generateCodeVerifierAsync();
      const back = await consent(other.generateAuthUrl({ scope: ['https://www.googleapis.com/auth/gmail.modify'], code_challenge_method: CodeChallengeMethod.S256, code_challenge: codeChallenge! }), 'someone@example.com');
      other.setCredentials((await other.getToken({ code: back.searchParams.get('code')!, codeVerifier })).tokens);
      const theirs = gmailApi({ version: 'v1', auth: other, rootUrl: `${dir.google}/` });
      const mine = gmailApi({ version: 'v1', auth: oauth, rootUrl: `${dir.google}/` });
      const mail = ['To: someone@example.com', 'Subject: Second hello', '', 'Now that you have a sandbox mailbox.'].join('\r\n');
      const sent = (await mine.users.messages.send({ userId: 'me', requestBody: { raw: Buffer.from(mail).toString('base64url') } })).data;
      const inbox = (await theirs.users.messages.list({ userId: 'me', q: 'subject:"Second hello"' })).data;
      // Their own copy, delivered to their mailbox: not the sender's message.
      expect(inbox.messages).toHaveLength(1);
      expect(inbox.messages![0]!.id).not.toBe(sent.id);
      await expect(theirs.users.messages.get({ userId: 'me', id: sent.id! })).rejects.toMatchObject({ status: 404 });
      expect((await mine.users.messages.list({ userId: 'me', q: 'subject:"Second hello"' })).data.messages!.map((m) => m.id)).toEqual([sent.id]);
    });
  });

  describe('the chat network (a Cloud API client with its Graph base URL)', () => {
    it('sends reaction, location, contacts and interactive lists; media info has file_size as a string; phone numbers and templates; Graph errors and request headers', async () => {
      const creds = (await svc.call('GET', '/sandbox', { key: a.adminKey })).body.credentials.graph;
      expect(creds.channels).toEqual([]);
      const channel = (await svc.call('POST', '/v1/channels', { key: a.adminKey, body: { kind: 'whatsapp_cloud', name: 'Sandbox', network: 'sandbox' } })).body;
      const [ch] = (await svc.call('GET', '/sandbox', { key: a.adminKey })).body.credentials.graph.channels;
      expect(ch).toMatchObject({ channelId: channel.id, phoneNumberId: channel.phoneNumberId, accessToken: expect.stringMatching(/^EAA/) });
      expect((await svc.call('GET', '/sandbox', { key: b.adminKey })).body.credentials.graph.channels).toEqual([]);

      const graph = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
        fetch(`${dir.graph}/v27.0/${path}`, { method: init.method ?? 'GET', headers: { authorization: `Bearer ${init.token ?? ch.accessToken}`, 'content-type': 'application/json' }, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
      const send = (message: Record<string, unknown>) => graph(`${ch.phoneNumberId}/messages`, { method: 'POST', body: { messaging_product: 'whatsapp', to: '4915112345678', ...message } });
      // The customer writes first (the window opens).
      const hello = await svc.call('POST', `/v1/sandbox/channels/${channel.id}/customers/4915112345678/media`, { key: a.adminKey, body: { kind: 'image', mimeType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==' } });
      expect(hello.status).toBe(201);
      const phone = (await svc.call('GET', `/v1/sandbox/channels/${channel.id}/customers/4915112345678/messages`, { key: a.adminKey })).body.messages;
      const mediaId = phone[0].media.id as string;
      const media = await graph(mediaId);
      expect(media.headers.get('x-fb-trace-id')).toBeTruthy();
      expect(media.headers.get('x-fb-request-id')).toBeTruthy();
      expect(media.headers.get('facebook-api-version')).toBe('v27.0');
      const info = (await media.json()) as Record<string, unknown>;
      expect(schemaProblems('meta', 'MediaInfo', info)).toEqual([]);
      expect(info).toEqual({ messaging_product: 'whatsapp', url: expect.stringMatching(new RegExp(`^${dir.graph}/files/`)), mime_type: 'image/png', sha256: expect.any(String), file_size: expect.stringMatching(/^\d+$/), id: mediaId });

      const accepted = [
        { type: 'reaction', reaction: { message_id: phone[0].id, emoji: '👍' } },
        { type: 'reaction', reaction: { message_id: phone[0].id, emoji: '' } },
        { type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Shop', address: 'Alexanderplatz 1, Berlin' } },
        { type: 'contacts', contacts: [{ name: { formatted_name: 'Ada Lovelace', first_name: 'Ada' }, phones: [{ phone: '+49 151 1234567', type: 'WORK', wa_id: '491511234567' }], emails: [{ email: 'ada@example.com', type: 'WORK' }] }] },
        { type: 'interactive', interactive: { type: 'list', body: { text: 'Pick a slot' }, action: { button: 'Slots', sections: [{ title: 'Tomorrow', rows: [{ id: 'am', title: 'Morning' }, { id: 'pm', title: 'Afternoon', description: '14-17h' }] }] } } },
        { type: 'interactive', interactive: { type: 'cta_url', body: { text: 'Track your parcel' }, action: { name: 'cta_url', parameters: { display_text: 'Track', url: 'https://shop.example/track/1042' } } } },
        { type: 'interactive', interactive: { type: 'location_request_message', body: { text: 'Where should we deliver?' }, action: { name: 'send_location' } } },
      ];
      for (const m of accepted) {
        const r = await send(m);
        expect(r.status, JSON.stringify(m)).toBe(200);
        const answer = (await r.json()) as any;
        expect(answer.messages[0].id).toMatch(/^wamid\./);
        expect(schemaProblems('meta', 'SendMessageResponse', answer)).toEqual([]);
        expect(answer).toMatchObject({ messaging_product: 'whatsapp', contacts: [{ input: '4915112345678', wa_id: '4915112345678' }] });
      }
      const shown = (await svc.call('GET', `/v1/sandbox/channels/${channel.id}/customers/4915112345678/messages`, { key: a.adminKey })).body.messages;
      expect(shown.map((m: { type: string }) => m.type)).toEqual(['image', 'reaction', 'reaction', 'location', 'contacts', 'interactive', 'interactive', 'interactive']);
      expect(shown[3].text).toContain('Alexanderplatz 1, Berlin');
      expect(shown[4].text).toContain('Ada Lovelace');

      const refused = [
        { type: 'reaction', reaction: { emoji: '👍' } },
        { type: 'reaction', reaction: { message_id: phone[0].id, emoji: 'not an emoji' } },
        { type: 'location', location: { latitude: 95, longitude: 13 } },
        { type: 'contacts', contacts: [{ name: { first_name: 'Ada' } }] },
        { type: 'contacts', contacts: [] },
        { type: 'interactive', interactive: { type: 'list', body: { text: 'x' }, action: { button: 'Slots', sections: [{ rows: Array.from({ length: 11 }, (_, i) => ({ id: `r${i}`, title: `Row ${i}` })) }] } } },
      ];
      for (const m of refused) {
        const r = await send(m);
        expect(r.status, JSON.stringify(m)).toBe(400);
        const refusal = (await r.json()) as any;
        expect(refusal.error).toMatchObject({ type: 'OAuthException', code: expect.any(Number), fbtrace_id: expect.any(String) });
        expect(schemaProblems('meta', 'GraphAPIError', refusal)).toEqual([]);
      }
      // Another organization's channel token does not reach this number.
      const other = (await svc.call('POST', '/v1/channels', { key: b.adminKey, body: { kind: 'whatsapp_cloud', name: 'B', network: 'sandbox' } })).body;
      const [otherCh] = (await svc.call('GET', '/sandbox', { key: b.adminKey })).body.credentials.graph.channels;
      expect(otherCh.channelId).toBe(other.id);
      const crossed = await graph(`${ch.phoneNumberId}/messages`, { method: 'POST', token: otherCh.accessToken, body: { messaging_product: 'whatsapp', to: '4915112345678', type: 'text', text: { body: 'hi' } } });
      expect(crossed.status).toBe(400);
      expect(((await crossed.json()) as any).error).toMatchObject({ code: 100, error_subcode: 33 });
      // The production adapter, given the sandbox origin as its Graph base URL, sends the new types and reads the network's refusals.
      const adapter = new GraphApiNetwork({ baseUrl: `${dir.graph}/v27.0` });
      const account = { phoneNumberId: ch.phoneNumberId, businessAccountId: ch.businessAccountId, accessToken: ch.accessToken };
      try {
        expect(await adapter.send(account, '4915112345678', { type: 'location', location: { latitude: 48.137, longitude: 11.575, name: 'Depot' } })).toMatchObject({ ok: true, messageId: expect.stringMatching(/^wamid\./) });
        expect(await adapter.send(account, '4915112345678', { type: 'reaction', reaction: { message_id: phone[0].id, emoji: '🎉' } })).toMatchObject({ ok: true });
        expect(await adapter.send(account, '4915112345678', { type: 'contacts', contacts: [{ name: { formatted_name: 'Support' }, phones: [{ phone: '+49 30 1234567', type: 'WORK' }] }] })).toMatchObject({ ok: true });
        expect(await adapter.send(account, '4915112345678', { type: 'location', location: { latitude: 123, longitude: 0 } })).toMatchObject({ ok: false, rejection: { code: 100 } });
      } finally {
        adapter.close();
      }
      const unknown = await fetch(`${dir.graph}/v27.0/${ch.phoneNumberId}/nothing`, { headers: { authorization: `Bearer ${ch.accessToken}` } });
      expect(unknown.status).toBe(400);
      const unknownBody = (await unknown.json()) as any;
      expect(unknownBody.error).toMatchObject({ type: 'OAuthException', code: 100 });
      expect(schemaProblems('meta', 'GraphAPIError', unknownBody)).toEqual([]);
      // Templates: the list and a new one, as Meta defines them.
      const templates = await graph(`${ch.businessAccountId}/message_templates?limit=50`);
      expect(templates.status).toBe(200);
      const listed = (await templates.json()) as any;
      expect(listed.data.length).toBeGreaterThan(0);
      expect(schemaProblems('meta', 'MessageTemplates', listed)).toEqual([]);
      const created = await graph(`${ch.businessAccountId}/message_templates`, {
        method: 'POST',
        body: { name: 'schema_check', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Your order {{1}} is ready.', example: { body_text: [['1042']] } }] },
      });
      const createdBody = (await created.json()) as any;
      expect(created.status, JSON.stringify(createdBody)).toBe(200);
      expect(schemaProblems('meta', 'MessageTemplateCreated', createdBody)).toEqual([]);
      expect(createdBody).toMatchObject({ id: expect.any(String), status: expect.any(String), category: 'UTILITY' });
      // The number and the business account's numbers, to their own token only.
      const number = (await (await graph(ch.phoneNumberId)).json()) as any;
      expect(schemaProblems('meta', 'PhoneNumber', number)).toEqual([]);
      expect(number).toMatchObject({ id: ch.phoneNumberId, display_phone_number: expect.any(String), verified_name: expect.any(String), quality_rating: 'GREEN', code_verification_status: 'VERIFIED' });
      const numbers = (await (await graph(`${ch.businessAccountId}/phone_numbers`)).json()) as any;
      expect(schemaProblems('meta', 'PhoneNumbers', numbers)).toEqual([]);
      expect(numbers.data.map((n: { id: string }) => n.id)).toContain(ch.phoneNumberId);
      for (const path of [ch.phoneNumberId, `${ch.businessAccountId}/phone_numbers`]) {
        const theirs = await graph(path, { token: otherCh.accessToken });
        expect(theirs.status, path).toBe(400);
        const refused = (await theirs.json()) as any;
        expect(refused.error).toMatchObject({ code: 100 });
        expect(schemaProblems('meta', 'GraphAPIError', refused)).toEqual([]);
      }
      const noToken = await graph(`${ch.businessAccountId}/message_templates`, { token: 'EAAnot-a-token' });
      expect(noToken.status).toBe(401);
      expect(schemaProblems('meta', 'GraphAPIError', await noToken.json())).toEqual([]);
    });
  });
});

describe('the customer shares a location, contacts and a reaction', () => {
  let svc: TestService;
  let a: TestOrg;
  const seen: DomainEvent[] = [];
  beforeAll(async () => {
    svc = await startTestService();
    a = await svc.createOrg('A');
    await svc.running.services.events.consume(`sandbox-shares-${Date.now()}`, async (e) => {
      if (e.organizationId === a.id) seen.push(e);
    });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('each reaches the service as a signed webhook: in the session history and an inbound_message event, with what it carries; another organization cannot play this channel', async () => {
    const channel = (await svc.call('POST', '/v1/channels', { key: a.adminKey, body: { kind: 'whatsapp_cloud', name: 'Sandbox', network: 'sandbox' } })).body;
    const phone = `/v1/sandbox/channels/${channel.id}/customers/4915100000042`;
    const hello = await svc.call('POST', `${phone}/messages`, { key: a.adminKey, body: { text: 'Hello' } });
    const location = await svc.call('POST', `${phone}/locations`, { key: a.adminKey, body: { latitude: 52.5219, longitude: 13.4132, name: 'Home', address: 'Karl-Marx-Allee 1, Berlin' } });
    const card = { name: { formatted_name: 'Ben Lee', first_name: 'Ben' }, phones: [{ phone: '+49 151 2345678', type: 'CELL', wa_id: '491512345678' }] };
    const contacts = await svc.call('POST', `${phone}/contacts`, { key: a.adminKey, body: { contacts: [card] } });
    const reaction = await svc.call('POST', `${phone}/reactions`, { key: a.adminKey, body: { messageId: hello.body.messageId, emoji: '❤️' } });
    for (const r of [hello, location, contacts, reaction]) expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect((await svc.call('POST', `${phone}/reactions`, { key: a.adminKey, body: { messageId: 'wamid.nope', emoji: '❤️' } })).status).toBe(404);
    expect((await svc.call('POST', `${phone}/locations`, { key: a.adminKey, body: { latitude: 91, longitude: 0 } })).status).toBe(400);
    const b = await svc.createOrg('B');
    expect((await svc.call('POST', `${phone}/locations`, { key: b.adminKey, body: { latitude: 1, longitude: 2 } })).status).toBe(404);

    const inbound = async (id: string) => {
      for (let i = 0; i < 250; i++) {
        const e = seen.find((x) => x.type === 'inbound_message' && (x.data as { messageId?: string }).messageId === id);
        if (e) return e.data as { sessionId: string; content: Record<string, unknown> };
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no inbound_message for ${id}`);
    };
    expect((await inbound(location.body.messageId)).content).toMatchObject({ type: 'location', location: { latitude: 52.5219, longitude: 13.4132, name: 'Home', address: 'Karl-Marx-Allee 1, Berlin' } });
    expect((await inbound(contacts.body.messageId)).content).toMatchObject({ type: 'contacts', contacts: [card], text: 'Ben Lee' });
    const reacted = await inbound(reaction.body.messageId);
    expect(reacted.content).toMatchObject({ type: 'reaction', reaction: { messageId: hello.body.messageId, emoji: '❤️' } });
    const history = (await svc.call('GET', `/v1/sessions/${reacted.sessionId}/messages`, { key: a.adminKey })).body as { messageId: string; content: { type: string } }[];
    expect(history.map((m) => [m.messageId, m.content.type])).toEqual(
      expect.arrayContaining([
        [location.body.messageId, 'location'],
        [contacts.body.messageId, 'contacts'],
        [reaction.body.messageId, 'reaction'],
      ]),
    );
    const shown = (await svc.call('GET', `${phone}/messages`, { key: a.adminKey })).body.messages.map((m: { type: string; text?: string }) => [m.type, m.text]);
    expect(shown).toEqual([['text', 'Hello'], ['location', 'Home — Karl-Marx-Allee 1, Berlin — 52.5219, 13.4132'], ['contacts', 'Ben Lee'], ['reaction', '❤️']]);
  });
});

describe('clustered: every node serves the sandboxes on its own ports, over the same records', () => {
  const servers = useClusterServers();
  let nodes: TestService[] = [];
  beforeAll(async () => {
    const env = { ...servers.env(`sbo${Date.now() % 100000}`), ACTOR_PARTITIONS: '4', SECRETS_KEY: '7'.repeat(64), SANDBOX_TOOLS: 'true', SANDBOX_NETWORK: 'true' };
    nodes = [await startTestService({ env: { ...env, NODE_ID: 'o1' } }), await startTestService({ env: { ...env, NODE_ID: 'o2' } })];
  }, 60_000);
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it('a Stripe session made on one node is retrieved on the other; a channel made on one is sent on through the other', async () => {
    const [n1, n2] = nodes as [TestService, TestService];
    const org = await n1.createOrg('Clustered');
    const d1 = (await n1.call('GET', '/sandbox', { key: org.adminKey })).body as Directory;
    const d2 = (await n2.call('GET', '/sandbox', { key: org.adminKey })).body as Directory;
    expect(new Set([d1.graph, d1.google, d1.googleOAuth, d1.stripe, d2.graph, d2.google, d2.googleOAuth, d2.stripe]).size).toBe(8);
    expect(d2.credentials.googleOAuth.clientSecret).toBe(d1.credentials.googleOAuth.clientSecret);
    const account = (await (await fetch(`${n1.url}/sandbox/providers/stripe/accounts`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${org.adminKey}` }, body: '{}' })).json()) as { api_key: string };
    const client = (d: Directory) => new Stripe(account.api_key, { host: new URL(d.stripe).hostname, port: Number(new URL(d.stripe).port), protocol: 'http', maxNetworkRetries: 0 });
    const made = await client(d1).checkout.sessions.create({ mode: 'payment', line_items: [{ quantity: 1, price_data: { currency: 'eur', unit_amount: 700, product_data: { name: 'Lid' } } }] });
    expect((await client(d2).checkout.sessions.retrieve(made.id)).id).toBe(made.id);

    const channel = (await n1.call('POST', '/v1/channels', { key: org.adminKey, body: { kind: 'whatsapp_cloud', name: 'Sandbox', network: 'sandbox' } })).body;
    expect((await n1.call('POST', `/v1/sandbox/channels/${channel.id}/customers/4915100000005/messages`, { key: org.adminKey, body: { text: 'Hi' } })).status).toBe(201);
    const [ch] = ((await n2.call('GET', '/sandbox', { key: org.adminKey })).body as Directory).credentials.graph.channels;
    expect(ch.channelId).toBe(channel.id);
    const sent = await fetch(`${d2.graph}/v27.0/${ch.phoneNumberId}/messages`, { method: 'POST', headers: { authorization: `Bearer ${ch.accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ messaging_product: 'whatsapp', to: '4915100000005', type: 'location', location: { latitude: 1, longitude: 2 } }) });
    expect(sent.status).toBe(200);
  });
});

describe('the field check itself', () => {
  it('names a missing always-present field, a nested one, and a field the definition does not have', () => {
    expect(fieldProblems('stripe', 'account', { id: 'acct_1', object: 'account', charges_enabled: true, details_submitted: true, email: null, payouts_enabled: true, type: 'standard' })).toEqual([]);
    expect(fieldProblems('stripe', 'account', { id: 'acct_1', object: 'account', charges_enabled: true, details_submitted: true, email: null, type: 'standard', colour: 'red' })).toEqual(['unknown colour', 'missing payouts_enabled']);
    expect(fieldProblems('stripe', 'event', { id: 'evt_1', object: 'event', api_version: null, created: 1, livemode: false, pending_webhooks: 0, request: { id: null }, type: 'checkout.session.completed', data: { object: { id: 'cs_1' } } })).toEqual(
      expect.arrayContaining(['missing request.idempotency_key', 'missing data.object.payment_status']),
    );
    expect(fieldProblems('gmail', 'Message', { id: 'm1', rawBody: 'x' })).toEqual(['unknown rawBody']);
  });

  it('the published definitions: a missing required field, a wrong type, a value off an enum, a field Google does not define', () => {
    expect(schemaProblems('stripe', 'webhook_endpoint', { id: 'we_1', object: 'webhook_endpoint', created: 1, enabled_events: ['*'], livemode: false, metadata: {}, status: 'enabled' })).toEqual(["/ must have required property 'url'"]);
    expect(schemaProblems('stripe', 'event', { id: 'evt_1', object: 'event', created: '1', data: { object: {} }, livemode: false, pending_webhooks: 0, type: 'x' })).toContain('/created must be integer');
    expect(schemaProblems('meta', 'MediaInfo', { messaging_product: 'whatsapp', id: '1', file_size: 303833 })).toEqual(['/file_size must be string']);
    expect(schemaProblems('meta', 'GraphAPIError', { error: { message: 'x', type: 'OAuthException' } })).toEqual(["/error must have required property 'code'"]);
    expect(schemaProblems('gmail', 'Message', { id: 'm1', sizeEstimate: 10, rawBody: 'x' })).toEqual(['/ must NOT have additional properties: rawBody']);
    expect(schemaProblems('calendar', 'Event', { id: 'e1', status: 'confirmed', start: { dateTime: '2026-01-01T10:00:00Z' }, end: { date: 1 } })).toEqual(['/end/date must be string']);
    expect(schemaProblems('calendar', 'Event', { id: 'e1', transparency: 'opaque', reminders: { useDefault: 'yes' } })).toEqual(['/reminders/useDefault must be boolean']);
    expect(schemaProblems('stripe', 'checkout.session', { object: 'checkout.session', status: 'pending' }).some((p) => p.startsWith('/status must be equal to one of the allowed values'))).toBe(true);
  });
});
