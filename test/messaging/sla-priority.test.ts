import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { eventually, useTwoOrgs } from './messaging-helpers.js';

/*
 * Response-time targets by the conversation's priority (its contact's open
 * ticket's, as an agent or a rule on the very message sets it) and counted
 * in business hours only, through the conversation actor on a clock the test
 * moves.
 */
describe('response targets by priority and in business hours', () => {
  // Saturday 28 March 2026, 11:30 in Berlin (winter time); the clocks go forward on Sunday at 02:00.
  const clock = new ManualClock(Date.parse('2026-03-28T10:30:00Z'));
  const orgs = useTwoOrgs({ clock, events: 'both' });
  const { events, patchChannel: patch, customer, aeid, conversation } = orgs;
  const sweep = () => orgs.svc.running.services.timers.sweep();

  it('takes and shows targets by priority and the clock; refuses what is not one, and another organization', async () => {
    const r = await patch(orgs.a, { routing: { sla: { firstResponseSeconds: 3600, byPriority: { urgent: { firstResponseSeconds: 60 }, high: { nextResponseSeconds: 120 } } } } });
    expect(r.status).toBe(200);
    expect(r.body.routing.sla).toEqual({
      firstResponseSeconds: 3600,
      nextResponseSeconds: null,
      byPriority: { urgent: { firstResponseSeconds: 60, nextResponseSeconds: null }, high: { firstResponseSeconds: null, nextResponseSeconds: 120 } },
      clock: 'calendar',
    });
    // Priority by priority: one replaced, one removed, the others kept.
    const r2 = await patch(orgs.a, { routing: { sla: { byPriority: { high: null, low: { firstResponseSeconds: 7200 } }, clock: 'business_hours' } } });
    expect(r2.body.routing.sla).toEqual({
      firstResponseSeconds: 3600,
      nextResponseSeconds: null,
      byPriority: { urgent: { firstResponseSeconds: 60, nextResponseSeconds: null }, low: { firstResponseSeconds: 7200, nextResponseSeconds: null } },
      clock: 'business_hours',
    });
    expect((await orgs.svc.call('GET', `/v1/channels/${orgs.a.channelId}`, { key: orgs.a.agentKey })).body.routing.sla).toEqual(r2.body.routing.sla);
    for (const sla of [{ byPriority: { critical: { firstResponseSeconds: 60 } } }, { byPriority: { urgent: { firstResponseSeconds: 5 } } }, { byPriority: { urgent: { thirdResponseSeconds: 60 } } }, { clock: 'office' }]) {
      const bad = await patch(orgs.a, { routing: { sla } });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ success: false, error: { code: 'validation_failed' } });
    }
    // A key without settings:manage may not; another organization's admin finds no such channel, and nothing changed.
    expect((await patch(orgs.a, { routing: { sla: { byPriority: { urgent: null } } } }, await orgs.a.keyWith(['inbox:read', 'inbox:write'], 'agent'))).status).toBe(403);
    const other = await patch(orgs.a, { routing: { sla: { byPriority: { urgent: null } } } }, orgs.b.adminKey);
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ success: false, error: { code: 'not_found' } });
    expect((await orgs.svc.call('GET', `/v1/channels/${orgs.a.channelId}`, { key: orgs.a.adminKey })).body.routing.sla).toEqual(r2.body.routing.sla);
    await patch(orgs.a, { routing: { sla: { firstResponseSeconds: null, byPriority: { urgent: null, low: null }, clock: 'calendar' } } });
  });

  it("a rule's ticket on the very message makes the conversation urgent: the urgent target applies, breached once with its priority", async () => {
    await patch(orgs.a, { routing: { firstResponder: 'agents', sla: { firstResponseSeconds: 3600, byPriority: { urgent: { firstResponseSeconds: 60 } } } } });
    const rule = await orgs.svc.call('POST', '/v1/automation-rules', {
      key: orgs.a.adminKey,
      body: { name: 'Refunds are urgent', conditions: [{ field: 'text', operator: 'contains', value: 'refund' }], actions: [{ type: 'create_ticket', subject: 'Refund' }, { type: 'set_priority', priority: 'urgent' }] },
    });
    expect(rule.status).toBe(201);
    const urgent = '4915100000301';
    const plain = '4915100000302';
    const since = clock.now();
    await customer(orgs.a, urgent, 'I want a refund');
    await customer(orgs.a, plain, 'Hello');
    await eventually(async () => (await conversation(orgs.a, urgent))?.sla && (await conversation(orgs.a, plain))?.sla);
    expect((await conversation(orgs.a, urgent)).sla).toEqual({ target: 'first_response', priority: 'urgent', since: new Date(since).toISOString(), dueAt: new Date(since + 60_000).toISOString(), breachedAt: null });
    expect((await conversation(orgs.a, plain)).sla).toEqual({ target: 'first_response', priority: null, since: new Date(since).toISOString(), dueAt: new Date(since + 3_600_000).toISOString(), breachedAt: null });
    // The rule's ticket is there, urgent.
    await eventually(async () => (await orgs.svc.call('GET', `/v1/tickets?audienceExternalId=${aeid(orgs.a, urgent)}`, { key: orgs.a.adminKey })).body.tickets?.[0]?.priority === 'urgent');

    clock.advance(61_000);
    await Promise.all([sweep(), sweep()]);
    await sweep();
    await eventually(async () => events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.a, urgent)).length === 1);
    expect(events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.a, urgent))[0]!.data).toMatchObject({ target: 'first_response', priority: 'urgent' });
    expect(events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.a, plain))).toHaveLength(0);
    await orgs.svc.call('DELETE', `/v1/automation-rules/${rule.body.rule.id}`, { key: orgs.a.adminKey });
    for (const phone of [urgent, plain]) await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, phone)}/resolve`, { key: orgs.a.adminKey });
  });

  it("an agent's ticket priority applies from the customer's next message; another organization's same customer keeps its own targets", async () => {
    await patch(orgs.a, { routing: { firstResponder: 'agents', sla: { firstResponseSeconds: null, nextResponseSeconds: 3600, byPriority: { urgent: null, high: { nextResponseSeconds: 120 } } } } });
    await patch(orgs.b, { routing: { firstResponder: 'agents', sla: { nextResponseSeconds: 3600 } } });
    const phone = '4915100000303';
    await customer(orgs.a, phone, 'Where is my order?');
    await eventually(async () => (await conversation(orgs.a, phone))?.status === 'queued');
    expect((await conversation(orgs.a, phone)).sla).toBeNull();
    expect((await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, phone)}/take`, { key: orgs.a.agentKey })).status).toBe(200);
    expect((await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, phone)}/reply`, { key: orgs.a.agentKey, body: { type: 'text', text: 'Looking.' } })).status).toBe(200);
    const ticket = await orgs.svc.call('POST', '/v1/tickets', { key: orgs.a.agentKey, body: { subject: 'Late order', description: 'The parcel is late.', priority: 'high', audienceExternalId: aeid(orgs.a, phone) } });
    expect(ticket.status).toBe(201);
    // The same number writes to B, which has no ticket for it.
    await customer(orgs.b, phone, 'Hello B');
    await eventually(async () => (await conversation(orgs.b, phone))?.status === 'queued');
    const since = clock.now();
    await customer(orgs.a, phone, 'Any news?');
    await eventually(async () => (await conversation(orgs.a, phone))?.sla);
    expect((await conversation(orgs.a, phone)).sla).toMatchObject({ target: 'next_response', priority: 'high', dueAt: new Date(since + 120_000).toISOString() });
    expect((await conversation(orgs.b, phone)).sla).toBeNull();
    await orgs.svc.call('POST', `/v1/conversations/${aeid(orgs.a, phone)}/resolve`, { key: orgs.a.agentKey });
  });

  it('counts only open time under the business-hours clock: due after the weekend, in summer time, breached once', async () => {
    clock.set(Date.parse('2026-03-28T10:30:00Z')); // Saturday 11:30 in Berlin, open until 12:00
    const hours = { timeZone: 'Europe/Berlin', weekly: { sat: [{ from: '10:00', to: '12:00' }], mon: [{ from: '09:00', to: '17:00' }] } };
    await patch(orgs.a, { routing: { firstResponder: 'agents', businessHours: hours, sla: { firstResponseSeconds: 3600, nextResponseSeconds: null, byPriority: { high: null }, clock: 'business_hours' } } });
    const phone = '4915100000304';
    await customer(orgs.a, phone, 'Hello?');
    await eventually(async () => (await conversation(orgs.a, phone))?.sla);
    // Half an hour on Saturday, the other half from Monday 09:00 summer time (07:00Z, not 08:00Z as in winter).
    expect((await conversation(orgs.a, phone)).sla).toMatchObject({ target: 'first_response', priority: null, dueAt: '2026-03-30T07:30:00.000Z' });
    clock.set(Date.parse('2026-03-30T07:29:00Z'));
    await sweep();
    expect(events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.a, phone))).toHaveLength(0);
    clock.set(Date.parse('2026-03-30T07:30:30Z'));
    await Promise.all([sweep(), sweep()]);
    await eventually(async () => events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.a, phone)).length === 1);
    clock.advance(3_600_000);
    await sweep();
    expect(events('conversation.sla_breached', (d) => d.audienceExternalId === aeid(orgs.a, phone))).toHaveLength(1);
    expect((await conversation(orgs.a, phone)).sla.breachedAt).toBe('2026-03-30T07:30:30.000Z');
  });
});
