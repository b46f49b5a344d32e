import { describe, expect, it } from 'vitest';
import { eventually, useTwoOrgs, type MessagingOrg } from './messaging-helpers.js';

/*
 * Rules on labels and the label and ticket actions over the API: a rule
 * that tests a contact's label, puts a label on the conversation, creates a
 * ticket and raises its priority, each in the timeline naming the rule; an
 * action that cannot be carried out is recorded and blocks nothing; another
 * organization's labels and tickets are never reached.
 */
describe('rules on labels, and the label and ticket actions', () => {
  const orgs = useTwoOrgs({ events: 'both' });
  const { events, customer, conversation } = orgs;
  const call = (org: MessagingOrg, method: string, path: string, body?: unknown) => orgs.svc.call(method, path, { key: org.adminKey, body });
  const entries = async (org: MessagingOrg, phone: string) =>
    ((await conversation(org, phone))?.messages ?? []).filter((m: { system?: unknown }) => m.system !== undefined).map((m: { system: { event: string } }) => m.system);

  it('validates label conditions and the new actions', async () => {
    for (const body of [
      { name: 'x', actions: [{ type: 'add_label' }] },
      { name: 'x', actions: [{ type: 'set_priority', priority: 'whenever' }] },
      { name: 'x', actions: [{ type: 'create_ticket', subject: '' }] },
      { name: 'x', conditions: [{ field: 'label', operator: 'is', value: 'vip' }], actions: [{ type: 'request_handover' }] },
      { name: 'x', conditions: [{ field: 'label', operator: 'in', value: 'vip' }], actions: [{ type: 'request_handover' }] },
    ]) {
      const r = await call(orgs.a, 'POST', '/v1/automation-rules', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
    }
  });

  it("a rule on a contact's label adds a label, creates a ticket and raises its priority, in order, each in the timeline", async () => {
    expect((await call(orgs.a, 'POST', '/v1/labels', { name: 'VIP' })).status).toBe(201);
    expect((await call(orgs.a, 'POST', '/v1/labels', { name: 'Escalated' })).status).toBe(201);
    expect((await call(orgs.b, 'POST', '/v1/labels', { name: 'B only' })).status).toBe(201);
    const rule = await call(orgs.a, 'POST', '/v1/automation-rules', {
      name: 'VIP escalation',
      conditions: [{ field: 'label', operator: 'equals', value: 'vip' }],
      actions: [
        { type: 'add_label', label: 'escalated' },
        { type: 'add_label', label: 'B only' },
        { type: 'create_ticket', subject: 'VIP needs a call back' },
        { type: 'set_priority', priority: 'urgent' },
      ],
    });
    expect(rule.status).toBe(201);
    const ruleId = rule.body.rule.id;
    const vip = '4915100000301';
    const plain = '4915100000302';
    // The VIP label is on the contact (not the conversation).
    const contact = await orgs.a.contact(`${vip}:${orgs.a.phoneNumberId}`);
    expect((await call(orgs.a, 'POST', `/v1/contacts/${contact.id}/labels`, { labels: ['VIP'] })).status).toBe(200);
    await customer(orgs.a, vip, 'Hello, it is me again');
    await customer(orgs.a, plain, 'Hello');
    await eventually(async () => (await entries(orgs.a, vip)).some((e: { event: string }) => e.event === 'priority_set'), 20_000);
    const timeline = await entries(orgs.a, vip);
    expect(timeline.map((e: { event: string }) => e.event)).toEqual(['rule_fired', 'label_added', 'automation_failed', 'ticket_created', 'priority_set']);
    expect(timeline[1]).toMatchObject({ by: { type: 'automation' }, label: 'Escalated', ruleId });
    expect(timeline[2]).toMatchObject({ action: 'add_label', ruleId, reason: 'no label named "B only" in the organization' });
    expect(timeline[3]).toMatchObject({ by: { type: 'automation' }, subject: 'VIP needs a call back', ruleId });
    expect(timeline[4]).toMatchObject({ by: { type: 'automation' }, priority: 'urgent', ticketId: timeline[3].ticketId, ruleId });
    expect((await conversation(orgs.a, vip)).labels.map((l: { name: string }) => l.name)).toEqual(['Escalated']);
    const tickets = await call(orgs.a, 'GET', `/v1/tickets?audienceExternalId=${vip}:${orgs.a.phoneNumberId}`);
    expect(tickets.body.tickets).toHaveLength(1);
    expect(tickets.body.tickets[0]).toMatchObject({ title: 'VIP needs a call back', priority: 'urgent', status: 'open', createdBy: null });
    expect(events('conversation.labels_changed', (d) => d.audienceExternalId === `${vip}:${orgs.a.phoneNumberId}`)[0]!.data).toMatchObject({ by: 'automation', ruleId });
    expect(events('automation.failed', (d) => d.audienceExternalId === `${vip}:${orgs.a.phoneNumberId}`).map((e) => (e.data as { code: string }).code)).toEqual(['unknown_label']);
    // The other customer has no such label: nothing fired.
    expect(await entries(orgs.a, plain)).toEqual([]);
    // Another organization's label was not put on, and its tickets are untouched.
    expect((await call(orgs.b, 'GET', '/v1/tickets')).body.tickets).toEqual([]);
    await call(orgs.a, 'DELETE', `/v1/automation-rules/${ruleId}`);
  });

  it('set_priority without an open ticket is recorded as failed and blocks nothing', async () => {
    const rule = await call(orgs.a, 'POST', '/v1/automation-rules', { name: 'Urgent words', conditions: [{ field: 'text', operator: 'contains', value: 'urgent' }], actions: [{ type: 'set_priority', priority: 'high' }, { type: 'request_handover' }] });
    expect(rule.status).toBe(201);
    const phone = '4915100000303';
    await customer(orgs.a, phone, 'This is urgent');
    await eventually(async () => (await entries(orgs.a, phone)).some((e: { event: string }) => e.event === 'automation_failed'), 20_000);
    expect((await conversation(orgs.a, phone)).status).toBe('queued');
    expect((await entries(orgs.a, phone)).find((e: { event: string }) => e.event === 'automation_failed')).toMatchObject({ action: 'set_priority', reason: "the conversation's contact has no open ticket to set the priority of" });
    expect(events('automation.failed', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`).map((e) => (e.data as { code: string }).code)).toEqual(['no_open_ticket']);
    await call(orgs.a, 'DELETE', `/v1/automation-rules/${rule.body.rule.id}`);
  });
});
