import { describe, expect, it } from 'vitest';
import { initialConversationState, type ConversationState } from '../../src/actors/index.js';
import { fireDue, nextDueAt, routeInbound } from '../../src/actors/conversation/routing.js';
import { responseGiven, startTarget } from '../../src/actors/conversation/sla.js';
import { afterOpenSeconds, DEFAULT_ROUTING, nextOpening, type BusinessHours, type ResponseTargets } from '../../src/domain/routing.js';

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
  const targets: ResponseTargets = { firstResponseSeconds: 60, nextResponseSeconds: 300, byPriority: {}, clock: 'calendar' };

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
    expect(startTarget(conversation(at.toISOString()), { ...targets, firstResponseSeconds: null, nextResponseSeconds: 60 }, at).automation).toBeUndefined();
  });
});

describe('response targets by priority and in business hours', () => {
  const targets: ResponseTargets = {
    firstResponseSeconds: 3600,
    nextResponseSeconds: 7200,
    byPriority: { urgent: { firstResponseSeconds: 300, nextResponseSeconds: null } },
    clock: 'calendar',
  };
  const queued = (at: Date) => conversation(at.toISOString(), { handover: { status: 'queued', requestedAt: at.toISOString() } });

  it("a priority's own seconds replace the channel's; null seconds and other priorities keep the channel's", () => {
    const at = new Date('2026-05-01T10:00:00Z');
    expect(startTarget(queued(at), targets, at, { priority: 'urgent', businessHours: null }).automation?.sla).toEqual({ kind: 'first_response', since: at.toISOString(), dueAt: '2026-05-01T10:05:00.000Z', priority: 'urgent' });
    expect(startTarget(queued(at), targets, at, { priority: 'low', businessHours: null }).automation?.sla).toMatchObject({ dueAt: '2026-05-01T11:00:00.000Z', priority: 'low' });
    expect(startTarget(queued(at), targets, at).automation?.sla).toEqual({ kind: 'first_response', since: at.toISOString(), dueAt: '2026-05-01T11:00:00.000Z' });
    // Urgent's next response is the channel's.
    const answered = { ...queued(at), automation: { respondedSession: 's1' } };
    expect(startTarget(answered, targets, at, { priority: 'urgent', businessHours: null }).automation?.sla).toMatchObject({ kind: 'next_response', dueAt: '2026-05-01T12:00:00.000Z' });
    // The event names the priority whose targets applied.
    const s = startTarget(queued(at), targets, at, { priority: 'urgent', businessHours: null });
    expect(fireDue(s, new Date('2026-05-01T10:05:01Z'), id).events[0]!.data).toMatchObject({ target: 'first_response', priority: 'urgent' });
  });

  it('counts only open time under a business-hours clock, in local time across a daylight-saving change', () => {
    // Saturday 28 March 2026, 11:30 in Berlin (winter time, UTC+1); open until 12:00, then Monday 09:00 summer time (UTC+2).
    const at = new Date('2026-03-28T10:30:00Z');
    expect(afterOpenSeconds(berlin, at, 3600).toISOString()).toBe('2026-03-30T07:30:00.000Z');
    // Inside one opening: plain addition.
    expect(afterOpenSeconds(berlin, at, 600).toISOString()).toBe('2026-03-28T10:40:00.000Z');
    // Outside the hours: from the next opening (Friday evening: Saturday 10:00 winter time).
    expect(afterOpenSeconds(berlin, new Date('2026-03-27T18:00:00Z'), 60).toISOString()).toBe('2026-03-28T09:01:00.000Z');
    // A whole opening and more: Monday 30 March (8 h), then Saturday 4 April.
    expect(afterOpenSeconds(berlin, new Date('2026-03-30T07:00:00Z'), 8 * 3600 + 1800).toISOString()).toBe('2026-04-04T08:30:00.000Z');
    // From Saturday 4 April 11:30: half an hour that day, the Easter Monday holiday skipped, the rest on Saturday 11 April.
    expect(afterOpenSeconds(berlin, new Date('2026-04-04T09:30:00Z'), 3600).toISOString()).toBe('2026-04-11T08:30:00.000Z');
    // No hours, or hours that never open: calendar time.
    expect(afterOpenSeconds(null, at, 60).toISOString()).toBe('2026-03-28T10:31:00.000Z');
    expect(afterOpenSeconds({ ...berlin, weekly: {} }, at, 60).toISOString()).toBe('2026-03-28T10:31:00.000Z');
    // Through the actor's target: the clock setting decides.
    const hours = { priority: null, businessHours: berlin };
    expect(startTarget(queued(at), { ...targets, clock: 'business_hours' }, at, hours).automation?.sla?.dueAt).toBe('2026-03-30T07:30:00.000Z');
    expect(startTarget(queued(at), targets, at, hours).automation?.sla?.dueAt).toBe('2026-03-28T11:30:00.000Z');
  });

  it('an opening running through the night the clocks go back counts the repeated hour', () => {
    // Open Saturday 24 October 22:00 to Sunday 24:00 in Berlin; the clocks go back at 03:00 on Sunday (25 hours that day).
    const night: BusinessHours = { timeZone: 'Europe/Berlin', weekly: { sat: [{ from: '22:00', to: '24:00' }], sun: [{ from: '00:00', to: '24:00' }] }, holidays: [], awayReply: null };
    // 22:00 summer time is 20:00Z; six hours of open time later is 02:00Z, which is 03:00 winter time on the wall.
    expect(afterOpenSeconds(night, new Date('2026-10-24T20:00:00Z'), 6 * 3600).toISOString()).toBe('2026-10-25T02:00:00.000Z');
  });
});
