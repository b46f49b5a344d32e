import { request } from '../api/client';
import { CUSTOMER_SERVICE_WINDOW_MS } from '../../../src/domain/service-window';
import type { ConversationCounts, ConversationDetail, ConversationSummary, ConversationViewPage, SessionUser } from '../api/types';
import { Observable } from '../state';
import { CONVERSATION_EVENTS, conversationIdOf, isEventFrame, ticketIdOf, type ClientCommand, type ConversationRow, type EventFrame, type ServerFrame } from './frames';
import { away, notify, setTitleCount } from './notify';
import { InboxSocket } from './socket';

export type PresenceStatus = 'online' | 'away' | 'offline';

export interface QueuedNotice {
  id: string;
  conversationId: string;
  name: string;
}

/** Called with each event of the conversation, and with null when its row changed (read it again). */
type ConversationListener = (f: EventFrame | null) => void;
type RowListener = (c: ConversationSummary) => void;

/** Counts are fetched again this long after the last row change of a burst. */
const COUNTS_DELAY_MS = 250;

/** When the conversation missed its response-time target (null: it did not, or none runs). */
function breached(c: Pick<ConversationSummary, 'sla'>): string | null {
  return c.sla?.breachedAt ?? null;
}

export function displayName(c: Pick<ConversationSummary, 'contactName' | 'phone'> & Partial<Pick<ConversationSummary, 'username' | 'userId'>>): string {
  // A web chat's contact has a visitor id, not a phone number; a customer may hide their number behind a username.
  if (c.contactName) return c.contactName;
  if (c.phone === null) return c.username ? `@${c.username}` : (c.userId ?? 'WhatsApp user');
  return c.phone.startsWith('v_') ? `Visitor ${c.phone.slice(2, 8)}` : `+${c.phone}`;
}

/** A known summary with a `conversation` frame's row applied. */
function patched(k: ConversationSummary, r: ConversationRow): ConversationSummary {
  const closes = r.lastInboundAt === null ? null : Date.parse(r.lastInboundAt) + CUSTOMER_SERVICE_WINDOW_MS;
  return {
    ...k,
    contactId: r.contactId,
    status: r.status,
    assigneeId: r.assigneeId,
    queuedAt: r.queuedAt,
    assignedAt: r.assignedAt,
    sessionId: r.sessionId,
    sessionStatus: r.sessionStatus,
    lastInboundAt: r.lastInboundAt,
    ...(r.teamId === undefined ? {} : { teamId: r.teamId }),
    ...(r.sla === undefined ? {} : { sla: r.sla }),
    updatedAt: r.updatedAt,
    window: { open: closes !== null && Date.now() < closes, closesAt: closes === null ? null : new Date(closes).toISOString() },
  };
}

/**
 * The signed-in agent's live link to the team inbox, shared by every screen:
 * the conversations it has seen (each list on screen loads its own pages and
 * follows the rows from here), the counts per view, unread counts, notices,
 * browser notifications and the tab title.
 *
 * Guarantees:
 * - at every `welcome` (first connect and each reconnect) and `resync_required`, the counts and
 *   the agent's own conversations are loaded again over REST and `onResync` listeners (the lists
 *   on screen) reload, so nothing missed while disconnected stays wrong;
 * - in between, each `conversation` frame (sent once the server's lists hold the change) updates
 *   that conversation's row for every listener, an older version never replacing a newer one, and
 *   the counts are fetched again when it changed lanes (not for activity alone);
 * - unread counts are the server's (`unreadCount`, per user); an inbound message of a conversation
 *   not on screen counts at once, before the server's count catches up; opening a conversation
 *   marks it seen on the server;
 * - a conversation newly queued gives a notice (and a browser notification when allowed and the tab
 *   is not looked at); so does a customer's message in a conversation this agent holds, and a
 *   conversation someone else (auto-assignment, a rule, a teammate) gave this agent; the tab
 *   title counts the waiting conversations plus the unread messages of the agent's own.
 */
