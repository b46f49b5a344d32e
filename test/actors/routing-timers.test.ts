import { describe, expect, it } from 'vitest';
import { initialConversationState, type ConversationState } from '../../src/actors/index.js';
import { fireDue, nextDueAt, routeInbound } from '../../src/actors/conversation/routing.js';
import { responseGiven, startTarget } from '../../src/actors/conversation/sla.js';
import { DEFAULT_ROUTING, nextOpening, type BusinessHours } from '../../src/domain/routing.js';

/*
 * The conversation's timers as pure functions on a fixed clock: the next
 * opening of a channel's hours across daylight-saving changes, a queueing
 * that waits for it, and a response target flagged once however often the
 * sweep comes.
 */

const berlin: BusinessHours = { timeZone: 'Europe/Berlin', weekly: { mon: [{ from: '09:00', to: '17:00' }], sat: [{ from: '10:00', to: '12:00' }] }, holidays: ['2026-04-06'], awayReply: null };
const id = (what: string) => `id.${what}`;

function conversation(at: string, over: Partial<ConversationState> = {}): ConversationState {
  return { ...initialConversationState('org_1/15550001111:pn1'), contactId: 'c1', session: { id: 's1', status: 'open', openedAt: at, inboundCount: 1 }, lastInboundAt: at, ...over };
}

describe('the next opening', () => {
  it('is now while open, else the first opening after, in local time across a daylight-saving change', () => {
    expect(nextOpening(berlin, new Date('2026-03-23T08:30:00Z'))!.toISOString()).toBe('2026-03-23T08:30:00.000Z');
    // Friday evening before the clocks go forward: Saturday 10:00 winter time.
    expect(nextOpening(berlin, new Date('2026-03-27T18:00:00Z'))!.toISOString()).toBe('2026-03-28T09:00:00.000Z');
    // Saturday after closing: Monday 09:00, summer time (UTC+2).
    expect(nextOpening(berlin, new Date('2026-03-28T11:00:00Z'))!.toISOString()).toBe('2026-03-30T07:00:00.000Z');
    // Easter Monday is a holiday: the next opening is Saturday.
    expect(nextOpening(berlin, new Date('2026-04-05T12:00:00Z'))!.toISOString()).toBe('2026-04-11T08:00:00.000Z');
    // Back to winter time in October: Monday 26 October 09:00 is 08:00Z.
    expect(nextOpening(berlin, new Date('2026-10-24T12:00:00Z'))!.toISOString()).toBe('2026-10-26T08:00:00.000Z');
    // New York changes on another date (8 March 2026).
    const ny: BusinessHours = { timeZone: 'America/New_York', weekly: { mon: [{ from: '08:00', to: '12:00' }] }, holidays: [], awayReply: null };
    expect(nextOpening(ny, new Date('2026-03-06T20:00:00Z'))!.toISOString()).toBe('2026-03-09T12:00:00.000Z');
    expect(nextOpening(ny, new Date('2026-02-27T20:00:00Z'))!.toISOString()).toBe('2026-03-02T13:00:00.000Z');
  });

  it('never comes for hours without openings; no hours is always open', () => {
    expect(nextOpening({ ...berlin, weekly: {} }, new Date('2026-03-23T08:30:00Z'))).toBeNull();
    expect(nextOpening(null, new Date('2026-03-23T20:00:00Z'))!.toISOString()).toBe('2026-03-23T20:00:00.000Z');
  });
});

