import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { ReplyInbox } from '../nats/index.js';
import { isAppError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { actorUnavailable, fromWireError, ROUTING_RETRY_CODES, toWireError, type WireError } from './errors.js';
import type { ActorHost } from './host.js';
import type { ActorTransport } from './transport.js';
import type { Envelope } from './types.js';

export interface NatsActorTransportOptions {
  nc: NatsConnection;
  /** Subject prefix (`KEY_PREFIX`): commands go to `<prefix>.actors.p.<n>`. */
  prefix: string;
  host: ActorHost;
  /** One attempt's wait for a reply; longer than the slowest command. */
  attemptTimeoutMs: number;
  log?: Logger;
}

type WireReply = { ok: true; reply?: unknown } | { ok: false; error: WireError };

/**
 * After this node's own NATS connection dropped or came back, its probes say
 * nothing for this long: the other nodes are reconnecting too (a NATS server
 * restart drops everyone; nats.js waits about 2 s between attempts), and one
 * that is back a little later than us is not dead.
 */
const PROBE_QUIET_AFTER_RECONNECT_MS = 5_000;

/** A command that got no answer within its deadline, here or over NATS. */
const noAnswerInTime = () => actorUnavailable('no node answered for this conversation in time; retry with the same idempotency key');

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Commands as NATS requests to the subject of the actor's partition. Only the
 * partition's owner subscribes there (a plain subscription, not a queue
 * group: during a takeover a stale owner may still be subscribed for a
 * moment, and the real owner must see every request regardless; the stale
 * one's writes are fenced).
 *
 * The sender retries, within its deadline, whenever nobody could have applied
 * the command yet or a repeat is harmless: no responders (the partition is
 * between owners), a routing refusal from a node that no longer owns it, a
 * publish that failed (connection lost), and a timed-out attempt (safe
 * because every envelope has an idempotency key).
 *
 * A command for a partition this node listens on (owns) is handed to its
 * host directly, as the subscription would, without the round trip through
 * the server; a routing refusal there (the lease was lost meanwhile) sends
 * it over NATS to whoever owns it now.
 */
export class NatsActorTransport implements ActorTransport {
  private readonly subs = new Map<number, Subscription>();
  private readonly log: Logger;
  private placementSub: Subscription | null = null;
  private readonly placementCbs: (() => void)[] = [];

  private readonly inbox: ReplyInbox;

  private readonly freedSub: Subscription;
  /** `performance.now()` before which probes answer `unknown` (see PROBE_QUIET_AFTER_RECONNECT_MS). */
  private probesQuietUntil = 0;

  constructor(private readonly opts: NatsActorTransportOptions) {
    this.log = opts.log ?? silentLogger;
    this.inbox = new ReplyInbox(opts.nc);
    // Requests waiting on an evicted node's partitions would wait out the attempt timeout; retry them now.
    this.freedSub = opts.nc.subscribe(`${opts.prefix}.actors.freed`, {
      callback: (_err, msg) => {
        try {
          const partitions = JSON.parse(dec.decode(msg.data)) as number[];
          this.inbox.abandon(new Set(partitions.map((p) => this.subject(p))));
        } catch (e) {
          this.log.warn('malformed partitions-freed notice', { err: e });
        }
      },
    });
    void (async () => {
      for await (const s of opts.nc.status()) {
        if (s.type === 'disconnect' || s.type === 'reconnecting' || s.type === 'reconnect') this.probesQuietUntil = performance.now() + PROBE_QUIET_AFTER_RECONNECT_MS;
      }
    })().catch(() => {});
  }

  /** Tells every node (this one too) that these partitions' owner was evicted: attempts waiting on it are retried at once. */
  announceFreed(partitions: readonly number[]): void {
    try {
      this.opts.nc.publish(`${this.opts.prefix}.actors.freed`, enc.encode(JSON.stringify(partitions)));
    } catch (e) {
      this.log.warn('could not announce freed partitions', { err: e });
    }
  }

  subject(partition: number): string {
    return `${this.opts.prefix}.actors.p.${partition}`;
  }

  private get placementSubject(): string {
    return `${this.opts.prefix}.actors.placement`;
  }

  /** Where a node answers liveness probes (its id hex-encoded: any id makes one subject token). */
  private aliveSubject(nodeId: string): string {
    return `${this.opts.prefix}.actors.alive.${Buffer.from(nodeId).toString('hex')}`;
  }

  private aliveSub: Subscription | null = null;

  async answerProbes(nodeId: string): Promise<void> {
    if (this.aliveSub !== null) return;
    const yes = enc.encode('1');
    this.aliveSub = this.opts.nc.subscribe(this.aliveSubject(nodeId), { callback: (_err, msg) => void msg.respond(yes) });
    await this.opts.nc.flush();
  }

  /**
   * `gone` only when NATS itself says nobody subscribes to the node's probe
   * subject: the server drops a connection's subscriptions when the
   * connection closes (a killed process's socket is closed by its kernel).
   * A slow or paused node still has its subscription: its probe times out
   * (`unknown`), it is never reported gone.
   */
  async probe(nodeId: string, timeoutMs: number): Promise<'alive' | 'gone' | 'unknown'> {
    if (performance.now() < this.probesQuietUntil) return 'unknown';
    const a = await this.inbox.attempt(this.aliveSubject(nodeId), new Uint8Array(0), timeoutMs);
    if (a.kind === 'reply') return 'alive';
    // Our own connection may have dropped while the probe was out.
    return a.kind === 'no_responders' && performance.now() >= this.probesQuietUntil ? 'gone' : 'unknown';
  }

  async send(envelope: Envelope, timeoutMs: number): Promise<unknown> {
    const { host, attemptTimeoutMs } = this.opts;
    const partition = host.partitionOf(envelope);
    const deadline = performance.now() + timeoutMs;
    if (this.subs.has(partition)) {
      const here = await this.deliverHere(envelope, timeoutMs);
      if (here.delivered) return here.reply;
    }
    const subject = this.subject(partition);
    const payload = enc.encode(JSON.stringify(envelope));
    let backoff = 10;
    let last = '';
    for (;;) {
      const remaining = Math.floor(deadline - performance.now());
      if (remaining <= 0) break;
      const a = await this.inbox.attempt(subject, payload, Math.max(1, Math.min(attemptTimeoutMs, remaining)));
      if (a.kind === 'reply') {
        const r = JSON.parse(dec.decode(a.msg.data)) as WireReply;
        if (r.ok) return r.reply;
        const err = fromWireError(r.error);
        if (!ROUTING_RETRY_CODES.has(err.code)) throw err;
        last = err.code;
      } else if (a.kind === 'timeout') {
        // The attempt already waited; the repeat is answered from the idempotency record if it was applied.
        last = 'timeout';
        backoff = 10;
        continue;
      } else {
        last = a.kind === 'failed' ? String(a.error) : a.kind;
      }
      await new Promise((r) => setTimeout(r, Math.min(backoff, Math.max(0, deadline - performance.now()))));
      backoff = Math.min(backoff * 2, 250);
    }
    this.log.warn('actor command timed out', { actor: envelope.type, key: envelope.key, last });
    throw noAnswerInTime();
  }

  /** The host's answer, or `delivered: false` when it does not own the partition after all. */
  private async deliverHere(envelope: Envelope, timeoutMs: number): Promise<{ delivered: true; reply: unknown } | { delivered: false }> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(noAnswerInTime()), timeoutMs);
    });
    try {
      return { delivered: true, reply: await Promise.race([this.opts.host.deliver(envelope), late]) };
    } catch (e) {
      if (isAppError(e) && ROUTING_RETRY_CODES.has(e.code)) return { delivered: false };
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  async listen(partition: number): Promise<void> {
    if (this.subs.has(partition)) return;
    const sub = this.opts.nc.subscribe(this.subject(partition), { callback: (err, msg) => (err ? this.log.warn('subscription error', { err }) : this.handle(msg)) });
    this.subs.set(partition, sub);
    // The subscription must be registered on the server before we count as listening.
    await this.opts.nc.flush();
  }

  async unlisten(partition: number): Promise<void> {
    const sub = this.subs.get(partition);
    if (sub === undefined) return;
    this.subs.delete(partition);
    // drain: messages already delivered to us are still handled (and answered).
    await sub.drain().catch(() => sub.unsubscribe());
  }

  private handle(msg: Msg): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(dec.decode(msg.data)) as Envelope;
      if (typeof envelope.type !== 'string' || typeof envelope.key !== 'string') throw new Error('bad envelope');
    } catch (e) {
      this.log.warn('malformed actor request', { err: e });
      msg.respond(enc.encode(JSON.stringify({ ok: false, error: { status: 400, code: 'bad_request', message: 'malformed actor request' } })));
      return;
    }
    this.opts.host.deliver(envelope).then(
      (reply) => msg.respond(enc.encode(JSON.stringify({ ok: true, reply }))),
      (e: unknown) => {
        if (!isAppError(e)) this.log.error('actor command failed', { actor: envelope.type, key: envelope.key, err: e });
        msg.respond(enc.encode(JSON.stringify({ ok: false, error: toWireError(e) })));
      },
    );
  }

  announcePlacementChange(): void {
    try {
      this.opts.nc.publish(this.placementSubject);
    } catch (e) {
      this.log.warn('could not announce a placement change', { err: e });
    }
  }

  onPlacementChange(cb: () => void): void {
    this.placementCbs.push(cb);
    if (this.placementSub === null) {
      this.placementSub = this.opts.nc.subscribe(this.placementSubject, {
        callback: () => {
          for (const f of this.placementCbs) f();
        },
      });
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.subs.keys()].map((p) => this.unlisten(p)));
    this.placementSub?.unsubscribe();
    this.placementSub = null;
    this.aliveSub?.unsubscribe();
    this.aliveSub = null;
    this.freedSub.unsubscribe();
    this.inbox.close();
  }
}