export class Inbox {
  readonly counts = new Observable<ConversationCounts | null>(null);
  readonly unread = new Observable<ReadonlyMap<string, number>>(new Map());
  readonly connection = new Observable<'connecting' | 'open' | 'reconnecting' | 'closed'>('connecting');
  readonly notices = new Observable<QueuedNotice[]>([]);
  /** The team's presence by user id (the signed-in agent's own too), loaded on (re)connect, kept by `presence` frames. */
  readonly presence = new Observable<ReadonlyMap<string, PresenceStatus>>(new Map());
  private readonly known = new Map<string, ConversationSummary>();
  private readonly versions = new Map<string, number>();
  private readonly listeners = new Map<string, Set<ConversationListener>>();
  private readonly ticketListeners = new Map<string, Set<() => void>>();
  private readonly contactListeners = new Map<string, Set<() => void>>();
  private readonly rowListeners = new Set<RowListener>();
  private readonly resyncListeners = new Set<() => void>();
  private readonly countListeners = new Set<() => void>();
  private readonly pending = new Map<string, Promise<void>>();
  /** Conversations a `handover.requested` named whose row does not show them queued yet. */
  private readonly requested = new Set<string>();
  /** Conversations asked for again while their fetch ran: fetched once more when it ends. */
  private readonly stale = new Set<string>();
  private readonly socket: InboxSocket;
  private openConversation: string | null = null;
  private countsTimer: ReturnType<typeof setTimeout> | undefined;
  private commandSeq = 0;

  constructor(readonly user: SessionUser) {
    this.socket = new InboxSocket({ frame: (f) => this.onFrame(f), state: (s) => this.connection.set(s) });
    this.unread.subscribe(() => this.publishTitle());
    this.counts.subscribe(() => this.publishTitle());
  }

  start(): void {
    this.socket.start();
  }

  stop(): void {
    this.socket.stop();
    clearTimeout(this.countsTimer);
    setTitleCount(0);
  }

  /**
   * Subscribes to the events of one conversation (the open conversation view): called with each of
   * its events, with null when its row changed, and with null at every (re)connect, since what
   * changed between the view's load and the socket's welcome came as no event.
   */
  watch(conversationId: string, fn: ConversationListener): () => void {
    let set = this.listeners.get(conversationId);
    if (!set) this.listeners.set(conversationId, (set = new Set()));
    set.add(fn);
    const offResync = this.onResync(() => fn(null));
    return () => {
      set.delete(fn);
      offResync();
    };
  }

  /**
   * Subscribes to the changes of one ticket (its page): called with each `ticket.updated` or
   * `ticket.commented` about it, and at every reconnect (what changed meanwhile is read again).
   */
  watchTicket(ticketId: string, fn: () => void): () => void {
    return this.watchKeyed(this.ticketListeners, ticketId, fn);
  }

  /** Subscribes to the changes of one contact (its page): a rename, attributes, labels; and every reconnect. */
  watchContact(contactId: string, fn: () => void): () => void {
    return this.watchKeyed(this.contactListeners, contactId, fn);
  }

  /** `fn` in `listeners` under `key`, and on every reconnect; undone by the function returned. */
  private watchKeyed(listeners: Map<string, Set<() => void>>, key: string, fn: () => void): () => void {
    let set = listeners.get(key);
    if (!set) listeners.set(key, (set = new Set()));
    set.add(fn);
    const offResync = this.onResync(fn);
    return () => {
      set.delete(fn);
      offResync();
    };
  }

  /** Every conversation row that changed or was loaded (the lists on screen place it). */
  onRow(fn: RowListener): () => void {
    this.rowListeners.add(fn);
    return () => this.rowListeners.delete(fn);
  }

  /** Called at every (re)connect: what a list loaded before may have missed changes. */
  onResync(fn: () => void): () => void {
    this.resyncListeners.add(fn);
    return () => this.resyncListeners.delete(fn);
  }

