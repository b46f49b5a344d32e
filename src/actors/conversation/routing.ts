import type { DomainEvent } from '../../events/types.js';
import { nextOpening, type BusinessHours, type ChannelRouting } from '../../domain/routing.js';
import type { AutomationReason, HandoverEventData } from './events.js';
import { requestHandover } from './rules.js';
import type { AutomationState, ConversationState, TimelineDraft } from './state.js';
import { systemDraft, withTimeline } from './timeline.js';
import { breachDue, responseGiven, runningTarget } from './sla.js';

/*
 * The channel's routing, applied by the conversation actor: who answers a
 * new conversation first, and the bot's fallback timer. Pure functions over
 * the state; the handlers give them the time, ids and the channel's settings.
 */

/** Who acted, in the events of what routing and rules do on their own. */
export const AUTOMATION = 'automation';

/** Why automation queued a conversation. */
export type { AutomationReason } from './events.js';

export interface Routed {
  state: ConversationState;
  events: DomainEvent[];
}

export function withAutomation(s: ConversationState, a: AutomationState): ConversationState {
  const kept = Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as AutomationState;
  if (Object.keys(kept).length === 0) {
    if (s.automation === undefined) return s;
    const { automation: _gone, ...rest } = s;
    return rest;
  }
  return { ...s, automation: kept };
}

/**
 * Queues the conversation on automation's behalf (the same transition and
 * event as `POST /v1/handover`, with `by: "automation"` and a reason). The
 * conversation stays as it is when a human already has it.
 */
export function queueByAutomation(s: ConversationState, now: Date, eventId: string, reason: AutomationReason, ruleId?: string): Routed {
  const t = requestHandover(s.handover, now);
  if (!t.ok || s.session === null || s.contactId === null) return { state: s, events: [] };
  const entry = systemDraft(`auto:${eventId}`, s.session.id, now, { event: 'handover_requested', by: { type: 'automation' }, reason, ...(ruleId === undefined ? {} : { ruleId }) });
  const next = withTimeline(withAutomation({ ...s, handover: t.next }, { ...s.automation, botReplyDueAt: undefined, openingQueue: undefined }), [entry]);
  const data: HandoverEventData = { audienceExternalId: s.audienceExternalId, contactId: s.contactId, sessionId: s.session.id, by: AUTOMATION, reason };
  if (ruleId !== undefined) data.ruleId = ruleId;
  return { state: next, events: [{ id: eventId, type: 'handover.requested', organizationId: s.organizationId, createdAt: now.toISOString(), data }] };
}

/**
 * Queues the conversation on automation's behalf when the channel is open;
 * outside its business hours the conversation waits for the next opening
 * instead (a durable timer, `openingQueue`), and is queued then if the bot
 * still has it. One already waiting keeps its turn. A channel whose hours
 * never open queues at once.
 */
export function queueOrWait(s: ConversationState, hours: BusinessHours | null, now: Date, eventId: string, reason: AutomationReason, ruleId?: string): Routed {
  const opens = nextOpening(hours, now);
  if (opens === null || opens.getTime() <= now.getTime()) return queueByAutomation(s, now, eventId, reason, ruleId);
  if (s.handover.status !== 'bot' || s.session === null || s.contactId === null || s.automation?.openingQueue !== undefined) return { state: s, events: [] };
  const at = opens.toISOString();
  const entry = systemDraft(`auto:${eventId}`, s.session.id, now, { event: 'waiting_for_opening', by: { type: 'automation' }, reason, until: at, ...(ruleId === undefined ? {} : { ruleId }) });
  const openingQueue = { at, reason, ...(ruleId === undefined ? {} : { ruleId }) };
  return { state: withTimeline(withAutomation(s, { ...s.automation, botReplyDueAt: undefined, openingQueue }), [entry]), events: [] };
}

/**
 * A rule's `assign` to a team: the conversation goes into the team's queue
 * (queued by automation first when the bot has it; moved when it waits in
 * another queue). Nothing when a human already has it or it is in that queue.
 */
export function queueForTeam(s: ConversationState, now: Date, eventId: string, rule: { id: string; name: string }, teamId: string): Routed {
  if (s.handover.status === 'agent' || s.teamId === teamId || s.session === null || s.contactId === null) return { state: s, events: [] };
  const queued = s.handover.status === 'bot' ? queueByAutomation(s, now, `${eventId}.q`, 'rule', rule.id) : { state: s, events: [] };
  if (queued.state.handover.status !== 'queued') return { state: s, events: [] };
  const entry = systemDraft(`auto:${eventId}`, s.session.id, now, { event: 'team_assigned', by: { type: 'automation' }, teamId, ...(s.teamId === undefined ? {} : { fromTeamId: s.teamId }), ruleId: rule.id, ruleName: rule.name });
  const drafts = s.handover.status === 'bot' ? [...(queued.state.timeline ?? []), entry] : [entry];
  const next = withTimeline({ ...queued.state, teamId }, drafts);
  const data: HandoverEventData = { audienceExternalId: s.audienceExternalId, contactId: s.contactId, sessionId: s.session.id, by: AUTOMATION, reason: 'rule', ruleId: rule.id, teamId, previousTeamId: s.teamId ?? null };
  return { state: next, events: [...queued.events, { id: eventId, type: 'conversation.team_assigned', organizationId: s.organizationId, createdAt: now.toISOString(), data }] };
}

/**
 * A customer message has been taken in (`after` is the state with it). With
 * `agents` first, a message that opened a new conversation queues it (at the
 * next opening, outside business hours); with the bot first and a fallback,
 * the bot has until the fallback runs out to answer (an earlier unanswered
 * message keeps its earlier deadline).
 */
