import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import { connect, headers, nanos, type NatsConnection, type Status } from '@nats-io/transport-node';
import { ReplyInbox, type Attempt } from '../nats/index.js';
import { silentLogger, type Logger } from '../log.js';
import {
  eventSubject,
  type ConsumeOptions,
  type DomainEvent,
  type EventFollower,
  type EventHandler,
  type EventLog,
  type EventReadOptions,
  type EventReadResult,
  type EventSubscription,
  type LoggedEvent,
} from './types.js';
import { assertPublishable, isTruncated, readBounds, redeliveryDelayMs } from './validate.js';

export interface JetStreamEventLogOptions {
  /** KEY_PREFIX: subjects are `<prefix>.events.<org>.<type>`, the stream `<PREFIX>_EVENTS`. */
  prefix: string;
  /** How long events are kept whatever the consumers did (default 7 days). */
  maxAgeMs?: number;
  /** Stream replicas: 3 on a NATS cluster for durability against a lost server (default 1). */
  replicas?: number;
  /** A message not acknowledged (nor marked in progress) for this long is redelivered (default 30 s). */
  ackWaitMs?: number;
  /** How long `publish` keeps retrying through a NATS outage before rejecting (default 10 s). */
  publishTimeoutMs?: number;
  /** How long one `read` may take (stream info, consumer, fetches) before it rejects (default 10 s). */
  readTimeoutMs?: number;
  log?: Logger;
}

/**
 * The clustered mode's event log: a JetStream stream with file storage and
 * durable pull consumers.
 *
 * `publish` resolves on the stream's acknowledgement; it retries through a
 * short outage with the event id as `Nats-Msg-Id`, so the stream's duplicate
 * window drops the copy of a publish whose first ack was lost. Handlers are
 * heartbeated (`working()`) while they run, so a slow handler is not
 * redelivered; a node that dies stops heartbeating and its unacknowledged
 * events go to another node after the ack wait.
 *
 * The read side (`follow`, `read`) uses ordered consumers: ephemeral,
 * memory-only, no acks, recreated by the client from the last stream sequence
 * seen when a delivery gap, a reconnect or a lost consumer shows up.
 *
 * Guarantees:
 * - `seq` is the stream sequence: increasing over the whole stream; one
 *   organization's events skip the numbers of the others'.
 * - `follow` passes every event after its `startSeq` in seq order, none
 *   twice, across NATS reconnects and nats-server restarts (the ordered
 *   consumer resumes from the last seq seen; if it gives up, a new one is
 *   started from there). Every `follow` of one log shares one ordered
 *   consumer, so a node reads each event from NATS once however many
 *   follow.
 * - A consumer of several types is one durable consumer per type
 *   (`<name>-<type>`), since nats-server 2.9 filters by one subject.
 * - `read` returns the organization's events in the range in seq order and
 *   never waits for events that do not exist: it stops at `untilSeq`, at the
 *   limit, or when the filtered consumer has nothing pending; it rejects
 *   after `readTimeoutMs`. What is readable is what the stream's max age
 *   keeps.
 */
