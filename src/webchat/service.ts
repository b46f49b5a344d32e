import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { AppError, notFound } from '../errors.js';
import type { Logger } from '../log.js';
import { webChatContactId } from '../domain/contact-id.js';
import type { MessageContent, MessageSender, SessionMessage } from '../domain/messages.js';
import type { VisitorRecord, WebChatAttachmentRecord } from '../domain/web-chat.js';
import type { ChannelRepo, WebChatChannel, WidgetSettings } from '../store/channels/port.js';
import type { ContactRepo } from '../store/core/port.js';
import type { RateLimiter } from '../store/ratelimit/port.js';
import type { SessionMessageRepo } from '../store/session-messages/port.js';
import type { VisitorRepo } from '../store/visitors/port.js';
import type { ConversationGateway } from '../messaging/service.js';
import { ATTACHMENT_ID_PATTERN, checkAttachment, newAttachmentId } from './attachments.js';
import { anonymousVisitorId, hashVisitorToken, identityVerified, newVisitorToken, verifiedVisitorId, VISITOR_TOKEN_PATTERN } from './identity.js';

/** A message as the visitor's widget shows it. */
export interface VisitorMessage {
  /** The message's id in the conversation (the same in history, live frames and webhooks). */
  id: string;
  from: 'visitor' | 'agent' | 'bot' | 'system';
  type: MessageContent['type'];
  text: string;
  at: string;
  /** A picture or document: fetch it from `…/attachments/{id}` with the visitor's token. */
  attachment?: { id: string; mimeType: string; filename: string };
}

/** A visitor allowed to act: the channel, the visitor, and their contact's id. */
export interface VisitorAccess {
  channel: WebChatChannel;
  visitor: VisitorRecord;
  /** `<visitor id>:<channel id>`. */
  audienceExternalId: string;
}

export interface WebChatLimits {
  visitorMessagesPerMinute: number;
  addressRequestsPerMinute: number;
  maxMessageChars: number;
  maxAttachmentBytes: number;
}

/** A file as a request brings it: the bytes, and what the browser says it is. */
export interface AttachmentUpload {
  bytes: Buffer;
  mimeType?: string | undefined;
  filename?: string | undefined;
}

export interface WebChatServiceDeps {
  channels: ChannelRepo;
  visitors: VisitorRepo;
  contacts: ContactRepo;
  messages: SessionMessageRepo;
  conversations: ConversationGateway;
  rateLimiter: RateLimiter;
  clock: Clock;
  log: Logger;
  limits: WebChatLimits;
  /** Told when a visitor's tokens are revoked, so every node closes their sockets. */
  onRevoked(organizationId: string, audienceExternalId: string | null, channelId: string): void;
}

export interface StartBody {
  token?: string | undefined;
  userId?: string | undefined;
  userHash?: string | undefined;
  name?: string | undefined;
  email?: string | undefined;
}

/** How many messages of the latest session a returning visitor is shown. */
const HISTORY = 100;

/** The part of a message a visitor sees of another sender's. */
export function visitorMessageOf(m: { messageId: string; sender: MessageSender; direction?: 'inbound' | 'outbound'; content: MessageContent; at: string }): VisitorMessage {
  const from = m.sender === 'contact' ? 'visitor' : m.sender;
  const c = m.content;
  const text = c.text ?? c.caption ?? '';
  const v: VisitorMessage = { id: m.messageId, from, type: c.type, text, at: m.at };
  // Only this service's own files: a chat network's media id or a link means nothing to a visitor.
  if (c.mediaId !== undefined && ATTACHMENT_ID_PATTERN.test(c.mediaId)) v.attachment = { id: c.mediaId, mimeType: c.mimeType ?? 'application/octet-stream', filename: c.filename ?? 'attachment' };
  return v;
}

/**
 * The visitor side of web chat: who a visitor is (anonymous, or verified by
 * the business's HMAC), what they may read (their own conversation only) and
 * send (text, through the contact's conversation actor exactly like a chat
 * network's inbound message). Every entry checks the request's origin
 * against the channel's allowed origins and counts it against the address's
 * and the visitor's rate limits.
 */
