import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { messagingOrg, op, orderUpdate, startMessagingService, type MessagingOrg } from './messaging-helpers.js';

/**
 * The network throttles a number (130429) when the channel's tier is set
 * above what the network allows: the send is refused with the network's code
 * and a Retry-After, nothing is charged, and a retry with the same
 * Idempotency-Key sends it (the refusal is not the key's answer).
 */
describe('a send the chat network throttles', () => {
  let svc: TestService;
  let a: MessagingOrg;
  beforeAll(async () => {
    // The sandbox number takes 1 message per second; the channel claims 1,000, so nothing is paced here.
    svc = await startMessagingService({ env: { SANDBOX_MAX_MPS: '1', TEMPLATE_RATE_LIMIT_PER_MINUTE: '100000' } });
    a = await messagingOrg(svc, 'Throttled', 100);
    expect((await op(svc, 'PATCH', `/admin/v1/organizations/${a.id}/channels/${a.channelId}`, { messagesPerSecond: 1000 })).status).toBe(200);
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('answers 502 with the network code 130429 and Retry-After, charges nothing, and sends it on a retry with the same key', async () => {
    const contacts = ['4915300000001', '4915300000002', '4915300000003', '4915300000004'];
    const keys = contacts.map(() => randomUUID());
    const send = (i: number) => svc.call('POST', '/v2/wa/template', { key: a.adminKey, body: orderUpdate(a.channelId, contacts[i]!, ['Ann', `T-${i}`, 'Monday']), headers: { 'idempotency-key': keys[i]! } });
    const balance = async () => (await op(svc, 'GET', `/admin/v1/organizations/${a.id}/credits`)).body as { balance: number; prices: { UTILITY: number } };
    const { prices } = await balance();

    const first = await Promise.all(contacts.map((_, i) => send(i)));
    const throttled = first.map((r, i) => ({ r, i })).filter(({ r }) => r.status !== 201);
    expect(throttled.length).toBeGreaterThan(0);
    for (const { r } of throttled) {
      expect(r.status).toBe(502);
      expect(r.body).toMatchObject({ success: false, error: { code: 'network_rejected' }, errorDetails: { code: 130429 } });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect((await balance()).balance).toBe(100 - prices.UTILITY * (contacts.length - throttled.length));

    // Retried with the same keys, one a second: each goes now.
    for (const { i } of throttled) {
      for (let attempt = 0; ; attempt++) {
        await new Promise((res) => setTimeout(res, 1100));
        const again = await send(i);
        if (again.status === 201) break;
        expect(again.body.errorDetails.code).toBe(130429);
        if (attempt > 10) throw new Error(`send ${i} still throttled`);
      }
    }
    expect((await balance()).balance).toBe(100 - prices.UTILITY * contacts.length);
    const sandbox = svc.running.services.messaging.sandbox!;
    for (const [i, c] of contacts.entries()) {
      const got = (await sandbox.customerPhone(a.phoneNumberId, c, 10)).filter((m) => m.direction === 'to_customer');
      expect(got, `contact ${i}`).toHaveLength(1);
    }
    // An accepted send repeated with its key is answered from it, not sent again.
    const repeat = await send(throttled[0]!.i);
    expect(repeat.status).toBe(201);
    expect((await sandbox.customerPhone(a.phoneNumberId, contacts[throttled[0]!.i]!, 10)).filter((m) => m.direction === 'to_customer')).toHaveLength(1);
  });
});
