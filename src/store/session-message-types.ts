import type { SessionMessage } from '../messaging/types.js';

/** A session as the message log knows it: whose it is. */
export interface SessionRef {
  sessionId: string;
  organizationId: string;
  audienceExternalId: string;
  openedAt: string;
}

/**
 * The message log of every session. Written only by the contact's
 * conversation actor (one writer per contact, in order); read by the history
 * endpoint. Every method is scoped to one organization.
 */
export interface SessionMessageRepo {
  /** Records the session (idempotent), so it lists as empty rather than unknown before its first message. */
  registerSession(ref: SessionRef): Promise<void>;
  /** Appends a message to its (registered or not) session; a second append of the same `_id` changes nothing. Returns false then. */
  append(message: SessionMessage): Promise<boolean>;
  /** Replaces a stored message (same `_id`), e.g. with a new status. */
  update(message: SessionMessage): Promise<void>;
  /** The message with this chat-network message id, in the organization. */
  getByNetworkId(organizationId: string, networkMessageId: string): Promise<SessionMessage | null>;
  getSession(organizationId: string, sessionId: string): Promise<SessionRef | null>;
  /** The session's messages in the order they were recorded; null when the organization has no such session. */
  listSession(organizationId: string, sessionId: string): Promise<SessionMessage[] | null>;
}