export class WebChatService {
  constructor(private readonly d: WebChatServiceDeps) {}

  /** The largest attachment, in bytes (WEBCHAT_MAX_ATTACHMENT_BYTES). */
  get maxAttachmentBytes(): number {
    return this.d.limits.maxAttachmentBytes;
  }

  private now(): string {
    return new Date(this.d.clock.now()).toISOString();
  }

  /** The web chat, when `origin` may use it; 404 for an unknown channel (or not a web chat), 403 for an origin not allowed. */
  async channelFor(channelId: string, origin: string | undefined): Promise<WebChatChannel> {
    const c = await this.d.channels.getGlobal(channelId);
    if (c === null || c.kind !== 'web_chat') throw new AppError(404, 'channel_not_found', 'no web chat channel with this id');
    if (!originAllowed(c, origin)) {
      throw new AppError(403, 'origin_not_allowed', origin === undefined ? 'the request has no Origin: the widget talks only from the pages of the channel\'s allowed origins' : `${origin} is not an allowed origin of this web chat`);
    }
    return c;
  }

  /** Counts a request from `address`; 429 past the per-address limit. */
  async countAddress(address: string | undefined): Promise<void> {
    const limit = this.d.limits.addressRequestsPerMinute;
    const r = await this.d.rateLimiter.hit(`webchat:a:${address ?? 'unknown'}`, limit, 60_000);
    if (!r.allowed) throw tooMany(`at most ${limit} web chat requests per minute from one address`, r.retryAfterMs);
  }

  /** What the widget needs before a visitor writes: its look and whether it asks for a name first. */
  widgetConfig(c: WebChatChannel): { channelId: string; name: string; widget: WidgetSettings; identityVerification: boolean } {
    return { channelId: c.id, name: c.name, widget: c.widget ?? {}, identityVerification: c.identitySecret !== undefined };
  }

  /**
   * A visitor's session: the one its token names (a reload, a return next
   * week), the verified user's (with `userId` and a matching `userHash`), or
   * a new anonymous visitor. A claim to a user id without a valid hash is
   * refused, never taken as anonymous. Returns a token for this browser.
   */
  async start(c: WebChatChannel, body: StartBody): Promise<{ visitor: VisitorRecord; token: string; verified: boolean; unreadCount: number }> {
    const at = this.now();
    let held: VisitorRecord | null = null;
    if (body.token !== undefined) held = await this.visitorOfToken(c, body.token);
    let visitor: VisitorRecord;
    let token: string | undefined;
    if (body.userId !== undefined) {
      if (c.identitySecret === undefined) throw new AppError(422, 'identity_verification_unavailable', 'this web chat has no identity secret: rotate one in its settings first');
      if (body.userHash === undefined || !identityVerified(c.identitySecret, body.userId, body.userHash)) {
        throw new AppError(401, 'identity_not_verified', 'userHash is not the HMAC-SHA256 of userId with this channel\'s identity secret');
      }
      const id = verifiedVisitorId(c.id, body.userId);
      if (held?.id === id) {
        visitor = held;
        token = body.token;
      } else {
        visitor = await this.d.visitors.create({ id, organizationId: c.organizationId, channelId: c.id, userId: body.userId, name: null, email: null, createdAt: at, readUpTo: null });
      }
    } else if (held !== null && held.userId === null) {
      visitor = held;
      token = body.token;
    } else {
      // No token, a revoked one, or a verified visitor's token without the user's proof now (signed out): a new anonymous visitor.
      visitor = await this.d.visitors.create({ id: anonymousVisitorId(), organizationId: c.organizationId, channelId: c.id, userId: null, name: null, email: null, createdAt: at, readUpTo: null });
    }
    if ((body.name !== undefined && body.name !== visitor.name) || (body.email !== undefined && body.email !== visitor.email)) {
      visitor = { ...visitor, name: body.name ?? visitor.name, email: body.email ?? visitor.email };
      await this.d.visitors.update(visitor);
      await this.syncContact(c, visitor);
    }
    if (token === undefined) {
      token = newVisitorToken();
      await this.d.visitors.addToken({ hash: hashVisitorToken(token), organizationId: c.organizationId, channelId: c.id, visitorId: visitor.id, createdAt: at });
    }
    const unreadCount = (await this.history({ channel: c, visitor, audienceExternalId: webChatContactId(visitor.id, c.id) })).unreadCount;
    return { visitor, token, verified: visitor.userId !== null, unreadCount };
  }

