import type { EventFeed, EventFollower, LoggedEvent } from '../events/types.js';
import type { Logger } from '../log.js';
import type { InboundMessageEventData, MessageSentEventData } from '../messaging/events.js';
import type { EphemeralBus } from '../ws/ephemeral.js';
import { isWebChatContactId } from '../domain/contact-id.js';
import type { VisitorNoticeBus } from './bus.js';
import { visitorMessageOf, type VisitorMessage } from './service.js';

/** What a visitor's socket (or waiting poll) is told. */
export type VisitorFrame = { type: 'message'; message: VisitorMessage } | { type: 'typing' };

/** A visitor's socket or waiting poll on this node. */
export interface VisitorSubscriber {
  readonly organizationId: string;
  readonly audienceExternalId: string;
  readonly channelId: string;
  frame(f: VisitorFrame): void;
  /** The visitor's tokens were revoked: close. */
  revoked(): void;
}

/**
 * Delivers to this node's visitors what concerns them, whichever node
 * produced it:
 * - the messages of their conversation (their own and the agents' and bots'
 *   replies), from the durable event log every node follows (an agent's
 *   reply recorded on another node reaches a visitor here);
 * - an agent typing in their conversation, from the inbox's ephemeral bus;
 * - the revocation of their tokens, from the web chat notices.
 * Routed by organization and contact: a visitor only ever hears their own
 * conversation. A visitor typing is relayed to the agents on the same bus
 * as agents' typing (`userId` is then the visitor's contact id).
 */
export class VisitorHub {
  private readonly byContact = new Map<string, Set<VisitorSubscriber>>();
  private follower: EventFollower | null = null;

  constructor(
    private readonly feed: EventFeed,
    private readonly inboxBus: EphemeralBus,
    private readonly notices: VisitorNoticeBus,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.follower = await this.feed.follow((e) => this.dispatch(e));
    this.inboxBus.subscribe((m) => {
      const f = m.frame;
      if (f.type !== 'typing' || !isWebChatContactId(f.conversationId) || f.userId === f.conversationId) return;
      for (const s of this.byContact.get(key(m.organizationId, f.conversationId)) ?? []) s.frame({ type: 'typing' });
    });
    this.notices.subscribe((n) => {
      if (n.type !== 'revoked') return;
      for (const set of [...this.byContact.values()]) {
        for (const s of [...set]) {
          if (s.organizationId === n.organizationId && s.channelId === n.channelId && (n.audienceExternalId === null || n.audienceExternalId === s.audienceExternalId)) s.revoked();
        }
      }
    });
  }

  add(s: VisitorSubscriber): void {
    const k = key(s.organizationId, s.audienceExternalId);
    let set = this.byContact.get(k);
    if (set === undefined) this.byContact.set(k, (set = new Set()));
    set.add(s);
  }

  remove(s: VisitorSubscriber): void {
    const k = key(s.organizationId, s.audienceExternalId);
    const set = this.byContact.get(k);
    if (set === undefined) return;
    set.delete(s);
    if (set.size === 0) this.byContact.delete(k);
  }

  /** Visitors' sockets and polls held on this node. */
  get size(): number {
    let n = 0;
    for (const set of this.byContact.values()) n += set.size;
    return n;
  }

  /** Tells the agents the visitor is typing (not stored, best effort). */
  visitorTyping(organizationId: string, audienceExternalId: string): void {
    this.inboxBus.publish({ organizationId, frame: { type: 'typing', userId: audienceExternalId, conversationId: audienceExternalId } });
  }

  revoke(organizationId: string, channelId: string, audienceExternalId: string | null): void {
    this.notices.publish({ type: 'revoked', organizationId, channelId, audienceExternalId });
  }

  private dispatch(e: LoggedEvent): void {
    const ev = e.event;
    if (ev.type !== 'inbound_message' && ev.type !== 'message.sent') return;
    const data = ev.data as InboundMessageEventData | MessageSentEventData;
    if (!isWebChatContactId(data.audienceExternalId)) return;
    const set = this.byContact.get(key(ev.organizationId, data.audienceExternalId));
    if (set === undefined) return;
    const message =
      ev.type === 'inbound_message'
        ? visitorMessageOf({ messageId: data.messageId, sender: 'contact', content: data.content, at: (data as InboundMessageEventData).receivedAt })
        : visitorMessageOf({ messageId: data.messageId, sender: (data as MessageSentEventData).sender, content: data.content, at: (data as MessageSentEventData).timestamp });
    for (const s of [...set]) {
      try {
        s.frame({ type: 'message', message });
      } catch (err) {
        this.log.error('webchat: delivering a message to a visitor failed', { err, seq: e.seq });
      }
    }
  }

  async stop(): Promise<void> {
    await this.follower?.stop();
    this.follower = null;
    await this.notices.close();
  }
}

const key = (org: string, aeid: string) => `${org}\u0000${aeid}`;
