import { afterOpenSeconds, targetSeconds, type BusinessHours, type ResponseTargets } from '../../domain/routing.js';
import type { TicketPriority } from '../../domain/types.js';
import type { DomainEvent } from '../../events/types.js';
import type { ConversationState, ResponseTarget, ResponseTargetKind } from './state.js';
import { systemDraft, withTimeline } from './timeline.js';

/*
 * Response-time targets (SLA), kept by the conversation actor. A customer
 * message that finds no target running starts one: the first response when
 * no agent has answered in this session yet, otherwise the next response,
 * due after the channel's seconds for it (as set at that message; those of
 * the conversation's priority when the channel sets them apart; counting
 * only open time under a business-hours clock). An agent's
 * reply ends it (so does the bot's while it holds the conversation, and the
 * conversation going back to the bot). It runs against the clock only while
 * a human has the conversation (queued or with an agent): past its time it
 * is flagged, once, in the same write as its `conversation.sla_breached`
 * event, and stays flagged until the reply. Pure functions; the timer is the
 * conversation's `dueAt` like every other.
 */

/** Data of `conversation.sla_breached`. */
export interface SlaBreachedEventData {
  audienceExternalId: string;
  contactId: string | null;
  sessionId: string | null;
  /** `first_response` or `next_response`. */
  target: ResponseTargetKind;
  /** The conversation's priority when the target started (its open ticket's), whose targets applied; null: none. */
  priority: TicketPriority | null;
  /** The customer's message the answer was due for (its time). */
  since: string;
  dueAt: string;
  breachedAt: string;
  /** Where the conversation stood: `queued`, or `agent` with the agent holding it. */
  handoverStatus: 'queued' | 'agent';
  assigneeId: string | null;
}

function withTarget(s: ConversationState, sla: ResponseTarget | undefined, respondedSession?: string): ConversationState {
  const { sla: _old, ...rest } = s.automation ?? {};
  const automation = { ...rest, ...(sla === undefined ? {} : { sla }), ...(respondedSession === undefined ? {} : { respondedSession }) };
  if (Object.keys(automation).length === 0) {
    const { automation: _gone, ...without } = s;
    return without;
  }
  return { ...s, automation };
}

/** Whether a customer message would start a target now (none running yet), and of which kind. */
export function targetToStart(s: ConversationState): ResponseTargetKind | null {
  if (s.automation?.sla !== undefined || s.session === null) return null;
  return s.automation?.respondedSession === s.session.id ? 'next_response' : 'first_response';
}

/** What a target is measured by besides the channel's targets: the conversation's priority, and the hours a business-hours clock counts. */
export interface TargetContext {
  priority: TicketPriority | null;
  businessHours: BusinessHours | null;
}

/** A customer message came in: a target starts unless one is running already (the oldest unanswered message keeps its deadline). */
export function startTarget(s: ConversationState, targets: ResponseTargets, now: Date, ctx: TargetContext = { priority: null, businessHours: null }): ConversationState {
  const kind = targetToStart(s);
  if (kind === null) return s;
  const seconds = targetSeconds(targets, kind, ctx.priority);
  if (seconds === null) return s;
  const dueAt = targets.clock === 'business_hours' ? afterOpenSeconds(ctx.businessHours, now, seconds) : new Date(now.getTime() + seconds * 1000);
  return withTarget(s, { kind, since: now.toISOString(), dueAt: dueAt.toISOString(), ...(ctx.priority === null ? {} : { priority: ctx.priority }) });
}

/** The customer was answered (`byAgent`: by an agent, whose later answers are next responses): the target ends and its flag clears. */
export function responseGiven(s: ConversationState, byAgent: boolean): ConversationState {
  const responded = byAgent && s.session !== null && s.automation?.respondedSession !== s.session.id ? s.session.id : undefined;
  if (s.automation?.sla === undefined && responded === undefined) return s;
  return withTarget(s, undefined, responded);
}

/** The target counting against the clock: one not yet missed, while a human has the conversation. */
export function runningTarget(s: ConversationState): ResponseTarget | null {
  const t = s.automation?.sla;
  if (t === undefined || t.breachedAt !== undefined || s.handover.status === 'bot') return null;
  return t;
}

/** The missed target, flagged (once: a flagged target is no longer running), with its event and timeline entry; null when none is due. */
export function breachDue(s: ConversationState, now: Date, id: (what: string) => string): { state: ConversationState; events: DomainEvent[] } | null {
  const t = runningTarget(s);
  if (t === null || Date.parse(t.dueAt) > now.getTime() || s.handover.status === 'bot') return null;
  const breachedAt = now.toISOString();
  const eventId = id(`sla.${t.kind}.${t.since}`);
  let state = withTarget(s, { ...t, breachedAt });
  if (s.session !== null) state = withTimeline(state, [systemDraft(`auto:${eventId}`, s.session.id, now, { event: 'sla_breached', by: { type: 'automation' }, target: t.kind, until: t.dueAt })]);
  const data: SlaBreachedEventData = {
    audienceExternalId: s.audienceExternalId,
    contactId: s.contactId,
    sessionId: s.session?.id ?? null,
    target: t.kind,
    priority: t.priority ?? null,
    since: t.since,
    dueAt: t.dueAt,
    breachedAt,
    handoverStatus: s.handover.status,
    assigneeId: s.handover.status === 'agent' ? s.handover.agentId : null,
  };
  return { state, events: [{ id: eventId, type: 'conversation.sla_breached', organizationId: s.organizationId, createdAt: breachedAt, data }] };
}

/** The conversation's response target as the inbox shows it (null when none is running or flagged, or the bot has it). */
export function targetShown(s: ConversationState): ResponseTarget | null {
  const t = s.automation?.sla;
  return t === undefined || s.handover.status === 'bot' ? null : t;
}
