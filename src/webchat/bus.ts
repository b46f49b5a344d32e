import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log.js';

/** A web chat notice every node hears: a visitor's (or a whole channel's) tokens were revoked. */
export interface VisitorNotice {
  type: 'revoked';
  organizationId: string;
  channelId: string;
  /** Null: every visitor of the channel. */
  audienceExternalId: string | null;
}

/** Carries notices to every node (best effort, at most once): in process embedded, NATS core clustered. */
export interface VisitorNoticeBus {
  publish(n: VisitorNotice): void;
  subscribe(handler: (n: VisitorNotice) => void): void;
  close(): Promise<void>;
}

export class InProcessVisitorNoticeBus implements VisitorNoticeBus {
  private readonly handlers: ((n: VisitorNotice) => void)[] = [];
  publish(n: VisitorNotice): void {
    for (const h of this.handlers) h(n);
  }
  subscribe(handler: (n: VisitorNotice) => void): void {
    this.handlers.push(handler);
  }
  async close(): Promise<void> {}
}

/** `<prefix>.webchat.notices`: every node listens. */
export class NatsVisitorNoticeBus implements VisitorNoticeBus {
  private readonly subs: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  publish(n: VisitorNotice): void {
    try {
      this.nc.publish(`${this.prefix}.webchat.notices`, JSON.stringify(n));
    } catch (err) {
      // The sockets of a revoked visitor are also found by their periodic token check.
      this.log.warn('webchat: notice publish failed', { err });
    }
  }

  subscribe(handler: (n: VisitorNotice) => void): void {
    const sub = this.nc.subscribe(`${this.prefix}.webchat.notices`);
    this.subs.push(sub);
    void (async () => {
      for await (const m of sub) {
        try {
          handler(m.json<VisitorNotice>());
        } catch (err) {
          this.log.warn('webchat: bad notice dropped', { err });
        }
      }
    })();
  }

  async close(): Promise<void> {
    for (const s of this.subs) s.unsubscribe();
  }
}
