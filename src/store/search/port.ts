import type { Contact } from '../../domain/types.js';

/** A session message whose text matched. */
export interface MessageHit {
  sessionId: string;
  /** The message's `_id` in its session's history. */
  messageId: string;
  audienceExternalId: string;
  /** Its text (a media message's caption). */
  text: string;
  sentAt: string;
}

/**
 * The workspace's text search, over the database's own full-text indexes
 * (FTS5 embedded, tsvector in PostgreSQL), scoped to one organization. Words
 * match with case and accents folded; every word must match, the last also
 * as a prefix (see `query.ts`); a text with no words finds nothing. Hits come
 * best match first, newest first among equal ones.
 */
export interface SearchIndex {
  /** Contacts by name words and phone digits (a phone number from its start). */
  contacts(organizationId: string, text: string, limit: number): Promise<Contact[]>;
  /** Session messages by their text. */
  messages(organizationId: string, text: string, limit: number): Promise<MessageHit[]>;
}
