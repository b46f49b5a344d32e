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

/**
 * A file of a web chat conversation (a visitor's upload or an agent's, from
 * the inbox): its bytes and what they were found to be. Only its own visitor
 * and the organization's agents are served it. Its id is what a message's
 * `content.mediaId` names, as a chat-network message names the network's media.
 */
export interface WebChatAttachmentRecord {
  /** `wca_` and 32 hex digits. */
  id: string;
  organizationId: string;
  channelId: string;
  /** The visitor whose conversation it belongs to. */
  visitorId: string;
  /** Who uploaded it. */
  uploadedBy: 'visitor' | 'agent';
  /** The type found by reading the bytes (never only the one declared). */
  mimeType: string;
  filename: string;
  size: number;
  createdAt: string;
}
