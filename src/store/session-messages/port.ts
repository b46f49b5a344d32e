import type { MessageStatus } from '../../domain/message-status.js';
import type { SessionMessage } from '../../domain/messages.js';

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
  /**
   * Moves a stored outbound message to `message.status`, storing `message`
   * (same `_id`; its other fields as appended, plus `statusUpdatedAt` and
   * `errors`), only if that status follows the stored one by the rules of
   * `nextStatus` (forward only; `failed` only from accepted or sent, and
   * final). The comparison and the write are one atomic step, so a writer
   * that read an older status (a paused actor, a late duplicate) can never
   * move a message backwards. Returns whether it applied and the status
   * stored afterwards (null: no such message).
   */
  advanceStatus(message: SessionMessage & { status: MessageStatus }): Promise<StatusAdvance>;
  /** The message with this `_id`, in the organization. */
  get(organizationId: string, id: string): Promise<SessionMessage | null>;
  /** The message with this chat-network message id, in the organization. */
  getByNetworkId(organizationId: string, networkMessageId: string): Promise<SessionMessage | null>;
  /**
   * Where the message with this network id lives (its `_id` and contact),
   * without reading it: what a status webhook needs to reach the contact's
   * actor, which reads the message itself.
   */
  locateByNetworkId(organizationId: string, networkMessageId: string): Promise<MessageLocation | null>;
  getSession(organizationId: string, sessionId: string): Promise<SessionRef | null>;
  /** The contact's sessions, newest first. */
  contactSessions(organizationId: string, audienceExternalId: string): Promise<SessionRef[]>;
  /**
   * The session's messages in the order they were recorded (system entries
   * among them); null when the organization has no such session. Agents'
   * private notes only with `notes: true` (the agents' timeline): a caller
   * that does not ask never gets them.
   */
  listSession(organizationId: string, sessionId: string, opts?: { notes?: boolean }): Promise<SessionMessage[] | null>;
  /**
   * Deletes up to `limit` of the oldest messages, of every organization,
   * older than `before` (the retention setting: by their send time embedded,
   * by when they were stored in PostgreSQL, moments later); answers how many. Called
   * again until it answers less than `limit`. Sessions stay (empty).
   */
  pruneBefore(before: Date, limit: number): Promise<number>;
}

export interface MessageLocation {
  _id: string;
  audienceExternalId: string;
}

export interface StatusAdvance {
  applied: boolean;
  /** The stored status after the call; null when there is no such message. */
  status: MessageStatus | null;
}
