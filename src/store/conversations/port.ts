import type { ConversationCountQuery, ConversationCounts, ConversationKey, ConversationQuery, ConversationRecord, ConversationViewQuery, ReadMarker } from '../../domain/conversation.js';

export interface ConversationPage {
  conversations: ConversationRecord[];
  total: number;
}

/**
 * The inbox's list of conversations: one record per contact, written only by
 * the contact's conversation actor (after the change it describes is
 * committed), read by the inbox and its REST twins. Every method is scoped
 * to one organization.
 */
/** A keyset page: `next` is where the following page starts, null after the last. */
export interface ConversationKeysetPage {
  conversations: ConversationRecord[];
  next: ConversationKey | null;
}

export interface ConversationIndexRepo {
  /**
   * Stores the record unless the stored one has the same or a higher
   * `version`; compare and write are one atomic step. True when written.
   */
  put(record: ConversationRecord): Promise<boolean>;
  get(organizationId: string, audienceExternalId: string): Promise<ConversationRecord | null>;
  /** Takes a conversation off the lists (its contact was merged into another); its history stays. */
  remove(organizationId: string, audienceExternalId: string): Promise<void>;
  /**
   * Queued conversations oldest first (the order agents should take them);
   * any other selection most recently updated first. `assigneeId` selects
   * assigned conversations of that agent.
   */
  list(query: ConversationQuery): Promise<ConversationPage>;
  /**
   * One page of a view, in the view's order, after `query.after`. Pages are
   * keyed by the last row's sort key and id, not an offset, so conversations
   * that arrive meanwhile never shift a later page (a conversation that
   * changes while a client pages may move ahead of the page it is on).
   */
  listView(query: ConversationViewQuery): Promise<ConversationKeysetPage>;
  /** How many conversations each view holds for the caller, with the same filters. */
  counts(query: ConversationCountQuery): Promise<ConversationCounts>;
  /**
   * Conversations of every organization whose `dueAt` is at or before `at`,
   * earliest first, at most `limit`: the durable timers of the actors.
   */
  due(at: string, limit: number): Promise<{ organizationId: string; audienceExternalId: string; dueAt: string }[]>;
  /** How many conversations each agent of the organization holds now (status assigned); agents holding none are absent. */
  assignedCounts(organizationId: string): Promise<Map<string, number>>;
  /** Records what the user has opened of the conversation (replaces their previous marker). */
  markSeen(organizationId: string, userId: string, audienceExternalId: string, marker: ReadMarker): Promise<void>;
  /** The user's markers of these conversations; a conversation they never opened has none. */
  seen(organizationId: string, userId: string, audienceExternalIds: string[]): Promise<Map<string, ReadMarker>>;
}
