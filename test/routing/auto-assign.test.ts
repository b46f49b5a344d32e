import { afterEach, describe, expect, it } from 'vitest';
import { eventually, messagingOrg, useTwoOrgs, type MessagingOrg } from '../messaging/messaging-helpers.js';
import { extraAgent, InboxClient } from '../inbox/client.js';

/*
 * Auto-assignment on one embedded node: round-robin among online agents
 * under capacity, waiting when nobody can take one, served again when
 * capacity frees or someone comes online; a team's own setting; an
 * agent's own capacity; other organizations.
 */
describe('auto-assignment (embedded)', () => {
  // Every organization's events: the tests make organizations of their own.
  const orgs = useTwoOrgs({ env: { INBOX_FRAMES_PER_SECOND: '1000' }, events: 'all' });
  const { seen, conversation: conv } = orgs;
  const clients: InboxClient[] = [];
  const autoAssigned = (aeid?: string) => seen.filter((e) => e.type === 'conversation.assigned' && (e.data as { via?: string }).via === 'auto_assign' && (aeid === undefined || (e.data as { audienceExternalId: string }).audienceExternalId === aeid));

  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  const online = async (key: string) => {
    const c = await InboxClient.connect(orgs.svc.url, key);
    clients.push(c);
    return c;
  };
  const routing = (org: MessagingOrg, body: unknown) => orgs.patchChannel(org, { routing: body });
  const customer = (org: MessagingOrg, phone: string) => orgs.customer(org, phone, 'Hello');
  const held = async (org: MessagingOrg, phones: string[]) => {
    const out = new Map<string, number>();
    for (const p of phones) {
      const c = await conv(org, p);
      if (c?.status === 'assigned') out.set(c.assigneeId, (out.get(c.assigneeId) ?? 0) + 1);
    }
    return out;
  };

  it('gives queued conversations round-robin to online agents under capacity; the rest wait, and go when capacity frees', async () => {
    expect((await routing(orgs.a, { firstResponder: 'agents', autoAssign: { enabled: true, capacity: 2 } })).status).toBe(200);
    const ann = await extraAgent(orgs.svc, orgs.a, 'ann');
    const bob = await extraAgent(orgs.svc, orgs.a, 'bob');
    await online(ann.key);
    await online(bob.key);
    await eventually(async () => (await orgs.svc.running.services.presence.online(orgs.a.id)).length === 2);
    const phones = ['4915100000301', '4915100000302', '4915100000303', '4915100000304', '4915100000305'];
    for (const p of phones) expect((await customer(orgs.a, p)).status).toBe(201);
    await eventually(async () => autoAssigned().filter((e) => e.organizationId === orgs.a.id).length === 4, 15_000);
    const loads = await held(orgs.a, phones);
    expect(Object.fromEntries(loads)).toEqual({ [ann.id]: 2, [bob.id]: 2 });
    const waiting: string[] = [];
    for (const p of phones) if ((await conv(orgs.a, p)).status === 'queued') waiting.push(p);
    expect(waiting.length).toBe(1);
    // The timeline says so, in the actor's entry.
    const first = await conv(orgs.a, phones[0]!);
    const entry = first.messages.find((m: { system?: { event: string } }) => m.system?.event === 'assigned');
    expect(entry.system).toMatchObject({ reason: 'auto_assign', by: { type: 'automation' } });
    expect(entry.content.text).toBe(`Assigned automatically to agent ${first.assigneeId}`);

    // Ann resolves one: the waiting conversation goes to her.
    const annsFirst = phones.find((p) => seen.some((e) => e.type === 'conversation.assigned' && (e.data as { agentId: string; audienceExternalId: string }).agentId === ann.id && (e.data as { audienceExternalId: string }).audienceExternalId.startsWith(p)))!;
    expect((await orgs.svc.call('POST', `/v1/conversations/${annsFirst}:${orgs.a.phoneNumberId}/resolve`, { key: ann.key })).status).toBe(200);
    await eventually(async () => (await conv(orgs.a, waiting[0]!)).status === 'assigned', 15_000);
    expect((await conv(orgs.a, waiting[0]!)).assigneeId).toBe(ann.id);
    // Each conversation was given automatically exactly once.
    for (const p of phones) expect(autoAssigned(`${p}:${orgs.a.phoneNumberId}`).length).toBe(1);
  }, 60_000);

  it('skips agents who are away or offline; a conversation waits until someone comes online', async () => {
    const o = await messagingOrg(orgs.svc, 'Waits');
    expect((await routing(o, { firstResponder: 'agents', autoAssign: { enabled: true, capacity: null } })).status).toBe(200);
    const cat = await extraAgent(orgs.svc, o, 'cat');
    const dan = await extraAgent(orgs.svc, o, 'dan');
    await online(cat.key);
    expect((await orgs.svc.call('PATCH', '/v1/users/me/availability', { key: cat.key, body: { status: 'away' } })).status).toBe(200);
    const p = '4915100000311';
    expect((await customer(o, p)).status).toBe(201);
    await eventually(async () => (await conv(o, p))?.status === 'queued');
    // Nobody online: it waits (the round after the queueing found nobody).
    await eventually(async () => seen.some((e) => e.organizationId === o.id && e.type === 'handover.requested'));
    expect((await conv(o, p)).status).toBe('queued');
    await online(dan.key);
    await eventually(async () => (await conv(o, p)).status === 'assigned', 15_000);
    expect((await conv(o, p)).assigneeId).toBe(dan.id);
  });

  it("a team's own setting serves its queue to its members only, with its capacity", async () => {
    const o = await messagingOrg(orgs.svc, 'Teams');
    const eve = await extraAgent(orgs.svc, o, 'eve');
    const fay = await extraAgent(orgs.svc, o, 'fay');
    const t = await orgs.svc.call('POST', '/v1/teams', { key: o.adminKey, body: { name: 'Billing', memberIds: [fay.id], autoAssign: { enabled: true, capacity: 1 } } });
    expect(t.status).toBe(201);
    await online(eve.key);
    await online(fay.key);
    await eventually(async () => (await orgs.svc.running.services.presence.online(o.id)).length === 2);
    const phones = ['4915100000321', '4915100000322'];
    for (const p of phones) {
      expect((await customer(o, p)).status).toBe(201);
      await eventually(async () => (await conv(o, p)) !== undefined);
      expect((await orgs.svc.call('POST', `/v1/conversations/${p}:${o.phoneNumberId}/queue`, { key: o.adminKey, body: { teamId: t.body.team.id } })).status).toBe(200);
    }
    await eventually(async () => (await held(o, phones)).get(fay.id) === 1, 15_000);
    // Fay is at the team's capacity; Eve is not in the team; the channel did not opt in.
    expect(Object.fromEntries(await held(o, phones))).toEqual({ [fay.id]: 1 });
  });

  it("an agent's own capacity: the smaller of it and the channel's applies; set by an admin, shown with the users", async () => {
    const o = await messagingOrg(orgs.svc, 'Own capacity');
    expect((await routing(o, { firstResponder: 'agents', autoAssign: { enabled: true, capacity: 3 } })).status).toBe(200);
    const hal = await extraAgent(orgs.svc, o, 'hal');
    const ivy = await extraAgent(orgs.svc, o, 'ivy');
    const set = await orgs.svc.call('PATCH', `/v1/users/${hal.id}`, { key: o.adminKey, body: { capacity: 1 } });
    expect(set.status).toBe(200);
    expect(set.body.user).toMatchObject({ id: hal.id, capacity: 1 });
    const users = (await orgs.svc.call('GET', '/v1/users', { key: o.adminKey })).body.users as { id: string; capacity: number | null }[];
    expect(users.find((u) => u.id === hal.id)!.capacity).toBe(1);
    expect(users.find((u) => u.id === ivy.id)!.capacity).toBeNull();
    await online(hal.key);
    await online(ivy.key);
    await eventually(async () => (await orgs.svc.running.services.presence.online(o.id)).length === 2);
    const phones = ['4915100000341', '4915100000342', '4915100000343', '4915100000344', '4915100000345'];
    for (const p of phones) expect((await customer(o, p)).status).toBe(201);
    await eventually(async () => autoAssigned().filter((e) => e.organizationId === o.id).length === 4, 15_000);
    await orgs.svc.running.services.autoAssign.kick(o.id);
    // Hal stops at his own 1, Ivy at the channel's 3; the fifth waits.
    expect(Object.fromEntries(await held(o, phones))).toEqual({ [hal.id]: 1, [ivy.id]: 3 });
    // Null lifts Hal's own limit: the channel's 3 applies, and the waiting conversation goes to him at once.
    expect((await orgs.svc.call('PATCH', `/v1/users/${hal.id}`, { key: o.adminKey, body: { capacity: null } })).body.user.capacity).toBeNull();
    await eventually(async () => (await held(o, phones)).get(hal.id) === 2, 15_000);
    expect(Object.fromEntries(await held(o, phones))).toEqual({ [hal.id]: 2, [ivy.id]: 3 });
    for (const p of phones) expect(autoAssigned(`${p}:${o.phoneNumberId}`).length).toBe(1);
  }, 60_000);

  it("an agent's capacity is set only by an admin of their organization, within bounds", async () => {
    const o = await messagingOrg(orgs.svc, 'Capacity bounds');
    const jan = await extraAgent(orgs.svc, o, 'jan');
    for (const capacity of [0, 1001, 2.5, '3']) {
      const bad = await orgs.svc.call('PATCH', `/v1/users/${jan.id}`, { key: o.adminKey, body: { capacity } });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ success: false, error: { code: 'validation_failed' } });
    }
    // Another organization's admin finds no such user, and does not see them listed.
    const other = await orgs.svc.call('PATCH', `/v1/users/${jan.id}`, { key: orgs.b.adminKey, body: { capacity: 1 } });
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ success: false, error: { code: 'not_found' } });
    expect(((await orgs.svc.call('GET', '/v1/users', { key: orgs.b.adminKey })).body.users as { id: string }[]).some((u) => u.id === jan.id)).toBe(false);
    // The agent cannot raise their own.
    expect((await orgs.svc.call('PATCH', `/v1/users/${jan.id}`, { key: jan.key, body: { capacity: 100 } })).status).toBe(403);
    expect(((await orgs.svc.call('GET', '/v1/users', { key: o.adminKey })).body.users as { id: string; capacity: number | null }[]).find((u) => u.id === jan.id)!.capacity).toBeNull();
  });

  it("never gives a conversation to another organization's agent, nor serves a channel that did not opt in", async () => {
    // B's channel did not opt in: its queue waits even with its agent online.
    const bAgent = await extraAgent(orgs.svc, orgs.b, 'gus');
    await online(bAgent.key);
    expect((await routing(orgs.b, { firstResponder: 'agents' })).status).toBe(200);
    const pb = '4915100000331';
    expect((await customer(orgs.b, pb)).status).toBe(201);
    await eventually(async () => (await conv(orgs.b, pb))?.status === 'queued');
    // A's channel opted in, and only B's agent is online: A's new conversation waits.
    expect((await routing(orgs.a, { autoAssign: { enabled: true, capacity: null } })).status).toBe(200);
    const pa = '4915100000332';
    expect((await customer(orgs.a, pa)).status).toBe(201);
    await eventually(async () => seen.some((e) => e.organizationId === orgs.a.id && e.type === 'handover.requested' && (e.data as { audienceExternalId: string }).audienceExternalId.startsWith(pa)));
    // Give the rounds a moment to have run (kick waits for the running one), then check nothing happened.
    await orgs.svc.running.services.autoAssign.kick(orgs.a.id);
    await orgs.svc.running.services.autoAssign.kick(orgs.b.id);
    expect((await conv(orgs.a, pa)).status).toBe('queued');
    expect((await conv(orgs.b, pb)).status).toBe('queued');
    expect(seen.some((e) => e.type === 'conversation.assigned' && (e.data as { agentId?: string }).agentId === bAgent.id)).toBe(false);
  });
});