  get(id: string): ConversationSummary | undefined {
    return this.known.get(id);
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

  /**
   * Records a summary the caller fetched (a list's page, the conversation view, an action's answer).
   * A summary older than the row already known (a fetch that a frame overtook) only brings its unread count.
   */
  upsert(c: ConversationSummary, atLeastUnread = 0): void {
    const k = this.known.get(c.id);
    const row = k !== undefined && k.updatedAt > c.updatedAt ? { ...k, unreadCount: c.unreadCount } : c;
    this.known.set(c.id, row);
    if (c.unreadCount !== undefined && c.id !== this.openConversation) this.setUnread(c.id, Math.max(c.unreadCount, atLeastUnread));
    this.changed(row);
  }

  private changed(c: ConversationSummary): void {
    for (const fn of this.rowListeners) fn(c);
    if (c.status === 'queued' && this.requested.delete(c.id)) this.noticeQueued(c);
    else if (c.status !== 'queued') this.dismissAbout(c.id);
    this.publishTitle();
  }

  /** A notice is about a conversation waiting: once someone took it (or the bot has it again), it goes. */
  private dismissAbout(id: string): void {
    if (this.notices.value.some((n) => n.conversationId === id)) this.notices.set(this.notices.value.filter((n) => n.conversationId !== id));
  }

  /** Chooses the agent's own status; teammates see it at once. */
  /** The agent's availability: online takes conversations (auto-assignment gives them out), away and offline do not. */
  async setPresence(status: PresenceStatus): Promise<void> {
    await request('PATCH', '/v1/users/me/availability', { status });
    this.presence.set(new Map(this.presence.value).set(this.user.id, status));
  }

  private async loadPresence(): Promise<void> {
    const r = await request<{ agents: { userId: string; status: PresenceStatus }[] }>('GET', '/v1/presence');
    this.presence.set(new Map(r.agents.map((a) => [a.userId, a.status])));
  }

  private async resync(): Promise<void> {
    for (const fn of this.resyncListeners) fn();
    void this.loadPresence().catch(() => undefined);
    const [, mine] = await Promise.all([this.loadCounts(), request<ConversationViewPage>('GET', '/v1/conversations?view=mine&limit=100')]);
    for (const c of mine.conversations) this.upsert(c);
  }

  private async loadCounts(): Promise<void> {
    const r = await request<{ counts: ConversationCounts }>('GET', '/v1/conversations/counts');
    this.counts.set(r.counts);
  }

  private countsLater(): void {
    clearTimeout(this.countsTimer);
    this.countsTimer = setTimeout(() => void this.loadCounts().catch(() => undefined), COUNTS_DELAY_MS);
  }

  private publishTitle(): void {
    let n = this.counts.value?.waiting ?? 0;
    for (const [id, count] of this.unread.value) {
      const c = this.known.get(id);
      if (c?.status === 'assigned' && c.assigneeId === this.user.id) n += count;
    }
    setTitleCount(n);
  }

  private onFrame(f: ServerFrame): void {
    switch (f.type) {
      case 'welcome':
        if (this.socket.lastSeq === null) this.socket.noteSeq(f.seq);
        void this.resync().catch(() => undefined);
        return;
      case 'resync_required':
        this.socket.noteSeq(f.seq);
        void this.resync().catch(() => undefined);
        return;
      case 'replay_done':
        this.socket.noteSeq(f.seq);
        return;
      case 'conversation':
        this.onRowFrame(f.conversation);
        return;
      case 'presence':
        this.presence.set(new Map(this.presence.value).set(f.userId, f.status));
        return;
      case 'contact':
        // Its conversation's row shows the name: read again where a list holds it.
        if (this.known.has(f.contact.audienceExternalId)) void this.refresh(f.contact.audienceExternalId);
        for (const fn of this.contactListeners.get(f.contact.id) ?? []) fn();
        return;
      default:
        if (isEventFrame(f)) this.onEvent(f);
    }
  }

  private onRowFrame(r: ConversationRow): void {
    if ((this.versions.get(r.id) ?? -1) >= r.version) return;
    this.versions.set(r.id, r.version);
    // The row is sent once the lists hold the change, which can be after the change's events: an
    // open view that read the conversation on the event reads it again now.
    for (const fn of this.listeners.get(r.id) ?? []) fn(null);
    const k = this.known.get(r.id);
    // A conversation not seen yet: its name and channel come from the API (once; later rows patch it).
    if (k === undefined) void this.refresh(r.id);
    else {
      const next = patched(k, r);
      this.known.set(r.id, next);
      this.changed(next);
      // Only activity moved (a message in or out): no view gained or lost it, the counts stand.
      if (k.status === next.status && k.assigneeId === next.assigneeId && k.sessionStatus === next.sessionStatus && (k.teamId ?? null) === (next.teamId ?? null) && breached(k) === breached(next)) return;
    }
    for (const fn of this.countListeners) fn();
    this.countsLater();
  }

  /** Called when the counts per view may have changed (a conversation changed lanes, or one not seen yet). */
  onCountsChange(fn: () => void): () => void {
    this.countListeners.add(fn);
    return () => this.countListeners.delete(fn);
  }

  private onEvent(f: EventFrame): void {
    this.socket.noteSeq(f.seq);
    if (f.type === 'ticket.updated' || f.type === 'ticket.commented') {
      const ticketId = ticketIdOf(f);
      if (ticketId !== undefined) for (const fn of this.ticketListeners.get(ticketId) ?? []) fn();
      return;
    }
    if (!(CONVERSATION_EVENTS as readonly string[]).includes(f.type)) return;
    const id = conversationIdOf(f);
    if (id === undefined) return;
    for (const fn of this.listeners.get(id) ?? []) fn(f);
    if (f.type === 'handover.requested') {
      // The row frame follows the event (it is sent once the lists hold the change), or came first.
      const k = this.known.get(id);
      if (k?.status === 'queued') this.noticeQueued(k);
      else this.requested.add(id);
    }
    if (f.type === 'conversation.assigned' && f.data.agentId === this.user.id && f.data.by !== this.user.id) {
      // Given to this agent by someone else (auto-assignment, a rule, a teammate's transfer).
      const k = this.known.get(id);
      if (k !== undefined) this.noticeAssigned(k);
      else void this.refresh(id).then(() => {
        const r = this.known.get(id);
        if (r !== undefined) this.noticeAssigned(r);
      });
    }
    // Labels are not in the row frames: the row is fetched again with its labels.
    if (f.type === 'conversation.labels_changed' && this.known.has(id)) void this.refresh(id).then(() => this.countListeners.forEach((fn) => fn()));
    if (f.type === 'inbound_message') {
      const looking = id === this.openConversation && !away();
      if (id === this.openConversation) this.markSeen(id);
      else this.setUnread(id, (this.unread.value.get(id) ?? 0) + 1);
      const k = this.known.get(id);
      if (k?.status === 'assigned' && k.assigneeId === this.user.id && !looking) {
        notify(`New message from ${displayName(k)}`, 'in a conversation you hold', `message:${id}`, `/inbox/${encodeURIComponent(id)}`);
      }
    }
  }

  /**
   * Fetches one conversation's summary. Requests for an id while its fetch runs share that fetch,
   * and one more fetch follows it: the running one may have been answered before the change that
   * asked again (a row frame for a new conversation, then its handover, both before the first answer).
   */
  private refresh(id: string): Promise<void> {
    const running = this.pending.get(id);
    if (running) {
      this.stale.add(id);
      return running;
    }
    const p = request<{ conversation: ConversationDetail }>('GET', `/v1/conversations/${encodeURIComponent(id)}`)
      .then(({ conversation }) => {
        const { messages: _messages, ...summary } = conversation;
        this.upsert(summary, this.unread.value.get(id) ?? 0);
      })
      .catch(() => undefined)
      .finally(() => {
        this.pending.delete(id);
        if (this.stale.delete(id)) void this.refresh(id);
      });
    this.pending.set(id, p);
    return p;
  }

  private noticeAssigned(c: ConversationSummary): void {
    notify('Conversation assigned to you', `${displayName(c)} is yours to answer`, `assigned:${c.id}`, `/inbox/${encodeURIComponent(c.id)}`);
  }

  private noticeQueued(c: ConversationSummary): void {
    this.requested.delete(c.id);
    const name = displayName(c);
    this.notices.set([...this.notices.value.filter((n) => n.conversationId !== c.id).slice(-4), { id: `${c.id}@${Date.now()}`, conversationId: c.id, name }]);
    notify('Conversation waiting', `${name} is waiting for an agent`, `queued:${c.id}`, `/inbox/${encodeURIComponent(c.id)}`);
  }
}
