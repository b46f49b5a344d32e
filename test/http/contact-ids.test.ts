import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { OPERATOR_TOKEN, runCli, type TestService } from '../harness/service.js';
import { messagingOrg, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';
import { call, errorText, mcpClient } from '../mcp/helpers.js';

/** A contact id is `<phone digits>:<phone number id>` wherever it enters; `+49` or `+49 151` never becomes a contact. */
describe('contact ids are validated everywhere they enter', () => {
  let svc: TestService;
  let org: MessagingOrg;
  let client: Client;
  beforeAll(async () => {
    svc = await startMessagingService();
    org = await messagingOrg(svc, 'Ids');
    client = await mcpClient(`${svc.running.mcpUrl}/mcp/platform`, org.adminKey);
  });
  afterAll(async () => {
    await client?.close();
    await svc?.close();
  });

  const bad = ['+49', '+49 151', '4915112345678', '4915112345678:', ':106540352242922', '+4915112345678:106540352242922', 'abc:def'];
  const good = '4915112345678:106540352242922';

  it('REST: contact create, ticket create and list, handover refuse malformed ids with 400', async () => {
    for (const aeid of bad) {
      const c = await svc.call('POST', `/admin/v1/organizations/${org.id}/contacts`, { key: OPERATOR_TOKEN, body: { audienceExternalId: aeid } });
      expect(c.status, aeid).toBe(400);
      expect((await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 's', description: 'd', audienceExternalId: aeid } })).status, aeid).toBe(400);
      expect((await svc.call('POST', '/v1/handover', { key: org.adminKey, body: { audienceExternalId: aeid } })).status, aeid).toBe(400);
      expect((await svc.call('GET', `/v1/tickets?audienceExternalId=${encodeURIComponent(aeid)}`, { key: org.adminKey })).status, aeid).toBe(400);
    }
    const contacts = (await svc.call('GET', `/admin/v1/organizations/${org.id}/contacts`, { key: OPERATOR_TOKEN })).body.contacts as { audienceExternalId: string }[];
    expect(contacts.filter((c) => bad.includes(c.audienceExternalId))).toEqual([]);
    expect((await svc.call('POST', `/admin/v1/organizations/${org.id}/contacts`, { key: OPERATOR_TOKEN, body: { audienceExternalId: good } })).status).toBe(201);
  });

  it('CLI: contact create --aeid +49 fails and creates nothing', async () => {
    const r = await runCli(svc, 'contact', 'create', '--org', org.id, '--aeid', '+49');
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/phone number id/);
  });

  it('MCP: a malformed audienceExternalId is refused, not handed over', async () => {
    const r = await call(client, 'request_handover', { audienceExternalId: '+49' });
    expect(r.isError).toBe(true);
    expect(errorText(r)).toMatch(/audienceExternalId/);
  });

  it('sandbox paths: a malformed phone says what is wrong with it', async () => {
    const r = await svc.call('GET', `/v1/sandbox/channels/${org.channelId}/customers/${encodeURIComponent('+49151')}/messages`, { key: org.adminKey });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toMatch(/phone/);
    expect(r.body.error.details[0].field).toBe('params.phone');
  });
});