export class JetStreamEventLog implements EventLog {
  private readonly subscriptions = new Set<JetStreamSubscription>();
  /** The node's one live tail, shared by every `follow`: each event crosses from NATS once, whoever listens. */
  private tail: Promise<JetStreamFollower> | null = null;
  private closed = false;
  readonly stream: string;
  private readonly log: Logger;
  /** Where the stream's acknowledgements of publishes come back (one subscription, no per-publish `Error` objects as nats.js's request makes). */
  private readonly acks: ReplyInbox;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly opts: JetStreamEventLogOptions,
    private readonly ownsConnection: boolean,
  ) {
    this.stream = `${opts.prefix.toUpperCase().replace(/[^A-Z0-9_-]/g, '_')}_EVENTS`;
    this.log = opts.log ?? silentLogger;
    this.acks = new ReplyInbox(nc);
  }

  /** Uses an existing connection (not closed by `close()`). Creates or updates the stream. */
  static async open(nc: NatsConnection, opts: JetStreamEventLogOptions, ownsConnection = false): Promise<JetStreamEventLog> {
    const jsm = await jetstreamManager(nc);
    const l = new JetStreamEventLog(nc, jetstream(nc), jsm, opts, ownsConnection);
    await l.ensureStream();
    return l;
  }

  /** Connects to `servers` (reconnecting forever) and owns that connection. */
  static async connect(servers: string, opts: JetStreamEventLogOptions): Promise<JetStreamEventLog> {
    // noAsyncTraces: otherwise every JetStream API request builds two Error objects up front for their stack traces.
    const nc = await connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 250, name: `${opts.prefix}-events`, noAsyncTraces: true });
    try {
      return await JetStreamEventLog.open(nc, opts, true);
    } catch (e) {
      await nc.close();
      throw e;
    }
  }

  private async ensureStream(): Promise<void> {
    const maxAgeMs = this.opts.maxAgeMs ?? 7 * 24 * 3600_000;
    const cfg: Partial<StreamConfig> & { name: string } = {
      name: this.stream,
      subjects: [`${this.opts.prefix}.events.>`],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: nanos(maxAgeMs),
      // The server refuses a duplicate window longer than the max age.
      duplicate_window: nanos(Math.min(120_000, maxAgeMs)),
      num_replicas: this.opts.replicas ?? 1,
    };
    try {
      await this.jsm.streams.info(this.stream);
    } catch {
      try {
        await this.jsm.streams.add(cfg);
        return;
      } catch (e) {
        // Nodes starting together all find no stream and all add it: the ones that lose find it now.
        await this.jsm.streams.info(this.stream).catch(() => {
          throw e;
        });
      }
    }
    const { name: _name, ...update } = cfg;
    await this.jsm.streams.update(this.stream, update);
  }

  async publish(event: DomainEvent): Promise<void> {
    if (this.closed) throw new Error('event log is closed');
    assertPublishable(event);
    const subject = eventSubject(this.opts.prefix, event);
    const data = JSON.stringify(event);
    const h = headers();
    // The stream drops a second copy of an id within its duplicate window: a retried publish is stored once.
    h.set('Nats-Msg-Id', event.id);
    h.set('Nats-Expected-Stream', this.stream);
    const deadline = Date.now() + (this.opts.publishTimeoutMs ?? 10_000);
    for (let attempt = 1; ; attempt++) {
      const failure = this.stored(await this.acks.attempt(subject, data, 2000, h));
      if (failure === null) return;
      if (this.closed || Date.now() >= deadline) throw failure;
      this.log.debug('event publish failed; retrying', { eventId: event.id, attempt, err: failure });
      await new Promise((r) => setTimeout(r, Math.min(1000, 100 * attempt)));
    }
  }

  /** What a publish attempt's answer says: null when the stream stored the event (or had it already), else why not. */
  private stored(a: Attempt): Error | null {
    if (a.kind === 'timeout') return new Error('the event stream did not acknowledge the publish in time');
    if (a.kind === 'no_responders') return new Error(`no event stream takes ${this.opts.prefix}.events (JetStream unavailable)`);
    if (a.kind === 'failed') return a.error instanceof Error ? a.error : new Error(String(a.error));
    let ack: { stream?: string; error?: { code?: number; description?: string } };
    try {
      ack = a.msg.json();
    } catch {
      return new Error('the event stream answered the publish with something that is not a JetStream acknowledgement');
    }
    if (ack.error !== undefined) return new Error(`the event stream refused the publish: ${ack.error.description ?? 'unknown'} (${ack.error.code ?? '?'})`);
    return ack.stream === this.stream ? null : new Error('the event stream answered the publish with something that is not a JetStream acknowledgement');
  }

  async consume(name: string, handler: EventHandler, options: ConsumeOptions = {}): Promise<EventSubscription> {
    if (this.closed) throw new Error('event log is closed');
    const types = options.types ?? [];
    if (types.length <= 1) {
      const sub = await this.durable(name, consumerFilter(this.opts.prefix, options.organizationId, types[0]), handler, options);
      return { stop: () => this.unsubscribe([sub]) };
    }
    // nats-server 2.9 filters a consumer by one subject: several types are one
    // durable consumer each. A consumer of this name left by an earlier
    // version (every type) would only keep an unread backlog.
    await this.jsm.consumers.delete(this.stream, name).catch(() => false);
    const subs = await Promise.all(types.map((t) => this.durable(`${name}-${t.replace(/\./g, '_')}`, consumerFilter(this.opts.prefix, options.organizationId, t), handler, options)));
    return { stop: () => this.unsubscribe(subs) };
  }

  /** Creates (or updates) one durable consumer and starts pulling from it. */
  private async durable(name: string, filter: string, handler: EventHandler, options: ConsumeOptions): Promise<JetStreamSubscription> {
    const ackWaitMs = this.opts.ackWaitMs ?? 30_000;
    const concurrency = Math.max(1, options.concurrency ?? 16);
    const cfg: Partial<ConsumerConfig> = {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs),
      deliver_policy: DeliverPolicy.All,
      max_ack_pending: 1000,
      max_deliver: -1,
      filter_subject: filter,
    };
    try {
      await this.jsm.consumers.info(this.stream, name);
      const { durable_name: _d, deliver_policy: _p, ...update } = cfg;
      await this.jsm.consumers.update(this.stream, name, update);
    } catch {
      await this.jsm.consumers.add(this.stream, cfg);
    }
    const sub = new JetStreamSubscription(this.js, this.stream, name, handler, concurrency, ackWaitMs, this.log);
    this.subscriptions.add(sub);
    sub.start();
    return sub;
  }

  private async unsubscribe(subs: JetStreamSubscription[]): Promise<void> {
    await Promise.all(subs.map((s) => s.stop()));
    for (const s of subs) this.subscriptions.delete(s);
  }

  private async streamState(): Promise<{ headSeq: number; oldestSeq: number }> {
    const { state } = await this.jsm.streams.info(this.stream);
    return { headSeq: state.last_seq, oldestSeq: state.messages === 0 ? state.last_seq + 1 : state.first_seq };
  }

  async headSeq(): Promise<number> {
    if (this.closed) throw new Error('event log is closed');
    return (await this.streamState()).headSeq;
  }

  async follow(onEvent: (e: LoggedEvent) => void): Promise<EventFollower> {
    for (;;) {
      if (this.closed) throw new Error('event log is closed');
      const tail = await (this.tail ??= this.openTail().catch((e: unknown) => {
        this.tail = null;
        throw e;
      }));
      // The last listener of this tail left while we waited for it: start another.
      if (tail.ended) continue;
      tail.listeners.add(onEvent);
      return {
        // Added in the same turn as this read: every event after it reaches the listener.
        startSeq: tail.position,
        stop: async () => {
          if (!tail.listeners.delete(onEvent) || tail.listeners.size > 0 || tail.ended) return;
          this.tail = null;
          await tail.stop();
        },
      };
    }
  }

  private async openTail(): Promise<JetStreamFollower> {
    const { headSeq } = await this.streamState();
    const follower = new JetStreamFollower(this.nc, this.js, this.stream, `${this.opts.prefix}.events.>`, headSeq, this.log);
    await follower.start();
    return follower;
  }

  async read(organizationId: string, afterSeq: number, opts: EventReadOptions = {}): Promise<EventReadResult> {
    if (this.closed) throw new Error('event log is closed');
    const timeoutMs = this.opts.readTimeoutMs ?? 10_000;
    const deadline = Date.now() + timeoutMs;
    const timedOut = () => new Error(`event log read did not complete within ${timeoutMs} ms`);
    const { headSeq, oldestSeq } = await withDeadline(this.streamState(), deadline, timedOut);
    const { untilSeq, limit } = readBounds(organizationId, afterSeq, opts, headSeq);
    const result: EventReadResult = { events: [], oldestSeq, headSeq, truncated: isTruncated(afterSeq, oldestSeq), more: false };
    if (afterSeq >= untilSeq) return result;
    const consumer = await withDeadline(
      this.js.consumers.get(this.stream, {
        filter_subjects: `${this.opts.prefix}.events.${organizationId}.>`,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: afterSeq + 1,
      }),
      deadline,
      timedOut,
    );
    try {
      // Pending at creation counts the organization's events from afterSeq + 1 to the end of the stream.
      let pending = (await consumer.info(true)).num_pending;
      let lastSeq = afterSeq;
      let done = pending === 0;
      while (!done) {
        const remainingMs = deadline - Date.now();
        if (remainingMs <= 0) throw timedOut();
        // No more than can exist: pending matches, the seqs left in range, one past the limit (to learn `more`).
        const want = Math.min(pending, untilSeq - lastSeq, limit + 1 - result.events.length);
        const batch = await consumer.fetch({ max_messages: want, expires: Math.max(1000, Math.min(5000, remainingMs)) });
        let got = 0;
        for await (const m of batch) {
          got++;
          if (m.seq > untilSeq) {
            done = true;
            break;
          }
          if (result.events.length === limit) {
            result.more = true;
            done = true;
            break;
          }
          lastSeq = m.seq;
          pending = m.info.pending;
          try {
            result.events.push({ seq: m.seq, event: m.json<DomainEvent>() });
          } catch (err) {
            this.log.error('event log read: undecodable message skipped', { seq: m.seq, err });
          }
          if (pending === 0 || lastSeq >= untilSeq) {
            done = true;
            break;
          }
        }
        if (got === 0 && !done) {
          // `pending` said more was there and nothing came: retention (max age or size) dropped them
          // meanwhile. Ask again rather than wait for them to the deadline; the reader learns it was cut.
          pending = (await withDeadline(consumer.info(), deadline, timedOut)).num_pending;
          if (pending === 0) {
            const { oldestSeq: nowOldest } = await withDeadline(this.streamState(), deadline, timedOut);
            result.oldestSeq = Math.max(result.oldestSeq, nowOldest);
            result.truncated ||= isTruncated(lastSeq, nowOldest);
            done = true;
          } else if (Date.now() >= deadline) throw timedOut();
        }
      }
    } finally {
      // Ephemeral anyway (inactive threshold); deleting it now spares the server.
      consumer.delete().catch(() => {});
    }
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const tail = await this.tail?.catch(() => null);
    this.tail = null;
    await tail?.stop();
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    this.subscriptions.clear();
    this.acks.close();
    if (this.ownsConnection) await this.nc.close();
  }
}

