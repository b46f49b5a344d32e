import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { DomainEvent } from '../../src/events/types.js';
import { useClusterServers } from '../harness/use-servers.js';
import type { TestService } from '../harness/service.js';
import { eventually, messagingOrg, startMessagingService } from './messaging-helpers.js';

const servers = useClusterServers();

/*
 * A missed response target is flagged by the durable timer of the
 * conversation, in the actor's fenced state: two nodes sweeping at once, a
 * sweep repeated (the redelivery of a tick), and a node that leaves with
 * targets running still give one `conversation.sla_breached` per target.
 */
describe('response targets across nodes', () => {
  const nodes: TestService[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it('flags each conversation once whichever nodes sweep, and after the owner of a contact has gone', async () => {
    const clock = new ManualClock(Date.now());
    const env = (id: string) => ({ ...servers.env('sla'), NODE_ID: id, ACTOR_PARTITIONS: '8', ACTOR_LEASE_MS: '2000', SECRETS_KEY: '1'.repeat(64), SANDBOX_NETWORK: 'true' });
    nodes.push(...(await Promise.all(['s1', 's2'].map((id) => startMessagingService({ env: env(id), clock })))));
    const [n1, n2] = nodes as [TestService, TestService];
    const a = await messagingOrg(n1, 'A');
    const seen: DomainEvent[] = [];
    await n2.running.services.events.consume(`sla-cluster-${Date.now()}`, async (e) => {
      if (e.organizationId === a.id) seen.push(e);
    });
    const breaches = (aeid: string) => seen.filter((e) => e.type === 'conversation.sla_breached' && (e.data as { audienceExternalId: string }).audienceExternalId === aeid);
    const set = await n1.call('PATCH', `/v1/channels/${a.channelId}`, { key: a.adminKey, body: { routing: { firstResponder: 'agents', sla: { firstResponseSeconds: 30 } } } });
    expect(set.status).toBe(200);

    const round = (r: number) => Array.from({ length: 10 }, (_, i) => `49152${r}${String(i).padStart(6, '0')}`);
    const write = async (phones: string[], via: TestService) => {
      for (const p of phones) expect((await via.call('POST', `/v1/sandbox/channels/${a.channelId}/customers/${p}/messages`, { key: a.adminKey, body: { text: 'Hello?' } })).status).toBe(201);
      await eventually(async () => seen.filter((e) => e.type === 'handover.requested' && phones.some((p) => (e.data as { audienceExternalId: string }).audienceExternalId === `${p}:${a.phoneNumberId}`)).length === phones.length, 20_000);
    };

    const first = round(1);
    await write(first, n1);
    clock.advance(31_000);
    // Both nodes sweep at once, then again: each conversation flagged once.
    await Promise.all([n1.running.services.timers.sweep(), n2.running.services.timers.sweep()]);
    await Promise.all([n1.running.services.timers.sweep(), n2.running.services.timers.sweep()]);
    for (const p of first) {
      const b = await eventually(async () => (breaches(`${p}:${a.phoneNumberId}`).length > 0 ? breaches(`${p}:${a.phoneNumberId}`) : undefined), 10_000);
      expect(b).toHaveLength(1);
      expect(b[0]!.data).toMatchObject({ target: 'first_response', handoverStatus: 'queued' });
    }

    // Targets set while both run; node 1 leaves before they are due: node 2 flags every one, once.
    const second = round(2);
    await write(second, n1);
    await n1.close();
    nodes.shift();
    clock.advance(31_000);
    await eventually(async () => {
      await n2.running.services.timers.sweep();
      return second.every((p) => breaches(`${p}:${a.phoneNumberId}`).length > 0);
    }, 20_000);
    await n2.running.services.timers.sweep();
    for (const p of [...first, ...second]) expect(breaches(`${p}:${a.phoneNumberId}`)).toHaveLength(1);
    const list = await n2.call('GET', '/v1/conversations?sla=breached&limit=100', { key: a.agentKey });
    expect(list.body.conversations).toHaveLength(first.length + second.length);
  }, 120_000);
});
