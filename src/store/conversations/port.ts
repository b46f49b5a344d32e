import type { ConversationQuery, ConversationRecord, ReadMarker } from '../../domain/conversation.js';

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
export interface ConversationIndexRepo {
  /**
   * Stores the record unless the stored one has the same or a higher
   * `version`; compare and write are one atomic step. True when written.
   */
  put(record: ConversationRecord): Promise<boolean>;
  get(organizationId: string, audienceExternalId: string): Promise<ConversationRecord | null>;
  /**
   * Queued conversations oldest first (the order agents should take them);
   * any other selection most recently updated first. `assigneeId` selects
   * assigned conversations of that agent.
   */
  list(query: ConversationQuery): Promise<ConversationPage>;
  /** Records what the user has opened of the conversation (replaces their previous marker). */
  markSeen(organizationId: string, userId: string, audienceExternalId: string, marker: ReadMarker): Promise<void>;
  /** The user's markers of these conversations; a conversation they never opened has none. */
  seen(organizationId: string, userId: string, audienceExternalIds: string[]): Promise<Map<string, ReadMarker>>;
}
