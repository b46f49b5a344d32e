/*
 * Web chat records: the visitors of a channel's widget and the tokens their
 * browsers hold. Plain data, shared by the web chat module and its stores.
 */

/** One visitor of a web chat channel: a contact of the channel, `<id>:<channel id>`. */
export interface VisitorRecord {
  /** `v_` and 24 hex digits. */
  id: string;
  organizationId: string;
  channelId: string;
  /** The business's own id of a verified visitor (identity verification); null for an anonymous one. */
  userId: string | null;
  name: string | null;
  email: string | null;
  createdAt: string;
  /** Agent and bot messages sent up to this instant have been shown to the visitor (the launcher's unread count starts after it). */
  readUpTo: string | null;
}

/** A visitor token as stored: only its hash, and whose it is. */
export interface VisitorTokenRecord {
  /** SHA-256 of the token, hex. */
  hash: string;
  organizationId: string;
  channelId: string;
  visitorId: string;
  createdAt: string;
}
