import { describe, expect, it } from 'vitest';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually, useTwoOrgs, type MessagingOrg } from './messaging-helpers.js';

/*
 * Teams' queues: a conversation queued to a team (over the API and by a
 * rule's assign action), the team filter of the views and counts, the
 * timeline entry the conversation actor writes, and other organizations.
 */
function teamQueueSuite(name: string, env?: () => Record<string, string>) {
  describe(`team queues (${name})`, () => {
    const orgs = useTwoOrgs({ env });
    const { customer, conversation } = orgs;
    const team = async (org: MessagingOrg, name: string, memberIds: string[]) => (await orgs.svc.call('POST', '/v1/teams', { key: org.adminKey, body: { name, memberIds } })).body.team.id as string;
    const ids = async (key: string, query: string) => {
      const r = await orgs.svc.call('GET', `/v1/conversations?${query}`, { key });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.conversations as { id: string }[]).map((c) => c.id).sort();
    };
    const counts = async (key: string, query: string) => (await orgs.svc.call('GET', `/v1/conversations/counts?${query}`, { key })).body.counts;

    it("queues a conversation to a team's queue; members see their teams' queues in the views and counts; the timeline says so", async () => {
      const billing = await team(orgs.a, 'Billing', [orgs.a.agentId]);
      const sales = await team(orgs.a, 'Sales', [orgs.a.adminId]);
      const p1 = '4915100000201';
      const p2 = '4915100000202';
      const p3 = '4915100000203';
      for (const p of [p1, p2, p3]) expect((await customer(orgs.a, p, 'Hello')).status).toBe(201);
      await eventually(async () => (await conversation(orgs.a, p3)) !== undefined);
      const q1 = await orgs.svc.call('POST', `/v1/conversations/${p1}:${orgs.a.phoneNumberId}/queue`, { key: orgs.a.agentKey, body: { teamId: billing } });
      expect(q1.status, JSON.stringify(q1.body)).toBe(200);
      expect(q1.body.conversation).toMatchObject({ status: 'queued', teamId: billing });
      expect((await orgs.svc.call('POST', `/v1/conversations/${p2}:${orgs.a.phoneNumberId}/queue`, { key: orgs.a.adminKey, body: { teamId: sales } })).status).toBe(200);
      // Without a team, as before.
      expect((await orgs.svc.call('POST', `/v1/conversations/${p3}:${orgs.a.phoneNumberId}/queue`, { key: orgs.a.adminKey })).body.conversation).toMatchObject({ status: 'queued', teamId: null });

      const c1 = await conversation(orgs.a, p1);
      const entries = c1.messages.filter((m: { sender: string }) => m.sender === 'system').map((m: { system: { event: string; teamId?: string } }) => m.system);
      expect(entries).toEqual([expect.objectContaining({ event: 'handover_requested' }), expect.objectContaining({ event: 'team_assigned', teamId: billing })]);

      const c = (p: string) => `${p}:${orgs.a.phoneNumberId}`;
      expect(await ids(orgs.a.agentKey, 'view=waiting&team=mine')).toEqual([c(p1)]);
      expect(await ids(orgs.a.adminKey, 'view=waiting&team=mine')).toEqual([c(p2)]);
      expect(await ids(orgs.a.adminKey, `view=waiting&team=${billing}`)).toEqual([c(p1)]);
      expect((await counts(orgs.a.agentKey, 'team=mine')).waiting).toBe(1);
      expect((await counts(orgs.a.adminKey, `team=${sales}`)).waiting).toBe(1);
      expect(await ids(orgs.a.adminKey, 'view=waiting&team=team_nosuch')).toEqual([]);

      // Already queued: naming another team moves it; naming the same one again is 409.
      const moved = await orgs.svc.call('POST', `/v1/conversations/${c(p1)}/queue`, { key: orgs.a.adminKey, body: { teamId: sales } });
      expect(moved.body.conversation.teamId).toBe(sales);
      expect((await orgs.svc.call('POST', `/v1/conversations/${c(p1)}/queue`, { key: orgs.a.adminKey, body: { teamId: sales } })).body.error.code).toBe('already_queued');
      expect((await conversation(orgs.a, p1)).messages.at(-1).system).toMatchObject({ event: 'team_assigned', teamId: sales, fromTeamId: billing });
      expect(await ids(orgs.a.adminKey, `view=waiting&team=${sales}`)).toEqual([c(p1), c(p2)]);

      // Taken from the queue it stays the team's; handed back to the bot it is no team's.
      expect((await orgs.svc.call('POST', `/v1/conversations/${c(p1)}/take`, { key: orgs.a.adminKey })).body.conversation).toMatchObject({ status: 'assigned', teamId: sales });
      expect(await ids(orgs.a.adminKey, `view=mine&team=${sales}`)).toEqual([c(p1)]);
      expect((await orgs.svc.call('POST', `/v1/conversations/${c(p1)}/hand-back`, { key: orgs.a.adminKey })).body.conversation).toMatchObject({ status: 'bot', teamId: null });
    });

    it("a rule's assign action with a team queues the conversation in the team's queue", async () => {
      const vip = await team(orgs.a, 'VIP', [orgs.a.agentId]);
      const rule = await orgs.svc.call('POST', '/v1/automation-rules', {
        key: orgs.a.adminKey,
        body: { name: 'VIPs', conditions: [{ field: 'text', operator: 'contains', value: 'vip' }], actions: [{ type: 'assign', teamId: vip }] },
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(201);
      const p = '4915100000211';
      expect((await customer(orgs.a, p, 'I am a VIP')).status).toBe(201);
      await eventually(async () => (await conversation(orgs.a, p))?.teamId === vip);
      const conv = await conversation(orgs.a, p);
      expect(conv.status).toBe('queued');
      expect(conv.messages.filter((m: { sender: string }) => m.sender === 'system').map((m: { system: { event: string } }) => m.system.event)).toEqual(['rule_fired', 'handover_requested', 'team_assigned']);
      // A rule may not name another organization's team, nor an agent and a team at once.
      const theirs = await team(orgs.b, 'Theirs', []);
      for (const action of [{ type: 'assign', teamId: theirs }, { type: 'assign', teamId: vip, agentId: orgs.a.agentId }, { type: 'assign' }]) {
        const r = await orgs.svc.call('POST', '/v1/automation-rules', { key: orgs.a.adminKey, body: { name: 'x', conditions: [], actions: [action] } });
        expect(r.status, JSON.stringify(action)).toBe(400);
      }
      expect((await orgs.svc.call('DELETE', `/v1/automation-rules/${rule.body.rule.id}`, { key: orgs.a.adminKey })).status).toBeLessThan(300);
    });

    it("never queues to, filters by or shows another organization's team", async () => {
      const theirs = await team(orgs.b, 'B team', [orgs.b.agentId]);
      const p = '4915100000221';
      expect((await customer(orgs.a, p, 'Hi')).status).toBe(201);
      await eventually(async () => (await conversation(orgs.a, p)) !== undefined);
      const r = await orgs.svc.call('POST', `/v1/conversations/${p}:${orgs.a.phoneNumberId}/queue`, { key: orgs.a.adminKey, body: { teamId: theirs } });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe('unknown_team');
      expect((await conversation(orgs.a, p)).status).toBe('bot');
      expect(await ids(orgs.a.adminKey, `view=all&team=${theirs}`)).toEqual([]);
      expect((await counts(orgs.a.adminKey, `team=${theirs}`)).all).toBe(0);
      // B's agent does not reach A's conversation through a queue call either.
      expect((await orgs.svc.call('POST', `/v1/conversations/${p}:${orgs.a.phoneNumberId}/queue`, { key: orgs.b.adminKey, body: { teamId: theirs } })).status).toBe(404);
      for (const body of [{ teamId: '' }, { teamId: 5 }, { team: 'x' }]) expect((await orgs.svc.call('POST', `/v1/conversations/${p}:${orgs.a.phoneNumberId}/queue`, { key: orgs.a.adminKey, body })).status).toBe(400);
    });
  });
}

teamQueueSuite('embedded');

describe('clustered', () => {
  const servers = useClusterServers();
  teamQueueSuite('clustered', () => ({ ...servers.env(`tq${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true' }));
});
