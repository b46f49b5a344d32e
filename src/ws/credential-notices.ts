import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { CredentialChange } from '../domain/credential-change.js';
import type { Logger } from '../log.js';

/**
 * Carries "this user's credentials changed" to every node, so each re-checks
 * the inbox sockets it holds for that user: the in-process bus embedded, a
 * NATS core subject clustered. At most once: a lost notice is made good by
 * the sockets' periodic re-check and by the re-check before every command.
 */
export interface CredentialNotices {
  publish(change: CredentialChange): void;
  subscribe(handler: (change: CredentialChange) => void): void;
  close(): Promise<void>;
}

export class InProcessCredentialNotices implements CredentialNotices {
  private readonly handlers: ((change: CredentialChange) => void)[] = [];
  publish(change: CredentialChange): void {
    for (const h of this.handlers) h(change);
  }
  subscribe(handler: (change: CredentialChange) => void): void {
    this.handlers.push(handler);
  }
  async close(): Promise<void> {}
}

/** `<prefix>.inbox.credentials`: every node listens, the node making the change included. */
export class NatsCredentialNotices implements CredentialNotices {
  private readonly subs: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  private get subject(): string {
    return `${this.prefix}.inbox.credentials`;
  }

  publish(change: CredentialChange): void {
    try {
      this.nc.publish(this.subject, JSON.stringify({ organizationId: change.organizationId, userId: change.userId }));
    } catch (err) {
      this.log.warn('inbox: could not announce a credential change; other nodes see it at their next re-check', { err });
    }
  }

  subscribe(handler: (change: CredentialChange) => void): void {
    const sub = this.nc.subscribe(this.subject);
    this.subs.push(sub);
    void (async () => {
      for await (const m of sub) {
        try {
          const c = m.json<CredentialChange>();
          if (typeof c.organizationId === 'string' && typeof c.userId === 'string') handler({ organizationId: c.organizationId, userId: c.userId });
        } catch (err) {
          this.log.warn('inbox: bad credential notice dropped', { err });
        }
      }
    })();
  }

  async close(): Promise<void> {
    for (const s of this.subs) s.unsubscribe();
  }
}