  /** The visitor a token names on this channel, or null (unknown, revoked, another channel's). */
  private async visitorOfToken(c: WebChatChannel, token: string): Promise<VisitorRecord | null> {
    if (!VISITOR_TOKEN_PATTERN.test(token)) return null;
    const t = await this.d.visitors.tokenByHash(hashVisitorToken(token));
    if (t === null || t.channelId !== c.id || t.organizationId !== c.organizationId) return null;
    return this.d.visitors.get(c.organizationId, c.id, t.visitorId);
  }

  /** The visitor a request's token names; 401 when it names none on this channel. */
  async authenticate(c: WebChatChannel, token: string | undefined): Promise<VisitorAccess> {
    const visitor = token === undefined ? null : await this.visitorOfToken(c, token);
    if (visitor === null) throw new AppError(401, 'invalid_visitor_token', 'missing, unknown or revoked visitor token: start a visitor session first');
    return { channel: c, visitor, audienceExternalId: webChatContactId(visitor.id, c.id) };
  }

  /** The visitor's current conversation (its latest session), oldest first, and how many agent or bot messages they have not seen. */
  async history(a: VisitorAccess): Promise<{ messages: VisitorMessage[]; unreadCount: number }> {
    const sessions = await this.d.messages.contactSessions(a.channel.organizationId, a.audienceExternalId);
    const latest = sessions[0];
    if (latest === undefined) return { messages: [], unreadCount: 0 };
    // System entries and agents' private notes are the agents' timeline, never the visitor's.
    const all = ((await this.d.messages.listSession(a.channel.organizationId, latest.sessionId)) ?? []).filter((m) => m.direction !== 'internal');
    return { messages: all.slice(-HISTORY).map(fromStored), unreadCount: unreadOf(all, a.visitor.readUpTo) };
  }

  /** Messages after the one with id `after` (all of the latest session when it is not among them). */
  async since(a: VisitorAccess, after: string | undefined): Promise<{ messages: VisitorMessage[]; unreadCount: number }> {
    const h = await this.history(a);
    if (after === undefined) return h;
    const i = h.messages.findIndex((m) => m.id === after);
    return { messages: i < 0 ? h.messages : h.messages.slice(i + 1), unreadCount: h.unreadCount };
  }

  /**
   * A visitor's message, through the contact's conversation actor as the chat
   * network's inbound messages go: stored, `inbound_message` published (the
   * inbox, webhooks, routing), the handover rules applied. `clientId` makes a
   * retry of the same message count once.
   */
  async send(a: VisitorAccess, text: string, clientId: string | undefined): Promise<VisitorMessage> {
    const trimmed = text.trim();
    if (trimmed === '') throw new AppError(400, 'validation_failed', 'text is required', [{ field: 'body.text', message: 'text is required' }]);
    if (trimmed.length > this.d.limits.maxMessageChars) {
      throw new AppError(413, 'message_too_long', `a message is at most ${this.d.limits.maxMessageChars} characters`, { maxChars: this.d.limits.maxMessageChars });
    }
    await this.countMessage(a);
    return this.inbound(a, { type: 'text', text: trimmed }, clientId);
  }

