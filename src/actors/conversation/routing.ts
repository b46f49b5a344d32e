import type { DomainEvent } from '../../events/types.js';
import type { ChannelRouting } from '../../domain/routing.js';
import type { HandoverEventData } from './actor.js';
import { requestHandover } from './rules.js';
import type { AutomationState, ConversationState } from './state.js';
import { systemDraft, withTimeline } from './timeline.js';

/*
 * The channel's routing, applied by the conversation actor: who answers a
 * new conversation first, and the bot's fallback timer. Pure functions over
 * the state; the handlers give them the time, ids and the channel's settings.
 */

/** Who acted, in the events of what routing and rules do on their own. */
export const AUTOMATION = 'automation';

/** Why automation queued a conversation. */
export type AutomationReason = 'first_responder' | 'bot_fallback' | 'rule';

export interface Routed {
  state: ConversationState;
  events: DomainEvent[];
}

function withAutomation(s: ConversationState, a: AutomationState): ConversationState {
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
  const next = withTimeline(withAutomation({ ...s, handover: t.next }, { ...s.automation, botReplyDueAt: undefined }), [entry]);
  const data: HandoverEventData = { audienceExternalId: s.audienceExternalId, contactId: s.contactId, sessionId: s.session.id, by: AUTOMATION, reason };
  if (ruleId !== undefined) data.ruleId = ruleId;
  return { state: next, events: [{ id: eventId, type: 'handover.requested', organizationId: s.organizationId, createdAt: now.toISOString(), data }] };
}

/**
 * A customer message has been taken in (`after` is the state with it). With
 * `agents` first, a message that opened a new conversation queues it; with
 * the bot first and a fallback, the bot has until the fallback runs out to
 * answer (an earlier unanswered message keeps its earlier deadline).
 */
export function routeInbound(before: ConversationState, after: ConversationState, routing: ChannelRouting, now: Date, eventId: string): Routed {
  if (after.handover.status !== 'bot') return { state: after, events: [] };
  const opened = before.session === null || before.session.status !== 'open' || before.session.id !== after.session?.id;
  if (routing.firstResponder === 'agents') {
    // A conversation an agent handed back to the bot stays with the bot until it ends.
    return opened ? queueByAutomation(after, now, eventId, 'first_responder') : { state: after, events: [] };
  }
  if (routing.botFallbackSeconds === null || after.automation?.botReplyDueAt !== undefined) return { state: after, events: [] };
  const due = new Date(now.getTime() + routing.botFallbackSeconds * 1000).toISOString();
  return { state: withAutomation(after, { ...after.automation, botReplyDueAt: due }), events: [] };
}

/** The bot answered: its fallback timer is off until the customer writes again. */
export function botAnswered(s: ConversationState): ConversationState {
  if (s.automation?.botReplyDueAt === undefined) return s;
  return withAutomation(s, { ...s.automation, botReplyDueAt: undefined });
}

/**
 * A change of hands voids the timers set for the previous holder: a
 * conversation that comes back to the bot does not inherit a deadline from
 * before it left.
 */
export function afterHandoverChange(before: ConversationState, after: ConversationState): ConversationState {
  if (before.handover.status === after.handover.status || after.automation?.botReplyDueAt === undefined) return after;
  return withAutomation(after, { ...after.automation, botReplyDueAt: undefined });
}

/** What is due by `now`, done: the bot's fallback queues the conversation. */
export function fireDue(s: ConversationState, now: Date, eventId: string): Routed & { fired: string[] } {
  const due = s.automation?.botReplyDueAt;
  if (due === undefined || Date.parse(due) > now.getTime()) return { state: s, events: [], fired: [] };
  if (s.handover.status !== 'bot' || s.session?.status !== 'open') return { state: botAnswered(s), events: [], fired: [] };
  const r = queueByAutomation(s, now, eventId, 'bot_fallback');
  return { ...r, state: botAnswered(r.state), fired: r.events.length > 0 ? ['bot_fallback'] : [] };
}

/** The conversation's next timer, for the index (`dueAt`): only while it can still fire. */
export function nextDueAt(s: ConversationState): string | null {
  if (s.handover.status !== 'bot') return null;
  return s.automation?.botReplyDueAt ?? null;
}
