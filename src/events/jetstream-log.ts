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
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { silentLogger, type Logger } from '../log.js';
import { eventSubject, type ConsumeOptions, type DomainEvent, type EventHandler, type EventLog, type EventSubscription } from './types.js';
import { assertPublishable, redeliveryDelayMs } from './validate.js';

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
 */
export class JetStreamEventLog implements EventLog {
  private readonly subscriptions = new Set<JetStreamSubscription>();
  private closed = false;
  readonly stream: string;
  private readonly log: Logger;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly opts: JetStreamEventLogOptions,
    private readonly ownsConnection: boolean,
  ) {
    this.stream = `${opts.prefix.toUpperCase().replace(/[^A-Z0-9_-]/g, '_')}_EVENTS`;
    this.log = opts.log ?? silentLogger;
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
    // noAsyncTraces: otherwise every publish (a JetStream request) builds two Error objects up front for their stack traces.
    const nc = await connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 250, name: `${opts.prefix}-events`, noAsyncTraces: true });
    try {
      return await JetStreamEventLog.open(nc, opts, true);
    } catch (e) {
      await nc.close();
      throw e;
    }
  }

  private async ensureStream(): Promise<void> {
    const cfg: Partial<StreamConfig> & { name: string } = {
      name: this.stream,
      subjects: [`${this.opts.prefix}.events.>`],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: nanos(this.opts.maxAgeMs ?? 7 * 24 * 3600_000),
      duplicate_window: nanos(120_000),
      num_replicas: this.opts.replicas ?? 1,
    };
    try {
      await this.jsm.streams.info(this.stream);
    } catch {
      await this.jsm.streams.add(cfg);
      return;
    }
    const { name: _name, ...update } = cfg;
    await this.jsm.streams.update(this.stream, update);
  }

  async publish(event: DomainEvent): Promise<void> {
    if (this.closed) throw new Error('event log is closed');
    assertPublishable(event);
    const subject = eventSubject(this.opts.prefix, event);
    const data = JSON.stringify(event);
    const deadline = Date.now() + (this.opts.publishTimeoutMs ?? 10_000);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.js.publish(subject, data, { msgID: event.id, timeout: 2000, expect: { streamName: this.stream } });
        return;
      } catch (e) {
        if (this.closed || Date.now() >= deadline) throw e;
        this.log.debug('event publish failed; retrying', { eventId: event.id, attempt, err: e });
        await new Promise((r) => setTimeout(r, Math.min(1000, 100 * attempt)));
      }
    }
  }

  async consume(name: string, handler: EventHandler, options: ConsumeOptions = {}): Promise<EventSubscription> {
    if (this.closed) throw new Error('event log is closed');
    const ackWaitMs = this.opts.ackWaitMs ?? 30_000;
    const concurrency = Math.max(1, options.concurrency ?? 16);
    const cfg: Partial<ConsumerConfig> = {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs),
      deliver_policy: DeliverPolicy.All,
      max_ack_pending: 1000,
      max_deliver: -1,
      filter_subject: options.organizationId === undefined ? `${this.opts.prefix}.events.>` : `${this.opts.prefix}.events.${options.organizationId}.>`,
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
    return {
      stop: async () => {
        await sub.stop();
        this.subscriptions.delete(sub);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    this.subscriptions.clear();
    if (this.ownsConnection) await this.nc.close();
  }
}

class JetStreamSubscription {
  private messages: ConsumerMessages | null = null;
  private stopped = false;
  private running = 0;
  private slotFreed: (() => void) | null = null;
  private loop: Promise<void> = Promise.resolve();

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
        () => m.ack(),
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
  }
}
