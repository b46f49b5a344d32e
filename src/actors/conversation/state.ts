import type { SystemEntry } from '../../domain/messages.js';
import type { TicketPriority } from '../../domain/types.js';

/**
 * The conversation actor's state: everything the service must decide about
 * one contact of one organization, owned by exactly one actor at a time.
 * Plain JSON; times are ISO 8601 strings.
 */

/** Who answers the contact: the bot, nobody yet (waiting in the live-chat queue), or an agent. */
export type HandoverState =
  | { status: 'bot' }
  | { status: 'queued'; requestedAt: string }
  | { status: 'agent'; agentId: string; assignedAt: string };

export type SessionStatus = 'open' | 'resolved';

/** A conversation (session) of the contact; `id` is the `sessionId` of the API. */
export interface Session {
  id: string;
  status: SessionStatus;
  openedAt: string;
  /** Messages from the customer in this session, for the inbox's unread counts. */
  inboundCount?: number;
}

export interface ConversationState {
  organizationId: string;
  audienceExternalId: string;
  /** Known once a command named the contact (contacts live in the store's contacts repository). */
  contactId: string | null;
  /** The latest conversation; null until the first one opens. */
  session: Session | null;
  /** The contact's last message: the chat network's 24-hour window runs from here. */
  lastInboundAt: string | null;
  handover: HandoverState;
  /**
   * The team whose queue the conversation is in (while queued) or came from
   * (while an agent has it); dropped when it goes back to the bot.
   */
  teamId?: string;
  /**
   * The contact was merged into the one with this id (the same person, found
   * by another of their ids): the conversation leaves the lists, and every
   * new message of the person goes to the other one's actor.
   */
  mergedInto?: string;
  /** The customer's BSUID and WhatsApp username as their last message named them: status events name them without a read. */
  customer?: { userId?: string; username?: string };
  /**
   * Keyed sends that may be at the network: recorded (fenced) before the
   * request leaves, removed when the send's outcome is recorded. A successor
   * that finds one does not send blindly: it waits for a status of that
   * attempt first.
   */
  sendsInFlight?: SendInFlight[];
  /**
   * Statuses the network reported for a message not stored yet (a copy whose
   * sender stopped or paused before storing it): applied, in order, once it is stored.
   */
  parkedStatuses?: ParkedStatus[];
  /**
   * Attempts of keyed sends taken as never having left (their owner stopped
   * mid-call and no status of them came in all the wait) whose charge a
   * resend took over: a status of one that comes after all says it did
   * arrive, and it is charged then.
   */
  unpaidAttempts?: UnpaidAttempt[];
  /** What routing and automation keep about the conversation (timers, what was sent once). */
  automation?: AutomationState;
  /**
   * Timeline entries (system entries, private notes) the last change made:
   * written with the state, fenced, and stored into the session's history
   * by the projection after the commit (retried until it succeeds, before
   * the next command), so each is stored once and in order with the
   * messages. The next change drops them.
   */
  timeline?: TimelineDraft[];
}

/**
 * Durable timers and once-only marks of the channel's routing. A timer is
 * projected as the conversation's `dueAt`, so the sweeper of the node that
 * owns the contact finds it after any restart or failover.
 */
export interface AutomationState {
  /** With the bot first: the customer's message the bot has to answer by then, else the conversation is queued. */
  botReplyDueAt?: string;
  /** The session the away reply of the channel's business hours was sent in (once per conversation). */
  awayRepliedSession?: string;
  /** The latest customer messages (network ids) on which automation rules fired: a redelivery never fires them again. */
  ruledMessages?: string[];
  /**
   * Automation would have queued the conversation outside the channel's
   * business hours: it waits, and is queued at `at` (the next opening) for
   * `reason`, while the bot still has it then.
   */
  openingQueue?: { at: string; reason: 'first_responder' | 'bot_fallback' | 'rule'; ruleId?: string };
  /** The response-time target running for the customer's oldest unanswered message (see `sla.ts`). */
  sla?: ResponseTarget;
  /** The session in which an agent has answered the customer: the targets after that are next responses. */
  respondedSession?: string;
}

/** Which response a target is for: an agent's first in the session, or the next after the customer wrote again. */
export type ResponseTargetKind = 'first_response' | 'next_response';

/** A response-time target: the customer has waited since `since`, and an answer is due by `dueAt`. */
export interface ResponseTarget {
  kind: ResponseTargetKind;
  since: string;
  dueAt: string;
  /** The conversation's priority when it started, whose targets applied (absent: none). */
  priority?: TicketPriority;
  /** Set once, when the target was missed (the conversation is flagged until the reply). */
  breachedAt?: string;
}

/** A timeline entry waiting to be stored in its session's history (`timeline.ts`). */
export interface TimelineDraft {
  /** Names the stored message: the same entry is stored once however often it is projected. */
  id: string;
  sessionId: string;
  at: string;
  text: string;
  system?: SystemEntry;
  /** A private note, by this agent. */
  note?: { agentId: string };
}

export interface UnpaidAttempt {
  /** The attempt's callback data, as its status webhooks echo it. */
  callbackData: string;
  /** The reservation it is charged under if it is reported. */
  reservationId: string;
  amount: number;
  /** When its charge was taken over; kept for `UNPAID_TTL_MS`. */
  since: string;
}

export interface SendInFlight {
  /** The send's idempotency key (scoped to the caller). */
  key: string;
  attempt: number;
  /** When this attempt's request was about to leave. */
  startedAt: string;
  /**
   * The owner lived to learn that the request was handed to the network (the
   * call timed out, or the connection broke after the request was written):
   * it may well have arrived. Absent, the owner stopped mid-call, so whether
   * the request left at all is unknown.
   */
  maybeSent?: true;
  /** The reservation paying for this attempt, when it is not the attempt's own (a resend that took over an earlier attempt's charge). */
  paidBy?: string;
}

export interface ParkedStatus {
  networkMessageId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  at: string;
  recipientId?: string;
  recipientUserId?: string;
  errors: { code: number; title: string; message: string }[];
  callbackData?: string;
  parkedAt: string;
}

/** Actor key of a contact: organization and `audienceExternalId`, which may itself contain ':'. */
export function conversationKey(organizationId: string, audienceExternalId: string): string {
  if (organizationId.includes('/')) throw new Error('organization ids never contain "/"');
  return `${organizationId}/${audienceExternalId}`;
}

export function parseConversationKey(key: string): { organizationId: string; audienceExternalId: string } {
  const i = key.indexOf('/');
  if (i <= 0) throw new Error(`not a conversation key: ${key}`);
  return { organizationId: key.slice(0, i), audienceExternalId: key.slice(i + 1) };
}

export function initialConversationState(key: string): ConversationState {
  const { organizationId, audienceExternalId } = parseConversationKey(key);
  return { organizationId, audienceExternalId, contactId: null, session: null, lastInboundAt: null, handover: { status: 'bot' } };
}