describe('queueing that waits for the opening', () => {
  it('agents first outside the hours: waits, then is queued at the opening, once', () => {
    const at = new Date('2026-03-28T12:00:00Z');
    const before = initialConversationState('org_1/15550001111:pn1');
    const r = routeInbound(before, conversation(at.toISOString()), { ...DEFAULT_ROUTING, firstResponder: 'agents', businessHours: berlin }, at, 'route1');
    expect(r.events).toEqual([]);
    expect(r.state.handover.status).toBe('bot');
    expect(r.state.automation?.openingQueue).toEqual({ at: '2026-03-30T07:00:00.000Z', reason: 'first_responder' });
    expect(nextDueAt(r.state)).toBe('2026-03-30T07:00:00.000Z');
    expect(r.state.timeline!.map((d) => d.system!.event)).toEqual(['waiting_for_opening']);
    // Swept early: nothing; at the opening: queued.
    expect(fireDue(r.state, new Date('2026-03-30T06:59:59Z'), id, { businessHours: berlin }).state).toBe(r.state);
    const fired = fireDue(r.state, new Date('2026-03-30T07:00:01Z'), id, { businessHours: berlin });
    expect(fired.fired).toEqual(['opening']);
    expect(fired.state.handover.status).toBe('queued');
    expect(fired.events[0]!.data).toMatchObject({ by: 'automation', reason: 'first_responder' });
    expect(nextDueAt(fired.state)).toBeNull();
    // The same tick again on the new state: nothing.
    expect(fireDue(fired.state, new Date('2026-03-30T07:00:02Z'), id, { businessHours: berlin }).state).toBe(fired.state);
  });

  it("the bot's fallback that runs out after closing waits for the opening; hours changed meanwhile move the wait", () => {
    const at = new Date('2026-03-23T15:59:00Z'); // Monday 16:59 in Berlin
    const s = conversation(at.toISOString(), { automation: { botReplyDueAt: '2026-03-23T16:01:00.000Z' } });
    const r = fireDue(s, new Date('2026-03-23T16:01:00Z'), id, { businessHours: berlin });
    expect(r.events).toEqual([]);
    expect(r.state.automation).toEqual({ openingQueue: { at: '2026-03-28T09:00:00.000Z', reason: 'bot_fallback' } });
    // By Saturday the hours say Monday only: it waits on.
    const later = fireDue(r.state, new Date('2026-03-28T09:00:00Z'), id, { businessHours: { ...berlin, weekly: { mon: berlin.weekly.mon! } } });
    expect(later.events).toEqual([]);
    expect(later.state.automation?.openingQueue?.at).toBe('2026-03-30T07:00:00.000Z');
  });
});

describe('response targets', () => {
  const targets = { firstResponseSeconds: 60, nextResponseSeconds: 300 };

  it('is flagged once past its time while a human has the conversation, and cleared by the answer', () => {
    const at = new Date('2026-05-01T10:00:00Z');
    const s = startTarget(conversation(at.toISOString(), { handover: { status: 'queued', requestedAt: at.toISOString() } }), targets, at);
    expect(s.automation?.sla).toEqual({ kind: 'first_response', since: at.toISOString(), dueAt: '2026-05-01T10:01:00.000Z' });
    expect(nextDueAt(s)).toBe('2026-05-01T10:01:00.000Z');
    // A second message keeps the first's deadline.
    expect(startTarget(s, targets, new Date('2026-05-01T10:00:30Z'))).toBe(s);
    const late = new Date('2026-05-01T10:01:05Z');
    const r = fireDue(s, late, id);
    expect(r.events.map((e) => [e.type, e.id])).toEqual([['conversation.sla_breached', `id.sla.first_response.${at.toISOString()}`]]);
    expect(r.state.automation?.sla?.breachedAt).toBe(late.toISOString());
    expect(r.state.timeline!.map((d) => d.system!.event)).toEqual(['sla_breached']);
    expect(nextDueAt(r.state)).toBeNull();
    // A re-run of the same tick on the state before records the same event id; on the state after, nothing.
    expect(fireDue(s, late, id).events[0]!.id).toBe(r.events[0]!.id);
    expect(fireDue(r.state, new Date('2026-05-01T11:00:00Z'), id).state).toBe(r.state);
    // The agent answers: the flag is gone, and the customer's next message starts a next-response target.
    const answered = responseGiven({ ...r.state, handover: { status: 'agent', agentId: 'u1', assignedAt: late.toISOString() } }, true);
    expect(answered.automation).toEqual({ respondedSession: 's1' });
    expect(startTarget(answered, targets, late).automation?.sla).toMatchObject({ kind: 'next_response', dueAt: '2026-05-01T10:06:05.000Z' });
  });

  it('does not run while the bot has the conversation', () => {
    const at = new Date('2026-05-01T10:00:00Z');
    const s = startTarget(conversation(at.toISOString()), targets, at);
    expect(nextDueAt(s)).toBeNull();
    expect(fireDue(s, new Date('2026-05-02T10:00:00Z'), id).state).toBe(s);
    expect(startTarget(conversation(at.toISOString()), { firstResponseSeconds: null, nextResponseSeconds: 60 }, at).automation).toBeUndefined();
  });
});
