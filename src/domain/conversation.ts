import type { TicketPriority } from './types.js';

/** Where a contact's conversation stands: with the bot, waiting in the live-chat queue, or with an agent. */
export const CONVERSATION_STATUSES = ['bot', 'queued', 'assigned'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

/**
 * A contact's conversation as the inbox lists it: a projection of the
 * conversation actor's state, written by that actor after each change it
 * commits. `version` grows with every committed change of the actor's
 * state, so a late write of an older projection (a paused former owner) can
 * never replace a newer one.
 */
export interface ConversationRecord {
  organizationId: string;
  /** `<phone>:<phoneNumberId>`: the conversation's id. */
  audienceExternalId: string;
  contactId: string | null;
  status: ConversationStatus;
  assigneeId: string | null;
  queuedAt: string | null;
  assignedAt: string | null;
  sessionId: string | null;
  sessionStatus: 'open' | 'resolved' | null;
  lastInboundAt: string | null;
  /** Messages from the customer in the current session (absent on records written before it was counted). */
  inboundCount?: number;
  /**
   * When the conversation's actor has something to do without being asked
   * (the bot's fallback runs out): found by the sweeper of the node that owns
   * the contact, which then tells the actor. Absent or null: nothing pending.
   */
  dueAt?: string | null;
  /**
   * The response-time target of the customer's oldest unanswered message,
   * while a human has the conversation: due at `dueAt`, `breachedAt` once
   * missed (until the reply). Absent or null: none.
   */
  sla?: ConversationSla | null;
  /** The team whose queue it is in, or came from while an agent has it (absent: none). */
  teamId?: string | null;
  updatedAt: string;
  version: number;
}

export interface ConversationSla {
  target: 'first_response' | 'next_response';
  /** The conversation's priority when the target started, whose targets applied; null: none (absent in records from before). */
  priority?: TicketPriority | null;
  since: string;
  dueAt: string;
  breachedAt: string | null;
}

/** Conversation filters by response-time target: `breached`, past their target and not answered yet. */
export const SLA_FILTERS = ['breached'] as const;
export type SlaFilter = (typeof SLA_FILTERS)[number];

/**
 * What one user has opened of a conversation: the session and how many of
 * its customer messages. Each user's own, so the last write wins.
 */
export interface ReadMarker {
  sessionId: string;
  inboundSeen: number;
}

/** Customer messages of the current session that the marker's user has not opened. */
export function unreadCount(record: Pick<ConversationRecord, 'sessionId' | 'inboundCount'>, marker: ReadMarker | undefined): number {
  const total = record.inboundCount ?? 0;
  if (marker === undefined || record.sessionId === null || marker.sessionId !== record.sessionId) return total;
  return Math.max(0, total - marker.inboundSeen);
}

export interface ConversationQuery {
  organizationId: string;
  status?: ConversationStatus;
  assigneeId?: string;
  /** Zero-based offset and page size. */
  offset: number;
  limit: number;
}

/**
 * The inbox's views. A conversation is in exactly one lane — `bot` (with the
 * bot, its session open or none yet), `waiting` (in the live-chat queue),
 * assigned (`mine` or `others`) or `resolved` (back with the bot after an
 * agent resolved its session) — and `all` and `unassigned` (bot and waiting:
 * nobody holds it) are unions of lanes.
 */
export const CONVERSATION_VIEWS = ['all', 'bot', 'waiting', 'mine', 'others', 'unassigned', 'resolved'] as const;
export type ConversationView = (typeof CONVERSATION_VIEWS)[number];

/** `activity`: most recent change first. `waiting`: longest waiting first (in the queue since, otherwise last change). */
export const CONVERSATION_SORTS = ['activity', 'waiting'] as const;
export type ConversationSort = (typeof CONVERSATION_SORTS)[number];

/** Where a keyset page starts: after the row with this sort key and conversation id. */
export interface ConversationKey {
  key: string;
  id: string;
}

export interface ConversationViewQuery {
  organizationId: string;
  view: ConversationView;
  /** The caller: `mine` and `others` are relative to them. */
  userId: string;
  sort: ConversationSort;
  phoneNumberId?: string;
  assigneeId?: string;
  audienceExternalId?: string;
  /** Only conversations carrying this label (its id). */
  labelId?: string;
  /** Only conversations past their response-time target. */
  sla?: SlaFilter;
  /** Only conversations of these teams' queues (a team filter; an empty list matches nothing). */
  teamIds?: string[];
  after?: ConversationKey;
  limit: number;
}

/** The filters a count per view takes (the view itself varies). */
export type ConversationCountQuery = Omit<ConversationViewQuery, 'view' | 'sort' | 'after' | 'limit'>;

export type ConversationCounts = Record<ConversationView, number>;