class JetStreamSubscription {
  private messages: ConsumerMessages | null = null;
  private stopped = false;
  private running = 0;
  private slotFreed: (() => void) | null = null;
  private loop: Promise<void> = Promise.resolve();
  /** Handled messages whose acks go out together at the end of this turn of the event loop. */
  private acks: JsMsg[] = [];

  constructor(
    private readonly js: JetStreamClient,
    private readonly stream: string,
    private readonly name: string,
    private readonly handler: EventHandler,
    private readonly concurrency: number,
    private readonly ackWaitMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const consumer = await this.js.consumers.get(this.stream, this.name);
        this.messages = await consumer.consume({ max_messages: this.concurrency * 2 });
        // stop() ran while the consumer was being reached: it found nothing to close.
        // (Not awaited: a consume closed this early can leave that promise pending for a long time.)
        if (this.stopped) {
          this.messages.close().catch(() => {});
          break;
        }
        for await (const m of this.messages) {
          while (this.running >= this.concurrency && !this.stopped) await new Promise<void>((r) => { this.slotFreed = r; });
          if (this.stopped) {
            // Not acknowledged: JetStream redelivers it after the ack wait.
            break;
          }
          this.handle(m);
        }
      } catch (e) {
        if (this.stopped) break;
        this.log.warn('event consumer interrupted; resuming', { consumer: this.name, err: e });
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, 500));
    }
  }

  private handle(m: JsMsg): void {
    let event: DomainEvent;
    try {
      event = m.json<DomainEvent>();
    } catch (e) {
      this.log.error('event consumer: undecodable message terminated', { consumer: this.name, seq: m.seq, err: e });
      m.term('undecodable');
      return;
    }
    this.running++;
    const heartbeat = setInterval(() => m.working(), Math.max(1000, Math.floor(this.ackWaitMs / 3)));
    const deliveryCount = m.info.deliveryCount;
    let result: Promise<void>;
    try {
      result = this.handler(event, { seq: m.seq, deliveryCount });
    } catch (e) {
      result = Promise.reject(e);
    }
    result
      .then(
        () => this.ackSoon(m),
        (err: unknown) => {
          const delay = redeliveryDelayMs(deliveryCount);
          this.log.warn('event handler failed; redelivering', { consumer: this.name, seq: m.seq, eventId: event.id, deliveryCount, delayMs: delay, err });
          m.nak(delay);
        },
      )
      .finally(() => {
        clearInterval(heartbeat);
        this.running--;
        const r = this.slotFreed;
        this.slotFreed = null;
        r?.();
      });
  }

  /**
   * Handlers finish one by one, and the NATS client writes what was queued in
   * one microtask: acking each at once is one socket write per event. Acks
   * queued until `setImmediate` leave in one write per turn, at most one turn
   * later (no ack is lost by it: an unsent ack is a redelivery after the ack
   * wait, which handlers already allow for).
   */
  private ackSoon(m: JsMsg): void {
    if (this.acks.push(m) === 1) setImmediate(() => this.flushAcks());
  }

  private flushAcks(): void {
    const acks = this.acks;
    this.acks = [];
    for (const m of acks) m.ack();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const r = this.slotFreed;
    this.slotFreed = null;
    r?.();
    try {
      await this.messages?.close();
    } catch {
      // already closed
    }
    await this.loop;
    while (this.running > 0) await new Promise((r2) => setTimeout(r2, 10));
    this.flushAcks();
  }
}

