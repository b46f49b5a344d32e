import { describe, expect, it } from 'vitest';
import { initialConversationState, type ConversationState } from '../../src/actors/index.js';
import { runAutomation, type MessageFacts } from '../../src/actors/conversation/automation.js';
import type { AutomationRule } from '../../src/domain/automation.js';
import { isWithinBusinessHours, localTime, type BusinessHours } from '../../src/domain/routing.js';
import type { MessageContent } from '../../src/domain/messages.js';

/*
 * The conversation actor's rule evaluation as pure functions: order, stop,
 * once per message under redelivery, the away reply once per conversation,
 * and business hours across a daylight-saving change on a fixed clock.
 */

const now = new Date('2030-05-01T10:00:00Z');
const rule = (id: string, over: Partial<AutomationRule> = {}): AutomationRule => ({
  id,
  organizationId: 'org_1',
  name: id,
  enabled: true,
  conditions: [],
  actions: [{ type: 'webhook', event: id }],
  stop: false,
  createdAt: now.toISOString(),
  updatedAt: now.toISOString(),
  ...over,
});

function conversation(): ConversationState {
  return { ...initialConversationState('org_1/15550001111:pn1'), contactId: 'c1', session: { id: 's1', status: 'open', openedAt: now.toISOString(), inboundCount: 1 } };
}

function message(id: string, content: MessageContent, over: Partial<MessageFacts> = {}, attributes: Record<string, string> = {}) {
  const asked: string[] = [];
  const facts: MessageFacts = {
    networkMessageId: id,
    channelId: 'ch_1',
    awayReply: null,
    input: {
      content,
      channelId: 'ch_1',
      withinBusinessHours: true,
      attribute: async (name) => {
        asked.push(name);
        return attributes[name] ?? null;
      },
    },
    ...over,
  };
  return { facts, asked };
}

const ids = (...parts: string[]) => parts.join('.');
/** As the actor names them: by the message, so a re-run of one message records the same events. */
const idsOf = (messageId: string) => (...parts: string[]) => [messageId, ...parts].join('.');
const firedIds = (events: { type: string; data: unknown }[]) => events.filter((e) => e.type === 'automation.fired').map((e) => (e.data as { ruleId: string }).ruleId);

describe('automation rules in the conversation actor', () => {
  it('fires matching enabled rules in order and stops after a rule that says so', async () => {
    const rules = [
      rule('greet', { conditions: [{ field: 'text', operator: 'contains', value: ['hello', 'hi there'] }] }),
      rule('off', { enabled: false }),
      rule('refund', { conditions: [{ field: 'text', operator: 'matches', value: '\\brefund(s|ed)?\\b' }], actions: [{ type: 'request_handover' }], stop: true }),
      rule('never reached'),
    ];
    const { facts } = message('m1', { type: 'text', text: 'HÉLLO, I want a Refund' });
    const r = await runAutomation(conversation(), [], rules, facts, now, ids);
    expect(r.fired).toEqual(['greet', 'refund']);
    expect(r.events.map((e) => e.type)).toEqual(['automation.fired', 'automation.webhook', 'automation.fired', 'handover.requested']);
    expect(r.state.handover).toEqual({ status: 'queued', requestedAt: now.toISOString() });
    expect(r.events[3]!.data).toMatchObject({ by: 'automation', reason: 'rule', ruleId: 'refund' });
    // Each firing is a system entry of the timeline, followed by what the rule did.
    expect(r.state.timeline!.map((d) => [d.system!.event, d.system!.ruleId, d.system!.by!.type])).toEqual([
      ['rule_fired', 'greet', 'automation'],
      ['rule_fired', 'refund', 'automation'],
      ['handover_requested', 'refund', 'automation'],
    ]);
    expect(r.state.timeline![0]!.text).toBe('Automation rule "greet" fired');
  });

  it("keeps routing's entries of the same message ahead of the rules'", async () => {
    const routing = { id: 'routed', sessionId: 's1', at: now.toISOString(), text: 'Handover requested by an automation', system: { event: 'handover_requested' as const, by: { type: 'automation' as const }, reason: 'first_responder' } };
    const r = await runAutomation({ ...conversation(), timeline: [routing] }, [routing], [rule('every')], message('m1', { type: 'text', text: 'x' }).facts, now, ids);
    expect(r.state.timeline!.map((d) => d.system!.event)).toEqual(['handover_requested', 'rule_fired']);
    // Nothing fired: the entries stay as routing left them.
    const none = await runAutomation({ ...conversation(), timeline: [routing] }, [routing], [rule('never', { enabled: false })], message('m2', { type: 'text', text: 'x' }).facts, now, ids);
    expect(none.state.timeline).toEqual([routing]);
  });

  it('runs once per message: the same message again (a redelivery after a failed run) fires nothing', async () => {
    const rules = [rule('every')];
    const { facts } = message('m1', { type: 'text', text: 'x' });
    const first = await runAutomation(conversation(), [], rules, facts, now, idsOf('m1'));
    expect(firedIds(first.events)).toEqual(['every']);
    const again = await runAutomation(first.state, [], rules, facts, now, idsOf('m1'));
    expect(again.events).toEqual([]);
    expect(again.state).toBe(first.state);
    // The next message does fire, and event ids are stable per message, so a re-run records the same ones.
    const next = await runAutomation(first.state, [], rules, message('m2', { type: 'text', text: 'y' }).facts, now, idsOf('m2'));
    expect(firedIds(next.events)).toEqual(['every']);
    expect(next.events[0]!.id).not.toBe(first.events[0]!.id);
    expect((await runAutomation(conversation(), [], rules, facts, now, idsOf('m1'))).events[0]!.id).toBe(first.events[0]!.id);
  });

  it('tests payloads, types, channels and contact attributes (read only when a rule asks)', async () => {
    const rules = [
      rule('tap', { conditions: [{ field: 'payload', operator: 'equals', value: 'talk to an agent' }, { field: 'type', operator: 'in', value: ['button_reply', 'interactive'] }] }),
      rule('channel', { conditions: [{ field: 'channelId', operator: 'equals', value: 'ch_other' }] }),
      rule('vip', { conditions: [{ field: 'attribute.tier', operator: 'equals', value: 'gold' }], actions: [{ type: 'assign', agentId: 'u_ann' }] }),
    ];
    const tap = message('m1', { type: 'button_reply', text: 'Talk to an agent', payload: 'Talk to an agent' }, {}, { tier: 'gold' });
    const r = await runAutomation(conversation(), [], rules, tap.facts, now, ids);
    expect(r.fired).toEqual(['tap', 'vip']);
    expect(tap.asked).toEqual(['tier']);
    expect(r.state.handover).toMatchObject({ status: 'agent', agentId: 'u_ann' });
    expect(r.events.find((e) => e.type === 'conversation.assigned')!.data).toMatchObject({ agentId: 'u_ann', via: 'automation', by: 'automation', ruleId: 'vip' });
    expect(r.state.timeline!.map((d) => d.text)).toEqual(['Automation rule "tap" fired', 'Automation rule "vip" fired', 'Assigned to agent u_ann by an automation (rule "vip")']);
    const plain = message('m2', { type: 'text', text: 'Talk to an agent' });
    expect((await runAutomation(conversation(), [], rules.slice(0, 2), plain.facts, now, ids)).fired).toEqual([]);
    expect(plain.asked).toEqual([]);
  });

  it('sends the away reply once per conversation, and rules can test business hours', async () => {
    const rules = [rule('closed', { conditions: [{ field: 'businessHours', operator: 'is', value: 'closed' }] })];
    const outside = (id: string) => message(id, { type: 'text', text: 'hi' }, { awayReply: 'We are closed.', input: { content: { type: 'text', text: 'hi' }, channelId: 'ch_1', withinBusinessHours: false, attribute: async () => null } }).facts;
    const first = await runAutomation(conversation(), [], rules, outside('m1'), now, ids);
    expect(first.fired).toEqual(['business_hours', 'closed']);
    expect(first.events[0]!.data).toMatchObject({ ruleId: 'business_hours', actions: [{ type: 'auto_reply', text: 'We are closed.' }] });
    const second = await runAutomation(first.state, [], rules, outside('m2'), now, ids);
    expect(second.fired).toEqual(['closed']);
    // A new conversation gets it again.
    const reopened = { ...second.state, session: { id: 's2', status: 'open' as const, openedAt: now.toISOString() } };
    expect((await runAutomation(reopened, [], rules, outside('m3'), now, ids)).fired).toEqual(['business_hours', 'closed']);
  });
});

