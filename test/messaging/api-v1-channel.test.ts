import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { messagingOrg, op, startMessagingService, type MessagingOrg } from './messaging-helpers.js';

describe('POST /api/v1/whatsapp/send-template: which channel sends', () => {
  let svc: TestService;
  let a: MessagingOrg;
  let second: { id: string };
  beforeAll(async () => {
    svc = await startMessagingService({ env: { TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000' } });
    a = await messagingOrg(svc, 'Two numbers');
    second = (await op(svc, 'POST', `/admin/v1/organizations/${a.id}/channels`, { kind: 'whatsapp_cloud', name: 'Second', network: 'sandbox' })).body;
  });
  afterAll(() => svc?.close());

  const body = (over: Record<string, unknown> = {}) => ({ to: '+4915188888888', template: 'order_update', language: 'en_US', components: [{ type: 'body', parameters: ['Ann', 'A-1', 'Monday'].map((text) => ({ type: 'text', text })) }], ...over });
  const phone = async (channelId: string) => (await svc.call('GET', `/v1/sandbox/channels/${channelId}/customers/4915188888888/messages`, { key: a.adminKey })).body.messages as unknown[];

  it('sends from the organization\'s oldest chat channel without channelId, and from the one named by channelId', async () => {
    expect((await svc.call('POST', '/api/v1/whatsapp/send-template', { key: a.adminKey, body: body() })).status).toBe(200);
    expect(await phone(a.channelId)).toHaveLength(1);
    expect(await phone(second.id)).toHaveLength(0);
    expect((await svc.call('POST', '/api/v1/whatsapp/send-template', { key: a.adminKey, body: body({ channelId: second.id }) })).status).toBe(200);
    expect(await phone(second.id)).toHaveLength(1);
    expect(await phone(a.channelId)).toHaveLength(1);
  });
});
