import type { EventFeed, EventFollower, LoggedEvent } from '../events/types.js';
import type { Logger } from '../log.js';

/** What the fan-out hands a connection: the event, and its frame serialized once for every socket. */
export interface FannedEvent extends LoggedEvent {
  frame: string;
}

/** A subscriber of one organization's events on this node (an inbox socket). */
export interface FanoutSubscriber {
  readonly organizationId: string;
  deliver(e: FannedEvent): void;
}

/** The frame of an event: the webhook envelope plus its log position. */
export function eventFrame(e: LoggedEvent): string {
  const { id, type, createdAt, organizationId, data } = e.event;
  return JSON.stringify({ type, id, createdAt, organizationId, data, seq: e.seq });
}

/**
 * Streams the durable event log to the inbox sockets this node holds.
 *
 * Guarantees:
 * - One live tail of the log per node, whatever the number of sockets: every
 *   event recorded after `position` reaches every subscriber of its
 *   organization, in log order, none skipped, none twice (the log's
 *   follower guarantees it, across NATS reconnects).
 * - A subscriber only ever receives its own organization's events: they are
 *   routed by the event's `organizationId`, which the log stores with it.
 * - An event is serialized once, not once per socket.
 * - `position` is the highest seq handed out: a socket that registers now
 *   receives everything after it live, and reads what came before it from
 *   the log (replay), so replay and live delivery meet without a gap.
 */
export class InboxFanout {
  private readonly byOrg = new Map<string, Set<FanoutSubscriber>>();
  private follower: EventFollower | null = null;
  private last = 0;

  constructor(
    private readonly feed: EventFeed,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.follower = await this.feed.follow((e) => this.dispatch(e));
    this.last = this.follower.startSeq;
  }

  /** The highest seq handed to subscribers (or the head when the tail started). */
  get position(): number {
    return this.last;
  }

  add(s: FanoutSubscriber): void {
    let set = this.byOrg.get(s.organizationId);
    if (set === undefined) this.byOrg.set(s.organizationId, (set = new Set()));
    set.add(s);
  }

  remove(s: FanoutSubscriber): void {
    const set = this.byOrg.get(s.organizationId);
    if (set === undefined) return;
    set.delete(s);
    if (set.size === 0) this.byOrg.delete(s.organizationId);
  }

  /** Sockets held, for metrics. */
  get size(): number {
    let n = 0;
    for (const set of this.byOrg.values()) n += set.size;
    return n;
  }

  private dispatch(e: LoggedEvent): void {
    this.last = Math.max(this.last, e.seq);
    const set = this.byOrg.get(e.event.organizationId);
    if (set === undefined) return;
    const fanned: FannedEvent = { ...e, frame: eventFrame(e) };
    for (const s of set) {
      try {
        s.deliver(fanned);
      } catch (err) {
        this.log.error('inbox: delivering an event to a socket failed', { err, seq: e.seq });
      }
    }
  }

  async stop(): Promise<void> {
    await this.follower?.stop();
    this.follower = null;
  }
}