describe('business hours', () => {
  const berlin: BusinessHours = {
    timeZone: 'Europe/Berlin',
    weekly: { mon: [{ from: '09:00', to: '12:00' }, { from: '13:00', to: '17:30' }], sun: [{ from: '10:00', to: '24:00' }] },
    holidays: ['2026-04-06'],
    awayReply: null,
  };

  it('follows the local time across a daylight-saving change', () => {
    // Monday 23 March 2026, winter time (UTC+1): 09:00 local is 08:00Z.
    expect(isWithinBusinessHours(berlin, new Date('2026-03-23T07:59:00Z'))).toBe(false);
    expect(isWithinBusinessHours(berlin, new Date('2026-03-23T08:00:00Z'))).toBe(true);
    expect(isWithinBusinessHours(berlin, new Date('2026-03-23T11:30:00Z'))).toBe(false); // 12:30 local, lunch
    // Sunday 29 March 2026 the clocks go forward at 02:00; Monday 30 March, summer time (UTC+2): 09:00 local is 07:00Z.
    expect(isWithinBusinessHours(berlin, new Date('2026-03-30T07:00:00Z'))).toBe(true);
    expect(isWithinBusinessHours(berlin, new Date('2026-03-30T06:59:00Z'))).toBe(false);
    expect(isWithinBusinessHours(berlin, new Date('2026-03-30T15:29:00Z'))).toBe(true);
    expect(isWithinBusinessHours(berlin, new Date('2026-03-30T15:30:00Z'))).toBe(false);
    expect(localTime(new Date('2026-03-29T22:30:00Z'), 'Europe/Berlin')).toEqual({ date: '2026-03-30', weekday: 'mon', minute: 30 });
    // Sunday until midnight local.
    expect(isWithinBusinessHours(berlin, new Date('2026-03-29T21:59:00Z'))).toBe(true);
  });

  it('is closed on holidays (local dates) and on days without openings; no hours means always open', () => {
    expect(isWithinBusinessHours(berlin, new Date('2026-04-06T10:00:00Z'))).toBe(false); // Easter Monday
    expect(isWithinBusinessHours(berlin, new Date('2026-04-07T10:00:00Z'))).toBe(false); // a Tuesday: no openings
    expect(isWithinBusinessHours(null, new Date('2026-04-06T10:00:00Z'))).toBe(true);
  });
});