  /**
   * A visitor's picture or document: checked by its bytes (type and size),
   * stored, and sent as their message (`image` or `document` content naming
   * it by `mediaId`, as a chat network's inbound media), with an optional
   * caption. Counts as a message against the visitor's rate limit.
   */
  async sendAttachment(a: VisitorAccess, file: AttachmentUpload, caption: string | undefined, clientId: string | undefined): Promise<VisitorMessage> {
    const cap = caption?.trim();
    if (cap !== undefined && cap.length > this.d.limits.maxMessageChars) {
      throw new AppError(413, 'message_too_long', `a caption is at most ${this.d.limits.maxMessageChars} characters`, { maxChars: this.d.limits.maxMessageChars });
    }
    const checked = checkAttachment(file.bytes, file.mimeType, file.filename, this.d.limits.maxAttachmentBytes);
    await this.countMessage(a);
    // A retry with the same clientId names the same file, so it is stored once too.
    const id = clientId === undefined ? newAttachmentId() : `wca_${createHash('sha256').update(`${a.channel.id}\u0000${a.visitor.id}\u0000file\u0000${clientId}`).digest('hex').slice(0, 32)}`;
    if ((await this.d.visitors.getAttachment(a.channel.organizationId, a.channel.id, id)) === null) {
      await this.d.visitors.putAttachment(
        { id, organizationId: a.channel.organizationId, channelId: a.channel.id, visitorId: a.visitor.id, uploadedBy: 'visitor', mimeType: checked.mimeType, filename: checked.filename, size: file.bytes.length, createdAt: this.now() },
        file.bytes,
      );
    }
    const content: MessageContent = { type: checked.kind, mediaId: id, mimeType: checked.mimeType, filename: checked.filename };
    if (cap !== undefined && cap !== '') {
      content.caption = cap;
      content.text = cap;
    }
    return this.inbound(a, content, clientId === undefined ? undefined : `file\u0000${clientId}`);
  }

  /**
   * An agent's file for a visitor's conversation (from the inbox): checked as
   * a visitor's is, stored as that visitor's, and sent by naming its id in a
   * reply (`media` with `mediaId`). 404 when the conversation is not a
   * visitor of one of the organization's web chats.
   */
  async uploadForAgent(organizationId: string, audienceExternalId: string, file: AttachmentUpload): Promise<WebChatAttachmentRecord> {
    const [visitorId, channelId] = audienceExternalId.split(':') as [string, string | undefined];
    if (channelId === undefined) throw notFound('conversation');
    const c = await this.d.channels.get(organizationId, channelId);
    if (c === null || c.kind !== 'web_chat' || (await this.d.visitors.get(organizationId, channelId, visitorId)) === null) throw notFound('conversation');
    const checked = checkAttachment(file.bytes, file.mimeType, file.filename, this.d.limits.maxAttachmentBytes);
    const record: WebChatAttachmentRecord = {
      id: newAttachmentId(),
      organizationId,
      channelId,
      visitorId,
      uploadedBy: 'agent',
      mimeType: checked.mimeType,
      filename: checked.filename,
      size: file.bytes.length,
      createdAt: this.now(),
    };
    await this.d.visitors.putAttachment(record, file.bytes);
    return record;
  }

  /** One of the visitor's own conversation's files; 404 for any other (another visitor's, another channel's). */
  async attachmentForVisitor(a: VisitorAccess, id: string): Promise<{ attachment: WebChatAttachmentRecord; bytes: Buffer }> {
    const found = ATTACHMENT_ID_PATTERN.test(id) ? await this.d.visitors.getAttachment(a.channel.organizationId, a.channel.id, id) : null;
    if (found === null || found.attachment.visitorId !== a.visitor.id) throw notFound('attachment');
    return found;
  }

  private async countMessage(a: VisitorAccess): Promise<void> {
    const limit = this.d.limits.visitorMessagesPerMinute;
    const r = await this.d.rateLimiter.hit(`webchat:v:${a.channel.id}:${a.visitor.id}`, limit, 60_000);
    if (!r.allowed) throw tooMany(`at most ${limit} messages per minute from one visitor`, r.retryAfterMs);
  }

