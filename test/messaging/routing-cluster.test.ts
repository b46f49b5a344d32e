import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { DomainEvent } from '../../src/events/types.js';
import { useClusterServers } from '../harness/use-servers.js';
import type { TestService } from '../harness/service.js';
import { eventually, messagingOrg, startMessagingService } from './messaging-helpers.js';

const servers = useClusterServers();

/*
 * The bot's fallback is a durable timer: in the actor's fenced state and the
 * conversation index, never in one node's memory. Two nodes sweep at once
 * (each contact queued once), and a node that leaves hands its timers to the
 * survivor, which fires them.
 */
describe('bot fallback across nodes', () => {
  const nodes: TestService[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it('fires once per conversation whichever nodes sweep, and after the owner of a contact has gone', async () => {
    const clock = new ManualClock(Date.now());
    const env = (id: string) => ({ ...servers.env('routing'), NODE_ID: id, ACTOR_PARTITIONS: '8', ACTOR_LEASE_MS: '2000', SECRETS_KEY: '1'.repeat(64), SANDBOX_NETWORK: 'true' });
    nodes.push(...(await Promise.all(['r1', 'r2'].map((id) => startMessagingService({ env: env(id), clock })))));
    const [n1, n2] = nodes as [TestService, TestService];
    const a = await messagingOrg(n1, 'A');
    const seen: DomainEvent[] = [];
    await n2.running.services.events.consume(`routing-cluster-${Date.now()}`, async (e) => {
      if (e.organizationId === a.id) seen.push(e);
    });
    const queuedBy = (aeid: string) => seen.filter((e) => e.type === 'handover.requested' && (e.data as { audienceExternalId: string }).audienceExternalId === aeid);
    expect((await n1.call('PATCH', `/v1/channels/${a.channelId}`, { key: a.adminKey, body: { routing: { botFallbackSeconds: 30 } } })).status).toBe(200);

    // Two rounds of contacts: the first is swept by both nodes at once, the second after node 1 left.
    const round = (r: number) => Array.from({ length: 12 }, (_, i) => `49151${r}${String(i).padStart(6, '0')}`);
    const write = async (phones: string[], via: TestService) => {
      for (const p of phones) {
        const r = await via.call('POST', `/v1/sandbox/channels/${a.channelId}/customers/${p}/messages`, { key: a.adminKey, body: { text: 'Hello?' } });
        expect(r.status).toBe(201);
      }
      await eventually(async () => seen.filter((e) => e.type === 'inbound_message' && phones.includes((e.data as { from: string }).from)).length === phones.length, 20_000);
    };

    const first = round(1);
    await write(first, n1);
    clock.advance(31_000);
    const told = await Promise.all([n1.running.services.timers.sweep(), n2.running.services.timers.sweep()]);
    // Each node tells the contacts of its own partitions only: none is told by both.
    expect(told[0] + told[1]).toBeLessThanOrEqual(first.length);
    await Promise.all([n1.running.services.timers.sweep(), n2.running.services.timers.sweep()]);
    for (const p of first) {
      const aeid = `${p}:${a.phoneNumberId}`;
      const q = await eventually(async () => (queuedBy(aeid).length > 0 ? queuedBy(aeid) : undefined), 10_000);
      expect(q).toHaveLength(1);
      expect(q[0]!.data).toMatchObject({ by: 'automation', reason: 'bot_fallback' });
    }

    // Timers set while both nodes run; then node 1 leaves before they are due: node 2 fires all of them.
    const second = round(2);
    await write(second, n1);
    await n1.close();
    nodes.shift();
    clock.advance(31_000);
    await eventually(async () => {
      await n2.running.services.timers.sweep();
      return second.every((p) => queuedBy(`${p}:${a.phoneNumberId}`).length > 0);
    }, 20_000);
    for (const p of second) expect(queuedBy(`${p}:${a.phoneNumberId}`)).toHaveLength(1);
    const list = await n2.call('GET', '/v1/conversations?status=queued', { key: a.adminKey });
    expect(list.body.total).toBe(first.length + second.length);
  }, 120_000);
});
