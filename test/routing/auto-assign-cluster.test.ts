import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/events/types.js';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { extraAgent, InboxClient } from '../inbox/client.js';
import { eventually, messagingOrg, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';

/*
 * Auto-assignment on two clustered nodes (real PostgreSQL, Redis and NATS):
 * 100 queued conversations wait for agents; four agents come online, two on
 * each node, at once, so both nodes serve the same queue together. Each
 * conversation goes to exactly one agent and nobody passes capacity (the
 * channel's, or an agent's own smaller one); a resolve frees capacity for
 * the conversations still waiting.
 */
describe('auto-assignment (clustered, 2 nodes)', () => {
  const servers = useClusterServers();
  let nodes: TestService[];
  let a: MessagingOrg;
  const clients: InboxClient[] = [];
  const seen: DomainEvent[] = [];
  const CAPACITY = 20;
  /** Dan's own capacity, below the channel's. */
  const DAN = 10;
  const TOTAL = 3 * CAPACITY + DAN;

  beforeAll(async () => {
    const env = { ...servers.env(`aa${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true', INBOX_FRAMES_PER_SECOND: '1000' };
    nodes = [await startMessagingService({ env: { ...env, NODE_ID: 'aa1' } }), await startMessagingService({ env: { ...env, NODE_ID: 'aa2' } })];
    a = await messagingOrg(nodes[0]!, 'A');
    await nodes[0]!.running.services.events.consume(`auto-assign-cluster-${Date.now()}`, async (e) => {
      if (e.organizationId === a.id) seen.push(e);
    });
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    for (const n of nodes ?? []) await n.close();
  });

  const autoAssigned = () => seen.filter((e) => e.type === 'conversation.assigned' && (e.data as { via?: string }).via === 'auto_assign') as DomainEvent<{ audienceExternalId: string; agentId: string }>[];

  it("gives each of 100 queued conversations to exactly one online agent, never past the channel's or an agent's own capacity, on both nodes at once", async () => {
    const patch = await nodes[1]!.call('PATCH', `/v1/channels/${a.channelId}`, { key: a.adminKey, body: { routing: { firstResponder: 'agents', autoAssign: { enabled: true, capacity: CAPACITY } } } });
    expect(patch.status).toBe(200);
    // A node reads a channel changed on another node within a second (the channel store's FRESH_MS):
    // customers who write before that may still meet the bot first.
    await new Promise((r) => setTimeout(r, 1_500));
    const phones = Array.from({ length: 100 }, (_, i) => `49151000${String(10000 + i)}`);
    for (let i = 0; i < phones.length; i += 10) {
      const rs = await Promise.all(
        phones.slice(i, i + 10).map((p, j) => nodes[(i + j) % 2]!.call('POST', `/v1/sandbox/channels/${a.channelId}/customers/${p}/messages`, { key: a.adminKey, body: { text: 'Hello' } })),
      );
      for (const r of rs) expect(r.status).toBe(201);
    }
    // Nobody is online: all 100 wait in the queue.
    await eventually(async () => (await nodes[0]!.call('GET', '/v1/conversations/counts', { key: a.adminKey })).body.counts.waiting === 100, 150_000);
    expect(autoAssigned()).toEqual([]);

    // Four agents come online at once, two on each node: both nodes serve the queue.
    const agents = await Promise.all(['ann', 'bob', 'cat', 'dan'].map((n) => extraAgent(nodes[0]!, a, n)));
    // Dan's own capacity, set through the other node: both nodes' assigners hold him to it.
    expect((await nodes[1]!.call('PATCH', `/v1/users/${agents[3]!.id}`, { key: a.adminKey, body: { capacity: DAN } })).status).toBe(200);
    const limitOf = (id: string) => (id === agents[3]!.id ? DAN : CAPACITY);
    const sockets = await Promise.all(agents.map((ag, i) => InboxClient.connect(nodes[i % 2]!.url, ag.key)));
    clients.push(...sockets);
    await eventually(async () => autoAssigned().length >= TOTAL, 150_000);

    const resolved = new Set<string>();
    const check = async (expectAssigned: number) => {
      const byConversation = new Map<string, string[]>();
      for (const e of autoAssigned()) byConversation.set(e.data.audienceExternalId, [...(byConversation.get(e.data.audienceExternalId) ?? []), e.data.agentId]);
      const loads = new Map<string, number>();
      let assigned = 0;
      for (const p of phones) {
        const c = (await nodes[assigned % 2]!.call('GET', `/v1/conversations/${p}:${a.phoneNumberId}`, { key: a.adminKey })).body.conversation;
        if (c.status !== 'assigned') {
          expect(c.status).toBe(resolved.has(p) ? 'bot' : 'queued');
          continue;
        }
        assigned++;
        loads.set(c.assigneeId, (loads.get(c.assigneeId) ?? 0) + 1);
        // The one agent the actor gave it to, and its timeline says so once.
        const entries = c.messages.filter((m: { system?: { event: string; reason?: string } }) => m.system?.event === 'assigned' && m.system.reason === 'auto_assign');
        expect(entries.map((m: { system: { to: string } }) => m.system.to)).toEqual([c.assigneeId]);
      }
      expect(assigned).toBe(expectAssigned);
      for (const ag of agents) expect(loads.get(ag.id) ?? 0).toBeLessThanOrEqual(limitOf(ag.id));
      return { byConversation, loads };
    };
    const first = await check(TOTAL);
    // Exactly one assignment event per conversation, and every agent at their capacity.
    for (const [, to] of first.byConversation) expect(to.length).toBe(1);
    expect(agents.map((ag) => first.loads.get(ag.id))).toEqual([CAPACITY, CAPACITY, CAPACITY, DAN]);

    // Ann resolves five (through the other node): five of the waiting twenty go out, still within capacity.
    const anns = phones.filter((p) => first.byConversation.get(`${p}:${a.phoneNumberId}`)?.[0] === agents[0]!.id).slice(0, 5);
    for (const p of anns) resolved.add(p);
    for (const p of anns) expect((await nodes[1]!.call('POST', `/v1/conversations/${p}:${a.phoneNumberId}/resolve`, { key: agents[0]!.key })).status).toBe(200);
    await eventually(async () => autoAssigned().length >= TOTAL + 5, 120_000);
    const second = await check(TOTAL);
    expect(second.loads.get(agents[0]!.id)).toBe(CAPACITY);
    expect(second.loads.get(agents[3]!.id)).toBe(DAN);
    expect(autoAssigned().length).toBe(TOTAL + 5);
    expect((await nodes[0]!.call('GET', '/v1/conversations/counts', { key: a.adminKey })).body.counts.waiting).toBe(100 - TOTAL - 5);
  }, 480_000);
});
