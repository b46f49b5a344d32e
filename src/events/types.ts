import type { DomainEvent } from '../domain/events.js';

export type { DomainEvent };

/**
 * Where producers (actors, HTTP handlers) record events.
 *
 * `publish` resolves only once the event is durably recorded (fsynced on disk
 * in embedded mode, acknowledged by JetStream file storage in clustered mode):
 * callers acknowledge their own operation after it resolves, so an
 * acknowledged operation never loses its event. Rejects when the event could
 * not be recorded; the caller must then fail its operation (retryably).
 */
export interface EventPublisher {
  publish(event: DomainEvent): Promise<void>;
}

/** Subject of an event on the bus: `<prefix>.<org>.<type>`. */
export function eventSubject(prefix: string, event: Pick<DomainEvent, 'organizationId' | 'type'>): string {
  return `${prefix}.events.${event.organizationId}.${event.type}`;
}

/** Every event type the service emits (and that webhooks may subscribe to). */
export const EVENT_TYPES = [
  'message_status',
  'inbound_message',
  'message.sent',
  'resource.created',
  'resource.updated',
  'ticket.created',
  'ticket.updated',
  'ticket.commented',
  'handover.requested',
  'handover.opened',
  'conversation.assigned',
  'conversation.resolved',
  'conversation.note_added',
  'contact.merged',
  'conversation.labels_changed',
  'conversation.sla_breached',
  'automation.fired',
  'automation.webhook',
  'automation.failed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** What a consumer's handler learns about one delivery of an event. */
export interface EventDeliveryInfo {
  /** Position of the event in the log (monotonic per log). */
  seq: number;
  /** 1 on the first delivery, more when the event is redelivered. */
  deliveryCount: number;
}

/**
 * Handles one event. Resolving acknowledges it (it is never delivered to this
 * consumer again); rejecting makes the log redeliver it later, with backoff.
 * Delivery is at least once: after a crash an event can arrive again even if
 * its handler had finished, so handlers must be idempotent.
 */
export type EventHandler = (event: DomainEvent, info: EventDeliveryInfo) => Promise<void>;

export interface ConsumeOptions {
  /** Most handler calls in flight at once (default 16). Order is only kept when 1. */
  concurrency?: number;
  /** Only events of this organization (the live inbox); default all. */
  organizationId?: string;
  /**
   * Only events of these types; default (or empty) every type. The log filters them
   * (clustered: by JetStream consumers' subject filters, so the other events
   * are never delivered to this consumer nor acknowledged by it).
   */
  types?: readonly string[];
}

export interface EventSubscription {
  /** Stops fetching; resolves once the handlers in flight have settled. */
  stop(): Promise<void>;
}

/** One event with its position in the log. */
export interface LoggedEvent {
  seq: number;
  event: DomainEvent;
}

export interface EventFollower {
  /** Every event with seq > startSeq is passed to onEvent (in log order, none skipped, none twice) until stop(). */
  readonly startSeq: number;
  stop(): Promise<void>;
}

export interface EventReadResult {
  /** The organization's events with afterSeq < seq <= untilSeq, oldest first, at most `limit`. */
  events: LoggedEvent[];
  /** The oldest seq the log still holds (any organization); head + 1 when empty. */
  oldestSeq: number;
  /** The newest seq recorded when the read began. */
  headSeq: number;
  /** True when events after afterSeq may have been dropped by retention (afterSeq + 1 < oldestSeq): the reader must resync. */
  truncated: boolean;
  /** True when more events exist up to untilSeq than `limit` allowed (read again from the last seq). */
  more: boolean;
}

export interface EventReadOptions {
  /** Last seq to include; defaults to the head, and a value past the head reads up to the head only. */
  untilSeq?: number;
  /** Most events returned (default 1000). */
  limit?: number;
}

/**
 * The non-durable read side of the log, for the live inbox: a live tail and
 * ranged reads for replay after a reconnect. Nothing is acknowledged and no
 * position is stored: the reader keeps its own seq.
 *
 * `seq` is the log position: the embedded log's sequence, JetStream's stream
 * sequence. It increases over the whole log; within one organization it
 * increases but may skip numbers (other organizations' events, failed writes).
 * What stays readable: the embedded log keeps at least the newest
 * `replayRetainEvents` (EVENTS_REPLAY_RETAIN) events, JetStream what the
 * stream's max age (EVENTS_MAX_AGE_HOURS) keeps.
 */
export interface EventFeed {
  /** The newest recorded seq (0 when none). */
  headSeq(): Promise<number>;
  /**
   * Live tail on this node, not durable, no acknowledgements: calls onEvent synchronously for every event
   * recorded after the returned `startSeq` (the head when follow resolved), of every organization, in seq order.
   * onEvent must not throw (a throw is logged and the tail goes on). Survives NATS reconnects without skipping
   * events (JetStream: an ordered consumer started at startSeq + 1, recreated from the last seq seen if it fails).
   */
  follow(onEvent: (e: LoggedEvent) => void): Promise<EventFollower>;
  /**
   * Reads one organization's events after `afterSeq` (replay after a reconnect). untilSeq defaults to the head;
   * limit to 1000. Rejects on invalid arguments (TypeError) and, clustered, when JetStream does not answer in time.
   */
  read(organizationId: string, afterSeq: number, opts?: EventReadOptions): Promise<EventReadResult>;
}

/**
 * The durable event log: the `EventPublisher` port plus durable consumers.
 *
 * A consumer is identified by its durable `name`: its position survives
 * restarts of the process (and, clustered, is shared by every node, which
 * split the events between them). A name seen for the first time starts at
 * the oldest event still retained. Two adapters: `EmbeddedEventLog` (an
 * fsynced append-only log under DATA_DIR) and `JetStreamEventLog`.
 */
export interface EventLog extends EventPublisher, EventFeed {
  consume(name: string, handler: EventHandler, options?: ConsumeOptions): Promise<EventSubscription>;
  /** Stops every consumer and follower and releases files / connections. */
  close(): Promise<void>;
}
