import type { ConversationState, HandoverState, Session } from './state.js';

/**
 * The conversation's rules as pure functions over plain data: no clock, no
 * ids, no I/O. Handlers call them with the time and fresh ids they were given.
 */

/** Why a handover command changed nothing. */
export const HANDOVER_REFUSALS = ['already_queued', 'with_agent', 'already_with_bot', 'already_taken', 'not_assigned', 'no_conversation'] as const;
export type HandoverRefusal = (typeof HANDOVER_REFUSALS)[number];

export type Transition = { ok: true; next: HandoverState } | { ok: false; reason: HandoverRefusal };

/** Bot → live-chat queue. Refused while a handover is pending or an agent holds the conversation. */
export function requestHandover(h: HandoverState, now: Date): Transition {
  switch (h.status) {
    case 'bot':
      return { ok: true, next: { status: 'queued', requestedAt: now.toISOString() } };
    case 'queued':
      return { ok: false, reason: 'already_queued' };
    case 'agent':
      return { ok: false, reason: 'with_agent' };
  }
}

/** Queue or agent → back to the bot. Refused when the bot already has it (nothing to hand back). */
export function openHandover(h: HandoverState): Transition {
  if (h.status === 'bot') return { ok: false, reason: 'already_with_bot' };
  return { ok: true, next: { status: 'bot' } };
}

/** An agent picks the conversation up (from the queue, or directly from the bot), or another agent takes it over. */
export function assignAgent(h: HandoverState, agentId: string, now: Date): Transition {
  if (h.status === 'agent' && h.agentId === agentId) return { ok: true, next: h };
  return { ok: true, next: { status: 'agent', agentId, assignedAt: now.toISOString() } };
}

/**
 * An agent takes the conversation (from the queue, or straight from the bot).
 * Refused when another agent holds it, so of racing takes exactly one wins;
 * taking one's own conversation again changes nothing.
 */
export function takeConversation(h: HandoverState, agentId: string, now: Date): Transition {
  if (h.status === 'agent') return h.agentId === agentId ? { ok: true, next: h } : { ok: false, reason: 'already_taken' };
  return { ok: true, next: { status: 'agent', agentId, assignedAt: now.toISOString() } };
}

/** The agent holding the conversation gives it to another agent. */
export function transferConversation(h: HandoverState, toAgentId: string, now: Date): Transition {
  if (h.status !== 'agent') return { ok: false, reason: 'not_assigned' };
  if (h.agentId === toAgentId) return { ok: true, next: h };
  return { ok: true, next: { status: 'agent', agentId: toAgentId, assignedAt: now.toISOString() } };
}

/** While a human has the conversation the bot must not answer free-form (DESIGN: Handover). */
export function isWithHuman(h: HandoverState): boolean {
  return h.status !== 'bot';
}

/**
 * The conversation new activity belongs to: the latest one while it is open,
 * otherwise a new one with `newSessionId`. Returns the same session object
 * when nothing changes.
 */
export function currentSession(state: Pick<ConversationState, 'session'>, now: Date, newSessionId: string): Session {
  if (state.session !== null && state.session.status === 'open') return state.session;
  return { id: newSessionId, status: 'open', openedAt: now.toISOString() };
}
