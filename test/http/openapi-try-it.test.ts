import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN, startTestService, type TestService } from '../harness/service.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { EXAMPLE_IDS } from '../../src/http/openapi-examples.js';
import { swapIds } from '../harness/openapi-sweep.js';

interface Op {
  operationId: string;
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, unknown>;
}

/** A fresh demo organization, as the first start makes it: an admin, an all-scope key, a sandbox channel with credits. */
interface Demo {
  orgId: string;
  adminId: string;
  adminEmail: string;
  adminPassword: string;
  key: string;
  channelId: string;
  phoneNumberId: string;
}

/**
 * The examples a fresh demo organization refuses, each with the documented
 * refusal it shows and why it cannot succeed here.
 */
const ANSWERS: Record<string, { status: number; code: string; why: string }> = {
  createWebhook: { status: 400, code: 'webhook_challenge_failed', why: 'registering checks that the receiver answers a challenge: it needs the internet' },
  transferConversation: { status: 409, code: 'not_assigned', why: 'a fresh conversation is with the bot: an agent takes it before it can be transferred' },
  labelConversation: { status: 422, code: 'unknown_label', why: 'a fresh organization has no labels yet: an admin creates them first (createLabel)' },
  labelContact: { status: 404, code: 'not_found', why: "a contact's id is the service's own: the example's is not one of a fresh organization" },
  receiveNetworkWebhook: { status: 401, code: 'invalid_signature', why: "the network signs it with the channel's app secret" },
  receivePaymentWebhook: { status: 400, code: 'invalid_signature', why: "Stripe signs it with the endpoint's secret" },
  webChatStartVisitor: { status: 404, code: 'channel_not_found', why: "the demo's channel is a WhatsApp number; visitors write on a web chat channel, from a page of its allowed origins" },
  webChatSendAttachment: { status: 404, code: 'channel_not_found', why: "the demo's channel is a WhatsApp number; visitors send files on a web chat channel, with the token their start gave" },
  uploadWebChatAttachment: { status: 404, code: 'not_found', why: "the demo's conversations are on a WhatsApp number; files are uploaded for a web chat visitor's conversation" },
  webChatSend: { status: 404, code: 'channel_not_found', why: "the demo's channel is a WhatsApp number; visitors write on a web chat channel, with the token their start gave" },
  requestConversationPhone: { status: 409, code: 'phone_already_known', why: "the demo's customer writes with their number; the request is for one who hides it (a BSUID-only conversation)" },
  sandboxShareContactInfo: { status: 400, code: 'not_a_contact_request', why: "the customer shares their number in answer to the business's request (requestConversationPhone), not to any message" },
};

/**
 * The try-it of `/docs`: every POST example sent as printed to a fresh demo
 * organization, with the example ids (EXAMPLE_IDS) and the banner's secrets
 * swapped for the organization's own, as a reader pastes theirs. Each must
 * answer 2xx, or the documented refusal ANSWERS says it shows.
 */
