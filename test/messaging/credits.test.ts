import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { messagingOrg, op, orderUpdate, startMessagingService } from './messaging-helpers.js';

/**
 * Credits and the per-key rate limit of template sends, on one embedded node
 * and on two clustered nodes (shared Redis): requests alternate between nodes.
 */
function creditsSuite(name: string, start: () => Promise<TestService[]>) {
  describe(`credits and rate limit (${name})`, () => {
    let nodes: TestService[];
    let turn = 0;
    const call: TestService['call'] = (...args) => nodes[turn++ % nodes.length]!.call(...args);
    const balance = async (org: string) => (await op(nodes[0]!, 'GET', `/admin/v1/organizations/${org}/credits`)).body.balance as number;

    beforeAll(async () => {
      nodes = await start();
    }, 60_000);
    afterAll(async () => {
      await Promise.all((nodes ?? []).map((n) => n.close()));
    });

    it('402 when the balance does not cover the price: nothing sent, no contact created', async () => {
      const org = await messagingOrg(nodes[0]!, 'Broke', 0);
      const r = await call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, '4916000000001') });
      expect(r.status).toBe(402);
      expect(r.body).toMatchObject({ success: false, error: { code: 'insufficient_credits', details: { price: 1, balance: 0, category: 'UTILITY' } } });
      const phone = await call('GET', `/v1/sandbox/channels/${org.channelId}/customers/4916000000001/messages`, { key: org.adminKey });
      expect(phone.body.messages).toEqual([]);
      expect(await nodes[0]!.running.services.store.contacts.list(org.id)).toEqual([]);
      // Marketing costs more than utility.
      await op(nodes[0]!, 'POST', `/admin/v1/organizations/${org.id}/credits/top-up`, { amount: 1 });
      const sale = { channelId: org.channelId, to: '4916000000001', template: { name: 'spring_sale', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'currency', currency: { fallback_value: '$5', code: 'USD', amount_1000: 5000 } }, { type: 'date_time', date_time: { fallback_value: 'May 1' } }] }, { type: 'button', sub_type: 'copy_code', index: 0, parameters: [{ type: 'coupon_code', coupon_code: 'SPRING5' }] }] } };
      expect((await call('POST', '/v2/wa/template', { key: org.adminKey, body: sale })).body.error.details).toMatchObject({ price: 2, balance: 1 });
      expect((await call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, '4916000000001') })).status).toBe(201);
      expect(await balance(org.id)).toBe(0);
    });

    it('never goes below zero under concurrent sends: exactly as many succeed as the credits pay for', async () => {
      const org = await messagingOrg(nodes[0]!, 'Busy', 10);
      const key = await org.keyWith(['message:send']);
      const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => call('POST', '/v2/wa/template', { key, body: orderUpdate(org.channelId, `49161000000${String(i).padStart(2, '0')}`) })));
      const codes = replies.map((r) => r.status);
      expect(codes.filter((c) => c === 201)).toHaveLength(10);
      expect(codes.filter((c) => c === 402)).toHaveLength(20);
      expect(await balance(org.id)).toBe(0);
    });

    it('refunds when the network rejects the message: 502 with the network code', async () => {
      const org = await messagingOrg(nodes[0]!, 'Stale', 5);
      // The registry says the template exists; the network has never heard of it.
      await op(nodes[0]!, 'POST', `/admin/v1/organizations/${org.id}/channels/${org.channelId}/templates`, { name: 'ghost_template', language: 'en_US', category: 'MARKETING', components: [{ type: 'BODY', text: 'Boo {{1}}' }] });
      const r = await call('POST', '/v2/wa/template', {
        key: org.adminKey,
        body: { channelId: org.channelId, to: '4916200000001', template: { name: 'ghost_template', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'x' }] }] } },
      });
      expect(r.status).toBe(502);
      expect(r.body).toMatchObject({ success: false, error: { code: 'network_rejected' }, errorDetails: { code: 132001, title: 'Template does not exist', message: expect.stringContaining('ghost_template') } });
      // A registry that disagrees with the network about the parameters: the network's 132000 comes back.
      await op(nodes[0]!, 'POST', `/admin/v1/organizations/${org.id}/channels/${org.channelId}/templates`, { name: 'order_update', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi {{1}}' }] });
      const r2 = await call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, '4916200000001', ['just one']) });
      expect(r2.status).toBe(502);
      expect(r2.body.errorDetails.code).toBe(132000);
      expect(await balance(org.id)).toBe(5);
      // The deprecated endpoint hides the same failure.
      const v1 = await call('POST', '/v1/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, '4916200000001', ['just one']) });
      expect(v1.status).toBe(500);
      expect(await balance(org.id)).toBe(5);
    });

    it('the 61st template request of a key within a minute is 429 with Retry-After, counted across every node', async () => {
      const org = await messagingOrg(nodes[0]!, 'Chatty', 0);
      const key = await org.keyWith(['message:send']);
      const other = await org.keyWith(['message:send']);
      // Bad bodies count too: the limit is on requests.
      const replies = [];
      for (let i = 0; i < 60; i++) replies.push(await call('POST', '/v2/wa/template', { key, body: { nope: i } }));
      expect(replies.every((r) => r.status === 400)).toBe(true);
      expect(replies[0]!.headers.get('ratelimit-limit')).toBe('60');
      expect(replies[0]!.headers.get('ratelimit-remaining')).toBe('59');
      expect(replies[59]!.headers.get('ratelimit-remaining')).toBe('0');
      expect(replies[0]!.headers.get('ratelimit-policy')).toBe('60;w=60');
      const limited = await call('POST', '/v2/wa/template', { key, body: orderUpdate(org.channelId, '4916300000001') });
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ success: false, error: { code: 'rate_limited' } });
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(limited.headers.get('ratelimit-remaining')).toBe('0');
      // Another key of the same organization has its own budget.
      expect((await call('POST', '/v2/wa/template', { key: other, body: { nope: 1 } })).status).toBe(400);
    });
  });
}

creditsSuite('embedded', async () => [await startMessagingService()]);

const servers = useClusterServers();

creditsSuite('clustered, two nodes', async () => {
  const env = (id: string) => ({
    ...servers.env('cr'),
    NODE_ID: id,
    ACTOR_PARTITIONS: '8',
    ACTOR_LEASE_MS: '2000',
    SECRETS_KEY: '2'.repeat(64),
    SANDBOX_NETWORK: 'true',
  });
  return Promise.all(['c1', 'c2'].map((id) => startMessagingService({ env: env(id) })));
});
