import type { VisitorRecord, VisitorTokenRecord, WebChatAttachmentRecord } from '../../domain/web-chat.js';

export type { VisitorRecord, VisitorTokenRecord, WebChatAttachmentRecord };

/**
 * Web chat visitors and their tokens. A token is stored by its hash only, so
 * the store never holds what a browser presents. Revoking deletes a
 * visitor's tokens (or every token of a channel): the next request or socket
 * with one of them is refused.
 */
export interface VisitorRepo {
  /** Stores the visitor unless one with its channel and id exists; returns the stored one. */
  create(v: VisitorRecord): Promise<VisitorRecord>;
  get(organizationId: string, channelId: string, visitorId: string): Promise<VisitorRecord | null>;
  /** Replaces the visitor's name, email and read marker (same organization, channel and id). */
  update(v: VisitorRecord): Promise<void>;
  addToken(t: VisitorTokenRecord): Promise<void>;
  tokenByHash(hash: string): Promise<VisitorTokenRecord | null>;
  /** Deletes the visitor's tokens; how many there were. */
  revokeVisitor(organizationId: string, channelId: string, visitorId: string): Promise<number>;
  /** Deletes every token of the channel; how many there were. */
  revokeChannel(organizationId: string, channelId: string): Promise<number>;
  /** Stores an attachment and its bytes (ids are random: never overwritten). */
  putAttachment(a: WebChatAttachmentRecord, bytes: Buffer): Promise<void>;
  /** The attachment with that id in the organization and channel, with its bytes; null when there is none there. */
  getAttachment(organizationId: string, channelId: string, id: string): Promise<{ attachment: WebChatAttachmentRecord; bytes: Buffer } | null>;
}
