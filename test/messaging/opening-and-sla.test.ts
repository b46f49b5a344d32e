import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { InboxClient } from '../inbox/client.js';
import { eventually, useTwoOrgs } from './messaging-helpers.js';

/*
 * Outside business hours a conversation automation would queue waits for
 * the channel's next opening (across a daylight-saving change, on a clock
 * the test moves), and response-time targets: a conversation past its
 * target is flagged, in the views and by `conversation.sla_breached` once,
 * until an agent answers.
 */
describe('waiting for the opening, and response-time targets', () => {
  // Saturday 28 March 2026, 13:00 in Berlin (winter time); the clocks go forward on Sunday at 02:00.
  const clock = new ManualClock(Date.parse('2026-03-28T12:00:00Z'));
  const orgs = useTwoOrgs({ clock, events: 'both' });
  const { seen, events, patchChannel: patch, customer, conversation, aeid } = orgs;
  const sweep = () => orgs.svc.running.services.timers.sweep();

  it('agents first, outside the hours: the away reply once, and the conversation is queued at the next opening, after the clocks changed', async () => {
    const hours = { timeZone: 'Europe/Berlin', weekly: { mon: [{ from: '09:00', to: '17:00' }] }, holidays: [], awayReply: 'We are closed until Monday 9:00.' };
    expect((await patch(orgs.a, { routing: { firstResponder: 'agents', businessHours: hours } })).status).toBe(200);
    const phone = '4915100000201';
    expect((await customer(orgs.a, phone, 'Hello?')).status).toBe(201);
    await eventually(async () => (await conversation(orgs.a, phone))?.messages?.some((m: { system?: { event: string } }) => m.system?.event === 'waiting_for_opening'));
    const c = await conversation(orgs.a, phone);
    expect(c.status).toBe('bot');
    // Monday 30 March, 09:00 summer time (UTC+2) is 07:00Z, not 08:00Z as in winter.
    const waiting = c.messages.find((m: { system?: { event: string } }) => m.system?.event === 'waiting_for_opening');
    expect(waiting.system).toMatchObject({ by: { type: 'automation' }, reason: 'first_responder', until: '2026-03-30T07:00:00.000Z' });
    await eventually(async () => (await conversation(orgs.a, phone)).messages.some((m: { content: { text?: string } }) => m.content.text === 'We are closed until Monday 9:00.'));
    // The customer writes again: no second away reply, still waiting.
    await customer(orgs.a, phone, 'Anyone there?');
    await eventually(async () => events('inbound_message', (d) => d.audienceExternalId === aeid(orgs.a, phone)).length === 2);
    expect(events('automation.fired', (d) => d.audienceExternalId === aeid(orgs.a, phone) && d.ruleId === 'business_hours')).toHaveLength(1);

    clock.set(Date.parse('2026-03-30T06:59:00Z'));
    await sweep();
    expect(await conversation(orgs.a, phone)).toMatchObject({ status: 'bot' });
    expect(events('handover.requested', (d) => d.audienceExternalId === aeid(orgs.a, phone))).toHaveLength(0);
    clock.set(Date.parse('2026-03-30T07:00:30Z'));
    await sweep();
    expect(await conversation(orgs.a, phone)).toMatchObject({ status: 'queued' });
    const queued = events('handover.requested', (d) => d.audienceExternalId === aeid(orgs.a, phone));
    expect(queued).toHaveLength(1);
    expect(queued[0]!.data).toMatchObject({ by: 'automation', reason: 'first_responder' });
    // Swept again later: nothing twice.
    clock.advance(3_600_000);
    await sweep();
    expect(events('handover.requested', (d) => d.audienceExternalId === aeid(orgs.a, phone))).toHaveLength(1);
    // Inside the hours a new conversation is queued at once.
    const open = '4915100000202';
    await customer(orgs.a, open, 'Hi');
    await eventually(async () => (await conversation(orgs.a, open))?.status === 'queued');
    expect(events('automation.fired', (d) => d.audienceExternalId === aeid(orgs.a, open))).toHaveLength(0);
    await patch(orgs.a, { routing: { firstResponder: 'bot', businessHours: null } });
  });

  it("a conversation waiting for the opening that an agent takes meanwhile is not queued again at the opening", async () => {
    clock.set(Date.parse('2026-04-03T18:00:00Z')); // Friday 20:00 in Berlin
    await patch(orgs.a, { routing: { firstResponder: 'agents', businessHours: { timeZone: 'Europe/Berlin', weekly: { mon: [{ from: '09:00', to: '17:00' }] } } } });
    const phone = '4915100000203';
    await customer(orgs.a, phone, 'Hello?');
    await eventually(async () => (await conversation(orgs.a, phone))?.lastInboundAt);
    expect((await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, phone)}/take`, { key: orgs.a.agentKey })).status).toBe(200);
    clock.set(Date.parse('2026-04-06T08:00:00Z'));
    await sweep();
    expect(await conversation(orgs.a, phone)).toMatchObject({ status: 'assigned' });
    expect(events('handover.requested', (d) => d.audienceExternalId === aeid(orgs.a, phone))).toHaveLength(0);
    await patch(orgs.a, { routing: { firstResponder: 'bot', businessHours: null } });
  });

  it('response targets: flagged past the first response target with one sla_breached event, listed by sla=breached, cleared by the reply; then the next response target', async () => {
    const socket = await InboxClient.connect(orgs.svc.url, orgs.a.agentKey);
    try {
      expect((await patch(orgs.a, { routing: { firstResponder: 'agents', sla: { firstResponseSeconds: 60, nextResponseSeconds: 120 } } })).body.routing.sla).toEqual({ firstResponseSeconds: 60, nextResponseSeconds: 120, byPriority: {}, clock: 'calendar' });
      const phone = '4915100000204';
      const other = '4915100000205';
      const since = clock.now();
      await customer(orgs.a, phone, 'My order is late');
      await customer(orgs.a, other, 'Hello');
      await eventually(async () => (await conversation(orgs.a, phone))?.status === 'queued' && (await conversation(orgs.a, other))?.status === 'queued');
      expect((await conversation(orgs.a, phone)).sla).toEqual({ target: 'first_response', priority: null, since: new Date(since).toISOString(), dueAt: new Date(since + 60_000).toISOString(), breachedAt: null });
      // The other one gets an answer in time.
      expect((await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, other)}/take`, { key: orgs.a.agentKey })).status).toBe(200);
      expect((await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, other)}/reply`, { key: orgs.a.agentKey, body: { type: 'text', text: 'Hi!' } })).status).toBe(200);
      expect((await conversation(orgs.a, other)).sla).toBeNull();

      clock.advance(59_000);
      await sweep();
      expect((await conversation(orgs.a, phone)).sla.breachedAt).toBeNull();
      clock.advance(2_000);
      await Promise.all([sweep(), sweep()]);
      await sweep();
      const breached = events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.a, phone));
      expect(breached).toHaveLength(1);
      expect(breached[0]!.data).toMatchObject({ target: 'first_response', handoverStatus: 'queued', assigneeId: null, dueAt: new Date(since + 60_000).toISOString() });
      expect((await conversation(orgs.a, phone)).sla.breachedAt).toBe(new Date(clock.now()).toISOString());
      // On the inbox socket too.
      await socket.waitFor((f) => f.type === 'conversation.sla_breached' && f.data.audienceExternalId === aeid(orgs.a, phone));
      // The timeline says so.
      expect((await conversation(orgs.a, phone)).messages.at(-1).system).toMatchObject({ event: 'sla_breached', target: 'first_response' });
      // In the views: sla=breached lists it and not the answered one; counts follow.
      const list = await orgs.svc.call('GET', '/v1/conversations?sla=breached', { key: orgs.a.agentKey });
      expect(list.status).toBe(200);
      expect(list.body.conversations.map((c: { id: string }) => c.id)).toEqual([aeid(orgs.a, phone)]);
      expect((await orgs.svc.call('GET', '/v1/conversations/counts?sla=breached', { key: orgs.a.agentKey })).body.counts).toMatchObject({ all: 1, waiting: 1 });
      // Swept again much later: never twice.
      clock.advance(600_000);
      await sweep();
      expect(events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.a, phone))).toHaveLength(1);

      // The agent's reply clears the flag.
      expect((await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, phone)}/take`, { key: orgs.a.agentKey })).status).toBe(200);
      expect((await conversation(orgs.a, phone)).sla.breachedAt).not.toBeNull();
      expect((await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, phone)}/reply`, { key: orgs.a.agentKey, body: { type: 'text', text: 'Sorry, looking now.' } })).status).toBe(200);
      expect((await conversation(orgs.a, phone)).sla).toBeNull();
      expect((await orgs.svc.call('GET', '/v1/conversations?sla=breached', { key: orgs.a.agentKey })).body.conversations).toEqual([]);

      // The customer writes again: the next response target (120 s), breached once.
      const again = clock.now();
      await customer(orgs.a, phone, 'Still nothing');
      await eventually(async () => (await conversation(orgs.a, phone))?.sla?.target === 'next_response');
      clock.advance(121_000);
      await sweep();
      await sweep();
      const next = events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.a, phone) && d.target === 'next_response');
      expect(next).toHaveLength(1);
      expect(next[0]!.data).toMatchObject({ handoverStatus: 'agent', assigneeId: orgs.a.agentId, since: new Date(again).toISOString() });

      // Resolving ends the target for good.
      expect((await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, phone)}/resolve`, { key: orgs.a.agentKey })).status).toBe(200);
      expect((await conversation(orgs.a, phone)).sla).toBeNull();
    } finally {
      socket.close();
      await patch(orgs.a, { routing: { firstResponder: 'bot', sla: { firstResponseSeconds: null, nextResponseSeconds: null } } });
    }
  });

  it("never flags another organization's conversations, nor lists them", async () => {
    await patch(orgs.b, { routing: { firstResponder: 'agents', sla: { firstResponseSeconds: 30 } } });
    const phone = '4915100000206';
    await customer(orgs.b, phone, 'Hello?');
    await eventually(async () => (await conversation(orgs.b, phone))?.status === 'queued');
    clock.advance(31_000);
    await sweep();
    await eventually(async () => events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.b, phone)).length === 1);
    expect(seen.filter((e) => e.type === 'conversation.sla_breached' && e.organizationId === orgs.a.id && (e.data as { audienceExternalId: string }).audienceExternalId === aeid(orgs.b, phone))).toHaveLength(0);
    expect((await orgs.svc.call('GET', '/v1/conversations?sla=breached', { key: orgs.b.agentKey })).body.conversations.map((c: { id: string }) => c.id)).toEqual([aeid(orgs.b, phone)]);
    expect((await orgs.svc.call('GET', '/v1/conversations?sla=breached', { key: orgs.a.agentKey })).body.conversations.map((c: { id: string }) => c.id)).not.toContain(aeid(orgs.b, phone));
    expect((await orgs.svc.call('GET', `/v1/conversations/${aeid(orgs.b, phone)}`, { key: orgs.a.agentKey })).status).toBe(404);
    expect((await orgs.svc.call('GET', '/v1/conversations?sla=late', { key: orgs.a.agentKey })).status).toBe(400);
  });
});
