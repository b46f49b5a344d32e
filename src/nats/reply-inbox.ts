import { createInbox, type MsgHdrs, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/** How one request ended: its reply, no reply in time, nobody subscribed, or the publish failed. */
export type Attempt = { kind: 'reply'; msg: Msg } | { kind: 'timeout' } | { kind: 'no_responders' } | { kind: 'failed'; error: unknown };

/**
 * Request/reply over one wildcard inbox subscription, like nats.js's own
 * multiplexed `request`, minus its per-request `Error` objects (built for
 * async stack traces, and once more on every successful reply): those were
 * the largest single CPU cost of an actor command. Attempts resolve, never
 * reject; `close` ends the ones waiting as failed.
 */
export class ReplyInbox {
  private readonly prefix: string;
  private readonly pending = new Map<string, { subject: string; resolve: (a: Attempt) => void; timer: ReturnType<typeof setTimeout> }>();
  private readonly sub: Subscription;
  private seq = 0;

  constructor(private readonly nc: NatsConnection) {
    this.prefix = createInbox() + '.';
    this.sub = nc.subscribe(this.prefix + '*', {
      callback: (_err, msg) => {
        const id = msg.subject.slice(this.prefix.length);
        const p = this.pending.get(id);
        if (p === undefined) return; // late reply of an attempt that timed out
        this.pending.delete(id);
        clearTimeout(p.timer);
        // The server answers a request nobody subscribes to with an empty 503 status message.
        if (msg.data.length === 0 && msg.headers?.code === 503) p.resolve({ kind: 'no_responders' });
        else p.resolve({ kind: 'reply', msg });
      },
    });
  }

  attempt(subject: string, payload: Uint8Array | string, timeoutMs: number, headers?: MsgHdrs): Promise<Attempt> {
    const id = (++this.seq).toString(36);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ kind: 'timeout' });
      }, timeoutMs);
      this.pending.set(id, { subject, resolve, timer });
      try {
        this.nc.publish(subject, payload, headers === undefined ? { reply: this.prefix + id } : { reply: this.prefix + id, headers });
      } catch (error) {
        this.pending.delete(id);
        clearTimeout(timer);
        resolve({ kind: 'failed', error });
      }
    });
  }

  /** Ends the waiting attempts to these subjects as if nobody had been there: their owner is gone, the sender retries at once. */
  abandon(subjects: ReadonlySet<string>): void {
    for (const [id, p] of this.pending) {
      if (!subjects.has(p.subject)) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.resolve({ kind: 'no_responders' });
    }
  }

  close(): void {
    this.sub.unsubscribe();
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.resolve({ kind: 'failed', error: new Error('reply inbox closed') });
    }
    this.pending.clear();
  }
}
