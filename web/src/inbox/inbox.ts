import { request } from '../api/client';
import type { ConversationDetail, ConversationPage, ConversationSummary, SessionUser } from '../api/types';
import { Observable } from '../state';
import { CONVERSATION_EVENTS, conversationIdOf, isEventFrame, type ClientCommand, type EventFrame, type ServerFrame } from './frames';
import { InboxSocket } from './socket';

export const PAGE_SIZE = 100;

export interface InboxLists {
  queue: ConversationSummary[];
  queueTotal: number;
  mine: ConversationSummary[];
  loaded: boolean;
}

export interface QueuedNotice {
  id: string;
  conversationId: string;
  name: string;
}

type ConversationListener = (f: EventFrame) => void;

const byQueuedAt = (a: ConversationSummary, b: ConversationSummary) => (a.queuedAt ?? a.updatedAt).localeCompare(b.queuedAt ?? b.updatedAt);
const byUpdatedDesc = (a: ConversationSummary, b: ConversationSummary) => b.updatedAt.localeCompare(a.updatedAt);

export function displayName(c: Pick<ConversationSummary, 'contactName' | 'phone'>): string {
  return c.contactName ?? `+${c.phone}`;
}

/**
 * The signed-in agent's live view of the team inbox: the queue, their own
 * conversations and unread counts, kept current by the `/ws` socket.
 *
 * Guarantees:
 * - the lists are loaded over REST at the first welcome and again on `resync_required`;
 *   after that each conversation event refreshes that one conversation's summary
 *   (so a missing or reordered event never leaves a stale row for longer than the next event);
 * - a conversation is in `queue` exactly when its last known status is `queued`, in `mine`
 *   when it is `assigned` to this user;
 * - unread counts are the server's (`unreadCount`, per user, so they survive a reload and follow the
 *   user across devices); an inbound message of a conversation not on screen counts at once, before
 *   the server's count catches up; opening a conversation marks it seen on the server.
 */
export class Inbox {
  readonly lists = new Observable<InboxLists>({ queue: [], queueTotal: 0, mine: [], loaded: false });
  readonly unread = new Observable<ReadonlyMap<string, number>>(new Map());
  readonly connection = new Observable<'connecting' | 'open' | 'reconnecting' | 'closed'>('connecting');
  readonly notices = new Observable<QueuedNotice[]>([]);
  private readonly known = new Map<string, ConversationSummary>();
  private readonly listeners = new Map<string, Set<ConversationListener>>();
  private readonly pending = new Map<string, Promise<void>>();
  private readonly socket: InboxSocket;
  private queuePagesLoaded = 0;
  private openConversation: string | null = null;
  private welcomed = false;
  private commandSeq = 0;

  constructor(readonly user: SessionUser) {
    this.socket = new InboxSocket({ frame: (f) => this.onFrame(f), state: (s) => this.connection.set(s) });
  }

  start(): void {
    this.socket.start();
  }

  stop(): void {
    this.socket.stop();
  }

