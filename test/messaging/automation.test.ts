import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/events/types.js';
import { eventually, messagingOrg, orderUpdate, useTwoOrgs, type MessagingOrg } from './messaging-helpers.js';

/*
 * Automation rules over the API: managing them (scopes, bad input, other
 * organizations), and what they do to customer messages as they arrive.
 */
describe('automation rules', () => {
  const orgs = useTwoOrgs({ events: 'a' });
  const { events, conversation } = orgs;

  const rules = (org: MessagingOrg, method: string, path = '', body?: unknown, key = org.adminKey) => orgs.svc.call(method, `/v1/automation-rules${path}`, { key, body });
  const customer = (org: MessagingOrg, phone: string, what: string, body: unknown) => orgs.svc.call('POST', `/v1/sandbox/channels/${org.channelId}/customers/${phone}/${what}`, { key: org.adminKey, body });
  const fired = (phone: string) => events('automation.fired', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`).map((e) => (e.data as { ruleName: string }).ruleName);

  it('keeps rules in order: created last or at a position, moved, changed, deleted', async () => {
    const one = await rules(orgs.a, 'POST', '', { name: 'one', actions: [{ type: 'webhook', event: 'one' }] });
    expect(one.status).toBe(201);
    expect(one.body.rule).toMatchObject({ name: 'one', enabled: true, position: 0, conditions: [], stop: false, actions: [{ type: 'webhook', event: 'one' }] });
    const two = await rules(orgs.a, 'POST', '', { name: 'two', actions: [{ type: 'request_handover' }] });
    const zero = await rules(orgs.a, 'POST', '', { name: 'zero', position: 0, actions: [{ type: 'request_handover' }] });
    expect(zero.body.rule.position).toBe(0);
    const names = async () => (await rules(orgs.a, 'GET')).body.rules.map((r: { name: string; position: number }) => `${r.position}:${r.name}`);
    expect(await names()).toEqual(['0:zero', '1:one', '2:two']);
    const moved = await rules(orgs.a, 'PATCH', `/${two.body.rule.id}`, { position: 0, enabled: false });
    expect(moved.body.rule).toMatchObject({ name: 'two', position: 0, enabled: false });
    expect(await names()).toEqual(['0:two', '1:zero', '2:one']);
    for (const r of [one, two, zero]) expect((await rules(orgs.a, 'DELETE', `/${r.body.rule.id}`)).status).toBe(204);
    expect(await names()).toEqual([]);
    expect((await rules(orgs.a, 'DELETE', `/${one.body.rule.id}`)).status).toBe(404);
  });

  it('needs settings:manage, refuses bad input with nothing stored, and keeps organizations apart', async () => {
    const readOnly = await orgs.a.keyWith(['inbox:read', 'inbox:write']);
    for (const [method, path, body] of [['GET', '', undefined], ['POST', '', { name: 'x', actions: [{ type: 'request_handover' }] }], ['PATCH', '/rule_x', { enabled: false }], ['DELETE', '/rule_x', undefined]] as const) {
      const r = await rules(orgs.a, method, path, body, readOnly);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error.code).toBe('insufficient_scope');
    }
    const ok = { name: 'x', actions: [{ type: 'request_handover' }] };
    for (const body of [
      { name: 'x' },
      { name: 'x', actions: [] },
      { ...ok, surprise: 1 },
      { ...ok, actions: [{ type: 'fly' }] },
      { ...ok, actions: [{ type: 'auto_reply' }] },
      { ...ok, actions: [{ type: 'webhook', event: 'Not Valid' }] },
      { ...ok, actions: [{ type: 'assign', agentId: 'nobody' }] },
      { ...ok, actions: [{ type: 'assign', agentId: orgs.b.agentId }] },
      { ...ok, conditions: [{ field: 'text', operator: 'matches', value: '(unclosed' }] },
      { ...ok, conditions: [{ field: 'text', operator: 'in', value: 'one' }] },
      { ...ok, conditions: [{ field: 'colour', operator: 'equals', value: 'red' }] },
      { ...ok, conditions: [{ field: 'businessHours', operator: 'equals', value: 'open' }] },
      { ...ok, conditions: [{ field: 'type', operator: 'equals', value: 'hologram' }] },
      { ...ok, position: -1 },
    ]) {
      const r = await rules(orgs.a, 'POST', '', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
    }
    expect((await rules(orgs.a, 'GET')).body.rules).toEqual([]);
    // B's rule: A never sees, changes or deletes it.
    const theirs = await rules(orgs.b, 'POST', '', { name: 'theirs', actions: [{ type: 'assign', agentId: orgs.b.agentId }] });
    expect(theirs.status).toBe(201);
    expect((await rules(orgs.a, 'PATCH', `/${theirs.body.rule.id}`, { enabled: false })).status).toBe(404);
    expect((await rules(orgs.a, 'DELETE', `/${theirs.body.rule.id}`)).status).toBe(404);
    expect((await rules(orgs.a, 'GET')).body.rules).toEqual([]);
    expect((await rules(orgs.b, 'GET')).body.rules).toEqual([expect.objectContaining({ name: 'theirs', enabled: true })]);
    expect((await rules(orgs.b, 'DELETE', `/${theirs.body.rule.id}`)).status).toBe(204);
  });

  it('runs the rules on each customer message in order, once, stopping where a rule says so', async () => {
    const made = [];
    for (const body of [
      { name: 'refund', conditions: [{ field: 'text', operator: 'contains', value: ['refund', 'money back'] }], actions: [{ type: 'webhook', event: 'refund_asked' }] },
      {
        name: 'agent',
        conditions: [{ field: 'payload', operator: 'equals', value: 'Talk to an agent' }],
        actions: [{ type: 'request_handover' }, { type: 'auto_reply', text: 'An agent will be with you shortly.' }],
        stop: true,
      },
      { name: 'order number', conditions: [{ field: 'text', operator: 'matches', value: '\\bA-\\d{4}\\b' }, { field: 'type', operator: 'in', value: ['text'] }], actions: [{ type: 'webhook', event: 'order' }] },
      { name: 'off', enabled: false, actions: [{ type: 'request_handover' }] },
      { name: 'everything', actions: [{ type: 'webhook', event: 'seen' }] },
    ]) {
      const r = await rules(orgs.a, 'POST', '', body);
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      made.push(r.body.rule.id as string);
    }
    const phone = '4915100000201';
    const aeid = `${phone}:${orgs.a.phoneNumberId}`;
    const sent = await orgs.svc.call('POST', '/v2/wa/template', { key: orgs.a.adminKey, body: orderUpdate(orgs.a.channelId, phone) });
    expect(sent.status).toBe(201);
    await customer(orgs.a, phone, 'messages', { text: 'I want my Money back for A-1001' });
    await eventually(async () => fired(phone).length === 3);
    expect(fired(phone)).toEqual(['refund', 'order number', 'everything']);
    const hooks = events('automation.webhook', (d) => d.audienceExternalId === aeid).map((e) => (e.data as { event: string }).event);
    expect(hooks).toEqual(['refund_asked', 'order', 'seen']);
    expect(await conversation(orgs.a, phone)).toMatchObject({ status: 'bot' });

    // The template's "Talk to an agent" quick reply: queued by the rule, an auto-reply, and nothing after it.
    await eventually(async () => events('message_status', (d) => d.messageId === sent.body.messageId && d.status === 'delivered').length === 1);
    const tap = await customer(orgs.a, phone, 'quick-replies', { messageId: sent.body.messageId, index: 1 });
    expect(tap.status).toBe(201);
    await eventually(async () => fired(phone).length === 4);
    expect(fired(phone)).toEqual(['refund', 'order number', 'everything', 'agent']);
    const queued = await eventually(async () => events('handover.requested', (d) => d.audienceExternalId === aeid)[0]);
    expect(queued.data).toMatchObject({ by: 'automation', reason: 'rule', ruleId: made[1] });
    expect(events('automation.fired', (d) => d.audienceExternalId === aeid)[3]!.data).toMatchObject({ ruleId: made[1], ruleName: 'agent', messageId: tap.body.messageId, actions: [{ type: 'request_handover' }, { type: 'auto_reply' }] });
    expect(await conversation(orgs.a, phone)).toMatchObject({ status: 'queued' });
    // The auto-reply goes as `system`, though a human has the conversation now.
    const reply = await eventually(async () => events('message.sent', (d) => d.audienceExternalId === aeid && d.sender === 'system')[0]);
    expect(reply.data).toMatchObject({ content: { type: 'text', text: 'An agent will be with you shortly.' } });
    const history = await orgs.svc.call('GET', `/v1/sessions/${(reply.data as { sessionId: string }).sessionId}/messages`, { key: orgs.a.adminKey });
    // The timeline: each firing a system entry (by automation), what the rule did, then its reply.
    expect(history.body.filter((m: { sender: string }) => m.sender === 'system').map((m: { content: { text: string } }) => m.content.text)).toEqual([
      'Automation rule "refund" fired',
      'Automation rule "order number" fired',
      'Automation rule "everything" fired',
      'Automation rule "agent" fired',
      'Handover requested by an automation',
      'An agent will be with you shortly.',
    ]);
    expect(history.body.find((m: { system?: { event: string } }) => m.system?.event === 'handover_requested').system).toEqual({ event: 'handover_requested', by: { type: 'automation' }, reason: 'rule', ruleId: made[1] });

    // The same message delivered again by the network fires nothing again.
    const before = events('automation.fired').length;
    const inbound = events('inbound_message', (d) => d.messageId === tap.body.messageId)[0]!.data as { content: unknown };
    const again = await orgs.svc.running.services.actors.ask(
      { type: 'conversation', key: `${orgs.a.id}/${aeid}` },
      { kind: 'network.inbound', channelId: orgs.a.channelId, event: { kind: 'message', phoneNumberId: orgs.a.phoneNumberId, from: phone, networkMessageId: tap.body.messageId, at: new Date().toISOString(), content: inbound.content } },
    );
    expect(again).toMatchObject({ duplicate: true });
    expect(events('automation.fired')).toHaveLength(before);
    for (const id of made) await rules(orgs.a, 'DELETE', `/${id}`);
  });

  it('records an action that fails, and the conversation goes on', async () => {
    const r = await rules(orgs.a, 'POST', '', { name: 'greeting', actions: [{ type: 'auto_reply', template: { name: 'no_such_template', language: 'en_US' } }, { type: 'webhook', event: 'greeted' }] });
    expect(r.status).toBe(201);
    const phone = '4915100000202';
    await customer(orgs.a, phone, 'messages', { text: 'Hi' });
    const failed = await eventually(async () => events('automation.failed', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`)[0]);
    expect(failed.data).toMatchObject({ ruleId: r.body.rule.id, action: { type: 'auto_reply' }, code: expect.any(String), reason: expect.stringContaining('template') });
    // The timeline says why.
    const entry = await eventually(async () => {
      const h = await orgs.svc.call('GET', `/v1/sessions/${(failed.data as { sessionId: string }).sessionId}/messages`, { key: orgs.a.adminKey });
      return h.body.find((m: { system?: { event: string } }) => m.system?.event === 'automation_failed');
    });
    expect(entry.system).toMatchObject({ by: { type: 'automation' }, ruleId: r.body.rule.id, ruleName: 'greeting', action: 'auto_reply', reason: (failed.data as { reason: string }).reason });
    expect(entry.content.text).toContain('could not send its auto-reply');
    // The rule's other action went, and the customer's next message is taken in as ever.
    expect(events('automation.webhook', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`)).toHaveLength(1);
    await customer(orgs.a, phone, 'messages', { text: 'Hello?' });
    await eventually(async () => events('inbound_message', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`).length === 2);
    await rules(orgs.a, 'DELETE', `/${r.body.rule.id}`);
  });
  it("the demo organization's rule: tapping the sandbox template's \"Talk to an agent\" queues the conversation, with no bot", async () => {
    const demo = await messagingOrg(orgs.svc, 'Demo');
    await orgs.svc.running.services.automation.seedDemo(demo.id);
    const listed = (await rules(demo, 'GET')).body.rules;
    expect(listed).toEqual([expect.objectContaining({ name: 'Talk to an agent', conditions: [{ field: 'payload', operator: 'equals', value: 'Talk to an agent' }], stop: true })]);
    // Seeding again (a second start) changes nothing.
    await orgs.svc.running.services.automation.seedDemo(demo.id);
    expect((await rules(demo, 'GET')).body.rules).toEqual(listed);
    const phone = '4915100000301';
    const mine: DomainEvent[] = [];
    await orgs.svc.running.services.events.consume(`automation-demo-${Date.now()}`, async (e) => {
      if (e.organizationId === demo.id) mine.push(e);
    });
    const sent = await orgs.svc.call('POST', '/v2/wa/template', { key: demo.adminKey, body: orderUpdate(demo.channelId, phone) });
    await eventually(async () => mine.some((e) => e.type === 'message_status' && (e.data as { messageId: string; status: string }).messageId === sent.body.messageId && (e.data as { status: string }).status === 'delivered'));
    expect((await customer(demo, phone, 'quick-replies', { messageId: sent.body.messageId, index: 1 })).status).toBe(201);
    await eventually(async () => (await conversation(demo, phone))?.status === 'queued');
    await eventually(async () => mine.some((e) => e.type === 'message.sent' && (e.data as { sender: string }).sender === 'system'));
  });
});
