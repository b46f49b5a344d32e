import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_IDS } from '../../src/http/openapi-examples.js';
import { adminSession, credentialsFor, documentedOperations, swapIds } from '../harness/openapi-sweep.js';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually, messagingOrg, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';

/** Text only organization A's records carry: it must never reach organization B. */
const MARKER = 'ALPHA-ONLY-7f3k';

/**
 * Every documented operation (the operator's apart), called as organization
 * B (its API key, or its admin's dashboard session) with each of organization
 * A's ids in every path parameter and A's ids in the example body, and with
 * A's contact and a search for A's words in the query of every GET. No
 * answer may carry A's words, and no 2xx may carry one of A's ids. The
 * endpoints' own tests check their refusals; this sweep covers every
 * operation the document lists, including ones added later.
 */
function sweep(mode: string, start: () => Promise<TestService>) {
  describe(`organization B reaches none of A's records through any documented operation (${mode})`, () => {
    let svc: TestService;
    let a: MessagingOrg;
    let b: MessagingOrg;
    beforeAll(async () => {
      svc = await start();
      a = await messagingOrg(svc, 'Alpha');
      b = await messagingOrg(svc, 'Bravo');
    }, 60_000);
    afterAll(() => svc?.close());

    it('answers nothing of A', async () => {
      const as = { key: a.adminKey };
      const phone = '4917000000077';
      const aeid = `${phone}:${a.phoneNumberId}`;
      expect((await svc.call('POST', `/v1/sandbox/channels/${a.channelId}/customers/${phone}/messages`, { ...as, body: { text: `${MARKER} message`, profileName: `${MARKER} person` } })).status).toBe(201);
      await eventually(async () => (await svc.call('GET', `/v1/conversations/${aeid}`, as)).status === 200);
      const created = async (path: string, body: unknown, pick: (b: any) => string) => {
        const r = await svc.call('POST', path, { ...as, body });
        expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
        return pick(r.body);
      };
      const ids = [
        await created('/v1/tickets', { subject: `${MARKER} ticket`, description: 'd', audienceExternalId: aeid }, (r) => r.ticketId),
        await created('/v1/labels', { name: `${MARKER.toLowerCase()}-label` }, (r) => r.label.id),
        await created('/v1/teams', { name: `${MARKER} team`, memberIds: [a.adminId] }, (r) => r.team.id),
        await created('/v1/canned-replies', { shortCode: 'alphaonly', text: `${MARKER} canned` }, (r) => r.cannedReply.id),
        await created('/api/v1/resource', { name: `${MARKER} resource`, type: 't', config: {} }, (r) => r.id),
        (await svc.call('GET', `/v1/contacts?q=${MARKER}`, as)).body.contacts[0].id as string,
        aeid,
        a.channelId,
        a.webChannelId,
        a.phoneNumberId,
        a.adminId,
        a.agentId,
        a.id,
      ];
      expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);

      const session = await adminSession(svc, b);
      const pairs = [
        [EXAMPLE_IDS.audienceExternalId, aeid],
        [EXAMPLE_IDS.channelId, a.channelId],
        [EXAMPLE_IDS.userId, a.adminId],
        [EXAMPLE_IDS.organizationId, a.id],
        [EXAMPLE_IDS.phoneNumberId, a.phoneNumberId],
      ] as const;

      const leaks: string[] = [];
      let asked = 0;
      for (const { path, method, op, schemes } of await documentedOperations(svc)) {
        if (schemes.includes('operatorToken')) continue;
        const { key, headers } = credentialsFor(schemes, { apiKey: b.adminKey, session });
        const pathParams = (op.parameters ?? []).filter((p) => p.in === 'path');
        const urls = pathParams.length === 0 ? [path] : ids.map((id) => pathParams.reduce((u, p) => u.replace(`{${p.name}}`, encodeURIComponent(id)), path));
        const example = op.requestBody?.content['application/json']?.example;
        const body = example === undefined ? undefined : swapIds(example, pairs);
        for (const url of urls) {
          const target = method === 'get' ? `${url}${url.includes('?') ? '&' : '?'}contact=${encodeURIComponent(aeid)}&q=${MARKER}` : url;
          asked++;
          // An answer off the published contract throws in `call`: reported with the leaks.
          const r = await svc.call(method.toUpperCase(), target, { key, headers, body: method === 'get' ? undefined : body }).catch((e: Error) => ({ status: 0, body: e.message }));
          if (r.status === 0) leaks.push(`${method.toUpperCase()} ${target}: ${String(r.body).slice(0, 200)}`);
          const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? '');
          if (text.includes(MARKER) || text.includes(MARKER.toLowerCase()) || (r.status >= 200 && r.status < 300 && ids.slice(0, 6).some((id) => text.includes(id)))) {
            leaks.push(`${method.toUpperCase()} ${target} -> ${r.status} ${text.slice(0, 160)}`);
          }
        }
      }
      expect(asked).toBeGreaterThan(500);
      expect(leaks).toEqual([]);
    }, 300_000);
  });
}

sweep('embedded', () => startMessagingService({ env: { SANDBOX_TOOLS: 'true' } }));

describe('clustered', () => {
  const servers = useClusterServers();
  sweep('clustered', () => startMessagingService({ env: { ...servers.env(`xo${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true', SANDBOX_TOOLS: 'true' } }));
});
