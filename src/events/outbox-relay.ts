import type { Logger } from '../log.js';
import type { OutboxRepo } from '../store/core/port.js';
import type { EventPublisher } from './types.js';

export interface OutboxRelayOptions {
  /** Names this node in the per-organization relay lease. */
  owner: string;
  /** How often every organization with pending entries is looked at (default 1 s): picks up what a dead node left. */
  sweepMs?: number;
  /** Relay lease per organization (default 10 s): how long a dead node's entries wait at most for another node. */
  leaseMs?: number;
  /** Entries published per round (default 100). */
  batch?: number;
}

/**
 * Moves events from the store's outbox (written atomically with the change
 * that caused them) to the event log, after the operation was answered.
 *
 * `kick(org)` relays at once after a local commit; a periodic sweep relays
 * any organization with entries left, e.g. by a node that died between its
 * commit and its relay. An entry is removed only after `publish` resolved, so
 * a crash in between publishes it again with the same event id: at least
 * once, and duplicates are dropped by JetStream (Nats-Msg-Id) or by webhook
 * receivers (webhook-id).
 */
export class OutboxRelay {
  private readonly dirty = new Set<string>();
  /** Organizations whose lease this relay holds, with when it lapses (local clock). */
  private readonly leases = new Map<string, number>();
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly outbox: OutboxRepo,
    private readonly events: EventPublisher,
    private readonly log: Logger,
    private readonly opts: OutboxRelayOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.opts.sweepMs ?? 1000);
    this.timer.unref();
    void this.sweep();
  }

  /** Relays the organization's outbox soon (no waiting for the sweep). */
  kick(organizationId: string): void {
    if (this.stopped) return;
    this.dirty.add(organizationId);
    this.running ??= this.drain().finally(() => {
      this.running = null;
      // Kicked while the last round was finishing: go again.
      if (this.dirty.size > 0) this.kick([...this.dirty][0]!);
    });
  }

  /** Resolves once everything kicked so far was relayed (or failed and awaits the sweep). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops relaying; what is left stays in the outbox for the next start or another node. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.dirty.clear();
    await this.idle();
  }

  private async sweep(): Promise<void> {
    try {
      for (const org of await this.outbox.pendingOrganizations()) this.kick(org);
    } catch (err) {
      this.log.warn('outbox sweep failed', { err });
    }
  }

  private async drain(): Promise<void> {
    try {
      while (this.dirty.size > 0 && !this.stopped) {
        const org = [...this.dirty][0]!;
        this.dirty.delete(org);
        try {
          await this.relayOrg(org);
        } catch (err) {
          // Left in the outbox; the sweep retries.
          this.log.warn('outbox relay failed; the sweep retries', { organizationId: org, err });
        }
      }
    } finally {
      // Leases are kept while kicks keep coming (under load one claim serves
      // many rounds) and handed back once idle, so other nodes' commits to
      // the same organization are not left waiting for the lease to lapse.
      const held = [...this.leases.keys()];
      this.leases.clear();
      await Promise.all(held.map((org) => this.outbox.release(org, this.opts.owner).catch(() => {})));
    }
  }

  /** Holds the organization's lease, claiming (or extending) it when less than half its time is left. */
  private async lease(org: string): Promise<boolean> {
    const { owner, leaseMs = 10_000 } = this.opts;
    const until = this.leases.get(org);
    if (until !== undefined && until - Date.now() > leaseMs / 2) return true;
    const start = Date.now();
    if (!(await this.outbox.claim(org, owner, leaseMs))) {
      this.leases.delete(org);
      return false;
    }
    this.leases.set(org, start + leaseMs);
    return true;
  }

  private async relayOrg(org: string): Promise<void> {
    const batch = this.opts.batch ?? 100;
    for (;;) {
      // Another node holds the lease: it relays this organization (or its lease lapses and the sweep gets here again).
      if (this.stopped || !(await this.lease(org))) return;
      const entries = await this.outbox.peek(org, batch);
      if (entries.length === 0) return;
      // One round's events are published concurrently (their order in the
      // log is not kept, as with concurrent requests); a failed one stays
      // in the outbox while the ones that made it are removed.
      const results = await Promise.allSettled(entries.map((e) => this.events.publish(e.event)));
      const done = entries.filter((_, i) => results[i]!.status === 'fulfilled').map((e) => e.handle);
      await this.outbox.remove(org, done);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      // A short round emptied the outbox; whatever is committed after it kicks us again.
      if (entries.length < batch) return;
    }
  }
}