  /** The visitor's message through the contact's conversation actor; `clientId` keys it (a retry is one message). */
  private async inbound(a: VisitorAccess, content: MessageContent, clientId: string | undefined): Promise<VisitorMessage> {
    const at = this.now();
    const networkMessageId =
      clientId === undefined
        ? `webchat.in.${randomBytes(16).toString('hex')}`
        : `webchat.in.${createHash('sha256').update(`${a.channel.id}\u0000${a.visitor.id}\u0000${clientId}`).digest('hex').slice(0, 32)}`;
    await this.d.conversations.ask(a.channel.organizationId, a.audienceExternalId, {
      kind: 'network.inbound',
      channelId: a.channel.id,
      event: {
        kind: 'message',
        businessAccountId: a.channel.id,
        phoneNumberId: a.channel.id,
        from: a.visitor.id,
        customer: {},
        networkMessageId,
        at,
        content,
        ...(a.visitor.name === null ? {} : { profileName: a.visitor.name }),
      },
    });
    if (a.visitor.email !== null) await this.syncContact(a.channel, a.visitor);
    return visitorMessageOf({ messageId: networkMessageId, sender: 'contact', content, at });
  }

  /** The visitor has seen everything up to now: the launcher's unread count starts again from zero. */
  async markRead(a: VisitorAccess): Promise<void> {
    const next = { ...a.visitor, readUpTo: this.now() };
    await this.d.visitors.update(next);
    a.visitor = next;
  }

  /** Revokes a visitor's tokens (the channel's admin): their sockets close and their browser starts as a new visitor. */
  async revokeVisitor(organizationId: string, channelId: string, visitorId: string): Promise<{ revoked: number }> {
    const c = await this.d.channels.get(organizationId, channelId);
    if (c === null || c.kind !== 'web_chat') throw notFound('channel');
    if ((await this.d.visitors.get(organizationId, channelId, visitorId)) === null) throw notFound('visitor');
    const revoked = await this.d.visitors.revokeVisitor(organizationId, channelId, visitorId);
    this.d.onRevoked(organizationId, webChatContactId(visitorId, channelId), channelId);
    return { revoked };
  }

  /** Revokes every visitor token of the channel. */
  async revokeChannel(organizationId: string, channelId: string): Promise<{ revoked: number }> {
    const c = await this.d.channels.get(organizationId, channelId);
    if (c === null || c.kind !== 'web_chat') throw notFound('channel');
    const revoked = await this.d.visitors.revokeChannel(organizationId, channelId);
    this.d.onRevoked(organizationId, null, channelId);
    return { revoked };
  }

  /** Whether the token still names the visitor (a socket's periodic check). */
  async stillValid(a: VisitorAccess, token: string): Promise<boolean> {
    const v = await this.visitorOfToken(a.channel, token);
    return v !== null && v.id === a.visitor.id;
  }

  /** The pre-chat form's name and email on the contact, once it exists (the name only when it has none). */
  private async syncContact(c: WebChatChannel, v: VisitorRecord): Promise<void> {
    const aeid = webChatContactId(v.id, c.id);
    const contact = await this.d.contacts.get(c.organizationId, aeid);
    if (contact === null) return;
    if (v.name !== null && contact.name === null) await this.d.contacts.setNameIfMissing(c.organizationId, aeid, v.name);
    if (v.email !== null && contact.attributes?.email !== v.email) await this.d.contacts.update(c.organizationId, contact.id, { attributes: { email: v.email } });
  }
}

function fromStored(m: SessionMessage): VisitorMessage {
  return visitorMessageOf({ messageId: m.messageId ?? m._id, sender: m.sender, content: m.content, at: m.sentAt });
}

function unreadOf(all: SessionMessage[], readUpTo: string | null): number {
  return all.filter((m) => m.direction === 'outbound' && (readUpTo === null || m.sentAt > readUpTo)).length;
}

/** True when `origin` (the request's Origin header) is one of the channel's allowed origins. */
export function originAllowed(c: WebChatChannel, origin: string | undefined): boolean {
  if (origin === undefined || origin === 'null') return false;
  return c.allowedOrigins.some((o) => {
    try {
      return new URL(o).origin === origin;
    } catch {
      return false;
    }
  });
}

function tooMany(message: string, retryAfterMs: number): AppError {
  const retry = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new AppError(429, 'rate_limited', `${message}; retry in ${retry} s`, undefined, { retryAfterSeconds: retry });
}