describe('the try-it of every POST example', () => {
  let svc: TestService;
  let doc: { paths: Record<string, Record<string, Op>> };
  beforeAll(async () => {
    // No internet here: the graph channel example's template sync fails fast instead of waiting for DNS.
    svc = await startTestService({ env: { GRAPH_API_BASE_URL: 'http://127.0.0.1:9/v27.0' } });
    doc = (await svc.call('GET', '/openapi.json')).body;
  });
  afterAll(() => svc?.close());

  /** What seedDemo (src/app/bootstrap.ts) and the messaging module's seedDemo make on a first start, once per example. */
  async function freshDemo(): Promise<Demo> {
    const s = svc.running.services;
    const org = await s.accounts.createOrganization('Demo');
    const adminPassword = 'demo password from the banner';
    const admin = await s.accounts.createUser(org.id, { email: 'admin@demo.local', name: 'Demo Admin', role: 'admin', password: adminPassword });
    const key = await s.accounts.createApiKey(org.id, { userId: admin.id, name: 'demo (all scopes)', scopes: [...SCOPES] });
    await s.messaging.seedDemo(org.id);
    const channel = (await svc.call('GET', '/v1/channels', { key: key.key })).body.channels[0];
    return { orgId: org.id, adminId: admin.id, adminEmail: admin.email, adminPassword, key: key.key, channelId: channel.id, phoneNumberId: channel.phoneNumberId };
  }

  it('answers 2xx, or the refusal the example shows', async () => {
    const post = Object.entries(doc.paths).flatMap(([path, ops]) => (ops.post?.requestBody ? [{ path, op: ops.post }] : []));
    expect(post.length).toBeGreaterThan(25);
    const problems: string[] = [];
    for (const { path, op } of post) {
      const demo = await freshDemo();
      const as = { key: demo.key };
      // What a newcomer does first in the sandbox: the customer writes, and the examples' messages reach them.
      const customer = `/v1/sandbox/channels/${demo.channelId}/customers/${EXAMPLE_IDS.customerPhone}`;
      expect((await svc.call('POST', `${customer}/messages`, { ...as, body: { text: 'Hi, my order #1042 arrived damaged.' } })).status).toBe(201);
      const sent = async (p: string) => {
        const example = doc.paths[p]!.post!.requestBody!.content['application/json']!.example;
        const r = await svc.call('POST', p, { ...as, body: swapIds(example, [[EXAMPLE_IDS.channelId, demo.channelId]]) });
        expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
        return r.body.messageId as string;
      };
      // And the ticket the ticket examples name: the create example's.
      const ticketExample = doc.paths['/v1/tickets']!.post!.requestBody!.content['application/json']!.example;
      const ticket = await svc.call('POST', '/v1/tickets', { ...as, body: swapIds(ticketExample, [[EXAMPLE_IDS.audienceExternalId, `${EXAMPLE_IDS.customerPhone}:${demo.phoneNumberId}`]]) });
      expect(ticket.status, JSON.stringify(ticket.body)).toBe(201);
      const pairs: [string, string][] = [
        [EXAMPLE_IDS.ticketId, ticket.body.ticketId],
        [EXAMPLE_IDS.messageId, await sent('/v1/messages/buttons')],
        [EXAMPLE_IDS.templateMessageId, await sent('/v2/wa/template')],
        [EXAMPLE_IDS.organizationId, demo.orgId],
        [EXAMPLE_IDS.userId, demo.adminId],
        [EXAMPLE_IDS.channelId, demo.channelId],
        [EXAMPLE_IDS.phoneNumberId, demo.phoneNumberId],
        // The banner's password, which the login and password-change examples leave to the reader.
        ['the password from the first-start banner', demo.adminPassword],
        ['the password you sign in with now', demo.adminPassword],
      ];
      let url = path;
      for (const p of op.parameters ?? []) if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(swapIds(p.example, pairs))));
      const body = swapIds(op.requestBody!.content['application/json']!.example, pairs);

      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      const headers: Record<string, string> = {};
      let key: string | undefined;
      if (schemes.includes('operatorToken')) key = OPERATOR_TOKEN;
      else if (schemes.includes('apiKey')) key = demo.key;
      else if (schemes.includes('sessionCookie')) {
        const login = await fetch(`${svc.url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: demo.adminEmail, password: demo.adminPassword, organizationId: demo.orgId }) });
        headers.cookie = login.headers.get('set-cookie')!.split(';')[0]!;
        headers['x-csrf-token'] = ((await login.json()) as { csrfToken: string }).csrfToken;
      }
      const r = await svc.call('POST', url, { key, body, headers });
      const expected = ANSWERS[op.operationId];
      const where = `${op.operationId} (POST ${path}) -> ${r.status} ${JSON.stringify(r.body)}`;
      if (expected) {
        if (r.status !== expected.status || r.body?.error?.code !== expected.code) problems.push(`${where}: expected ${expected.status} ${expected.code} (${expected.why})`);
        else if (!(String(expected.status) in op.responses)) problems.push(`${where}: ${expected.status} is not documented`);
      } else if (r.status < 200 || r.status >= 300) problems.push(where);
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