export function routeInbound(before: ConversationState, after: ConversationState, routing: ChannelRouting, now: Date, eventId: string): Routed {
  if (after.handover.status !== 'bot') return { state: after, events: [] };
  const opened = before.session === null || before.session.status !== 'open' || before.session.id !== after.session?.id;
  if (routing.firstResponder === 'agents') {
    // A conversation an agent handed back to the bot stays with the bot until it ends.
    return opened ? queueOrWait(after, routing.businessHours, now, eventId, 'first_responder') : { state: after, events: [] };
  }
  if (routing.botFallbackSeconds === null || after.automation?.botReplyDueAt !== undefined || after.automation?.openingQueue !== undefined) return { state: after, events: [] };
  const due = new Date(now.getTime() + routing.botFallbackSeconds * 1000).toISOString();
  return { state: withAutomation(after, { ...after.automation, botReplyDueAt: due }), events: [] };
}

/** The bot answered: its fallback timer is off until the customer writes again, and so is a running response target. */
export function botAnswered(s: ConversationState): ConversationState {
  const answered = s.handover.status === 'bot' ? responseGiven(s, false) : s;
  if (answered.automation?.botReplyDueAt === undefined) return answered;
  return withAutomation(answered, { ...answered.automation, botReplyDueAt: undefined });
}

/**
 * A change of hands voids the timers set for the previous holder: a
 * conversation that comes back to the bot does not inherit a deadline from
 * before it left, nor wait for an opening to be queued, nor keep a response
 * target (the bot answers it now).
 */
export function afterHandoverChange(before: ConversationState, after: ConversationState): ConversationState {
  let s = after;
  // Back with the bot, the conversation is in no team's queue any more.
  if (s.handover.status === 'bot' && s.teamId !== undefined) {
    const { teamId: _gone, ...rest } = s;
    s = rest;
  }
  const a = s.automation;
  if (a === undefined) return s;
  const changedHands = before.handover.status !== s.handover.status;
  const dropTimers = changedHands && (a.botReplyDueAt !== undefined || a.openingQueue !== undefined);
  // A resolved conversation is answered for good; one back with the bot is the bot's to answer.
  const dropTarget = a.sla !== undefined && (s.session?.status !== 'open' || (changedHands && s.handover.status === 'bot'));
  if (!dropTimers && !dropTarget) return s;
  return withAutomation(s, { ...a, ...(dropTimers ? { botReplyDueAt: undefined, openingQueue: undefined } : {}), ...(dropTarget ? { sla: undefined } : {}) });
}

/**
 * What is due by `now`, done: a conversation waiting for the opening is
 * queued; the bot's fallback queues it (or, the channel closed by then, has
 * it wait for the opening); a missed response target is flagged, once.
 * `routing` is the channel's as of now (absent: the fallback queues at once).
 */
export function fireDue(s: ConversationState, now: Date, id: (what: string) => string, routing?: Pick<ChannelRouting, 'businessHours'>): Routed & { fired: string[] } {
  let state = s;
  const events: DomainEvent[] = [];
  const entries: TimelineDraft[] = [];
  const fired: string[] = [];
  // Each step's entries are kept: one tick may queue a conversation and flag its target.
  const take = (r: Routed, name: string) => {
    if (r.state.timeline !== state.timeline) entries.push(...(r.state.timeline ?? []));
    state = r.state;
    events.push(...r.events);
    if (r.events.length > 0) fired.push(name);
  };
  const t = now.getTime();
  const waiting = state.automation?.openingQueue;
  if (waiting !== undefined && Date.parse(waiting.at) <= t) {
    const stillBot = state.handover.status === 'bot' && state.session?.status === 'open';
    // Hours changed since, and the channel is closed again: wait for the new opening.
    const opens = stillBot ? nextOpening(routing?.businessHours ?? null, now) : null;
    if (stillBot && opens !== null && opens.getTime() > t) {
      state = withAutomation(state, { ...state.automation, openingQueue: { ...waiting, at: opens.toISOString() } });
    } else if (stillBot) {
      take(queueByAutomation(state, now, id(`opening.${waiting.at}`), waiting.reason, waiting.ruleId), 'opening');
    } else {
      state = withAutomation(state, { ...state.automation, openingQueue: undefined });
    }
  }
  const due = state.automation?.botReplyDueAt;
  if (due !== undefined && Date.parse(due) <= t) {
    if (state.handover.status === 'bot' && state.session?.status === 'open') take(queueOrWait(state, routing?.businessHours ?? null, now, id(`fallback.${due}`), 'bot_fallback'), 'bot_fallback');
    state = withAutomation(state, { ...state.automation, botReplyDueAt: undefined });
  }
  const missed = breachDue(state, now, id);
  if (missed !== null) take(missed, 'sla_breached');
  if (entries.length > 0) state = { ...state, timeline: entries };
  return { state, events, fired };
}

/** The conversation's next timer, for the index (`dueAt`): the earliest of those that can still fire. */
export function nextDueAt(s: ConversationState): string | null {
  const a = s.automation;
  if (a === undefined) return null;
  const times: string[] = [];
  if (s.handover.status === 'bot') {
    if (a.botReplyDueAt !== undefined) times.push(a.botReplyDueAt);
    if (a.openingQueue !== undefined) times.push(a.openingQueue.at);
  }
  const target = runningTarget(s);
  if (target !== null) times.push(target.dueAt);
  if (times.length === 0) return null;
  return times.reduce((min, x) => (Date.parse(x) < Date.parse(min) ? x : min));
}