  /** Subscribes to the events of one conversation (the open conversation view). */
  watch(conversationId: string, fn: ConversationListener): () => void {
    let set = this.listeners.get(conversationId);
    if (!set) this.listeners.set(conversationId, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /** The conversation on screen: marked seen, its unread count cleared and kept at zero. */
  setOpen(conversationId: string | null): void {
    this.openConversation = conversationId;
    if (conversationId !== null) this.markSeen(conversationId);
  }

  private markSeen(id: string): void {
    this.setUnread(id, 0);
    void request('POST', `/v1/conversations/${encodeURIComponent(id)}/seen`).catch(() => undefined);
  }

  private setUnread(id: string, n: number): void {
    if ((this.unread.value.get(id) ?? 0) === n) return;
    const next = new Map(this.unread.value);
    if (n === 0) next.delete(id);
    else next.set(id, n);
    this.unread.set(next);
  }

  dismissNotice(id: string): void {
    this.notices.set(this.notices.value.filter((n) => n.id !== id));
  }

  /** Sends a typing or presence hint over the socket; dropped when disconnected (they are only hints). */
  hint(cmd: Omit<Extract<ClientCommand, { type: 'typing' }>, 'id'>): void {
    this.socket.send({ ...cmd, id: `hint-${Date.now()}-${this.commandSeq++}` });
  }

  /** Records a summary the caller fetched (the conversation view, an action's answer). */
  upsert(c: ConversationSummary, atLeastUnread = 0): void {
    this.known.set(c.id, c);
    if (c.unreadCount !== undefined && c.id !== this.openConversation) this.setUnread(c.id, Math.max(c.unreadCount, atLeastUnread));
    this.publish();
  }

  async loadMoreQueue(): Promise<void> {
    const page = await request<ConversationPage>('GET', `/v1/conversations?status=queued&limit=${PAGE_SIZE}&page=${this.queuePagesLoaded + 1}`);
    this.queuePagesLoaded++;
    for (const c of page.conversations) this.upsert(c);
    this.publishWith(page.total);
  }

  private async reload(): Promise<void> {
    const [queued, mine] = await Promise.all([
      request<ConversationPage>('GET', `/v1/conversations?status=queued&limit=${PAGE_SIZE}&page=1`),
      request<ConversationPage>('GET', `/v1/conversations?status=assigned&assigneeId=${encodeURIComponent(this.user.id)}&limit=${PAGE_SIZE}&page=1`),
    ]);
    this.known.clear();
    this.unread.set(new Map());
    this.queuePagesLoaded = 1;
    for (const c of [...queued.conversations, ...mine.conversations]) this.upsert(c);
    this.publishWith(queued.total);
  }

  /** Queued conversations the server has beyond the pages loaded (the header's count includes them). */
  private unloadedQueued = 0;

  private publishWith(serverQueuedTotal: number): void {
    const loadedQueued = [...this.known.values()].filter((c) => c.status === 'queued').length;
    this.unloadedQueued = Math.max(0, serverQueuedTotal - loadedQueued);
    this.publish(true);
  }

  private publish(loaded = this.lists.value.loaded): void {
    const all = [...this.known.values()];
    const queue = all.filter((c) => c.status === 'queued').sort(byQueuedAt);
    const mine = all.filter((c) => c.status === 'assigned' && c.assigneeId === this.user.id).sort(byUpdatedDesc);
    this.lists.set({ queue, queueTotal: queue.length + this.unloadedQueued, mine, loaded });
    // A notice is about a conversation waiting: once someone took it (or the bot has it again), it goes.
    const waiting = this.notices.value.filter((n) => this.known.get(n.conversationId)?.status === 'queued');
    if (waiting.length !== this.notices.value.length) this.notices.set(waiting);
  }

  private onFrame(f: ServerFrame): void {
    switch (f.type) {
      case 'welcome':
        if (this.socket.lastSeq === null) this.socket.noteSeq(f.seq);
        if (!this.welcomed) {
          this.welcomed = true;
          void this.reload().catch(() => undefined);
        }
        return;
      case 'resync_required':
        this.socket.noteSeq(f.seq);
        void this.reload().catch(() => undefined);
        return;
      case 'replay_done':
        this.socket.noteSeq(f.seq);
        return;
      default:
        if (isEventFrame(f)) this.onEvent(f);
    }
  }

  private onEvent(f: EventFrame): void {
    this.socket.noteSeq(f.seq);
    if (!(CONVERSATION_EVENTS as readonly string[]).includes(f.type)) return;
    const id = conversationIdOf(f);
    if (id === undefined) return;
    for (const fn of this.listeners.get(id) ?? []) fn(f);
    let atLeast = 0;
    if (f.type === 'inbound_message') {
      if (id === this.openConversation) this.markSeen(id);
      else this.setUnread(id, (atLeast = (this.unread.value.get(id) ?? 0) + 1));
    }
    // The server's count may not include this message yet (its read model is written after the event).
    void this.refresh(id, atLeast).then(() => {
      if (f.type === 'handover.requested') this.notifyQueued(id);
    });
  }

  /** Fetches one conversation's summary; concurrent requests for the same id share one fetch. */
  private refresh(id: string, atLeastUnread = 0): Promise<void> {
    const running = this.pending.get(id);
    if (running) return running;
    const p = request<{ conversation: ConversationDetail }>('GET', `/v1/conversations/${encodeURIComponent(id)}`)
      .then(({ conversation }) => {
        const { messages: _messages, ...summary } = conversation;
        this.upsert(summary, Math.max(atLeastUnread, this.unread.value.get(id) ?? 0));
      })
      .catch(() => undefined)
      .finally(() => this.pending.delete(id));
    this.pending.set(id, p);
    return p;
  }

  private notifyQueued(id: string): void {
    const c = this.known.get(id);
    if (!c || c.status !== 'queued') return;
    const name = displayName(c);
    this.notices.set([...this.notices.value.slice(-4), { id: `${id}@${Date.now()}`, conversationId: id, name }]);
    if (typeof Notification !== 'undefined' && Notification.permission === 'granted' && document.visibilityState !== 'visible') {
      new Notification('Conversation waiting', { body: `${name} is waiting for an agent`, tag: id });
    }
  }
}