/** Rejects with `onTimeout()` once `deadline` passes before `p` settles. */
async function withDeadline<T>(p: Promise<T>, deadline: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([p, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One live tail: an ordered consumer over the whole stream from `startSeq + 1`.
 *
 * The client library can recreate an ordered consumer by itself, but after a
 * nats-server restart its pull accounting may stall delivery until heartbeats
 * are missed (tens of seconds). So the follower starts a fresh ordered
 * consumer from the last seq seen whenever the connection reconnects, the
 * consumer reports missed heartbeats or loss, or its iterator ends. Messages
 * at or below the last seq seen are dropped, so an overlap never delivers an
 * event twice, and a new consumer starting at last seq + 1 never skips one.
 */
class JetStreamFollower {
  /** Who hears each event, in seq order; one that throws does not keep it from the others. */
  readonly listeners = new Set<(e: LoggedEvent) => void>();
  private lastSeq: number;
  private messages: ConsumerMessages | null = null;
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private wake: (() => void) | null = null;
  private connectionStatus: (AsyncIterable<Status> & { stop?: () => void }) | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly stream: string,
    private readonly subject: string,
    startSeq: number,
    private readonly log: Logger,
  ) {
    this.lastSeq = startSeq;
  }

  /** Starts the first consumer (so `follow` rejects when JetStream cannot), then watches it. */
  async start(): Promise<void> {
    await this.open();
    this.loop = this.run();
    this.watchConnection().catch((err: unknown) => this.log.warn('event follower: connection watch ended', { err }));
  }

  private async watchConnection(): Promise<void> {
    const status = this.nc.status() as AsyncIterable<Status> & { stop?: () => void };
    this.connectionStatus = status;
    for await (const s of status) {
      if (this.stopped) break;
      if (s.type === 'reconnect') this.recycle('reconnect');
    }
  }

  /** Ends the current ordered consumer; the run loop starts a new one from the last seq seen. */
  private recycle(reason: string): void {
    const messages = this.messages;
    if (messages === null || this.stopped) return;
    this.log.info('event follower: restarting its ordered consumer', { reason, lastSeq: this.lastSeq });
    messages.close().catch(() => {});
  }

  private async watchConsumer(messages: ConsumerMessages): Promise<void> {
    for await (const s of messages.status()) {
      if (this.messages !== messages) break;
      if (s.type === 'heartbeats_missed' || s.type === 'consumer_not_found' || s.type === 'consumer_deleted') this.recycle(s.type);
    }
  }

  private async open(): Promise<void> {
    const consumer = await this.js.consumers.get(this.stream, {
      filter_subjects: this.subject,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.lastSeq + 1,
    });
    const messages = await consumer.consume({ callback: (m) => this.deliver(m) });
    if (this.stopped) {
      // stop() ran while this consumer was being created.
      await messages.close();
      return;
    }
    this.messages = messages;
    this.watchConsumer(messages).catch(() => {});
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      if (this.messages !== null) {
        const err = await this.messages.closed();
        this.messages = null;
        if (this.stopped) break;
        if (err) this.log.warn('event follower: ordered consumer ended; recreating it', { lastSeq: this.lastSeq, err });
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(2000, 100 * 2 ** failures));
        this.wake = () => { clearTimeout(t); r(); };
      });
      this.wake = null;
      if (this.stopped) break;
      try {
        await this.open();
        failures = 0;
      } catch (err) {
        failures++;
        if (!this.stopped) this.log.warn('event follower: recreating the ordered consumer failed; retrying', { lastSeq: this.lastSeq, err });
      }
    }
  }

  /** The last seq passed on (the start seq before any). */
  get position(): number {
    return this.lastSeq;
  }

  private deliver(m: JsMsg): void {
    if (this.stopped || m.seq <= this.lastSeq) return;
    this.lastSeq = m.seq;
    let event: DomainEvent;
    try {
      event = m.json<DomainEvent>();
    } catch (err) {
      this.log.error('event follower: undecodable message skipped', { seq: m.seq, err });
      return;
    }
    for (const l of this.listeners) {
      try {
        l({ seq: m.seq, event });
      } catch (err) {
        this.log.error('event follower threw; it keeps following', { seq: m.seq, err });
      }
    }
  }

  /** Stopped (its last listener left, or the log closed): it takes no more listeners. */
  get ended(): boolean {
    return this.stopped;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    this.connectionStatus?.stop?.();
    const messages = this.messages;
    try {
      await messages?.close();
    } catch {
      // already closed
    }
    await this.loop;
  }
}

/** The subjects a consumer takes (an event's is `<prefix>.events.<org>.<type>`, a type's dots being tokens too). */
function consumerFilter(prefix: string, organizationId: string | undefined, type: string | undefined): string {
  if (type !== undefined) return `${prefix}.events.${organizationId ?? '*'}.${type}`;
  return organizationId === undefined ? `${prefix}.events.>` : `${prefix}.events.${organizationId}.>`;
}
