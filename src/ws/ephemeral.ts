import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log.js';

/** A frame for the other agents of an organization that is relayed, never stored: presence and typing. */
export type EphemeralFrame =
  | { type: 'presence'; userId: string; status: 'online' | 'away' | 'offline' }
  | { type: 'typing'; userId: string; conversationId: string };

export interface EphemeralMessage {
  organizationId: string;
  frame: EphemeralFrame;
}

/**
 * Carries ephemeral frames to every node (best effort, at most once): the
 * in-process bus in embedded mode, NATS core subjects clustered.
 */
export interface EphemeralBus {
  publish(msg: EphemeralMessage): void;
  subscribe(handler: (msg: EphemeralMessage) => void): void;
  close(): Promise<void>;
}

export class InProcessEphemeralBus implements EphemeralBus {
  private readonly handlers: ((msg: EphemeralMessage) => void)[] = [];
  publish(msg: EphemeralMessage): void {
    for (const h of this.handlers) h(msg);
  }
  subscribe(handler: (msg: EphemeralMessage) => void): void {
    this.handlers.push(handler);
  }
  async close(): Promise<void> {}
}

/** `<prefix>.inbox.ephemeral.<org>`: each organization on its own subject, every node listening to all. */
export class NatsEphemeralBus implements EphemeralBus {
  private readonly subs: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  publish(msg: EphemeralMessage): void {
    try {
      this.nc.publish(`${this.prefix}.inbox.ephemeral.${msg.organizationId}`, JSON.stringify(msg));
    } catch (err) {
      // Presence and typing are best effort: a lost one is refreshed or simply not shown.
      this.log.debug('inbox: ephemeral publish failed', { err });
    }
  }

  subscribe(handler: (msg: EphemeralMessage) => void): void {
    const sub = this.nc.subscribe(`${this.prefix}.inbox.ephemeral.>`);
    this.subs.push(sub);
    void (async () => {
      for await (const m of sub) {
        try {
          handler(m.json<EphemeralMessage>());
        } catch (err) {
          this.log.warn('inbox: bad ephemeral message dropped', { err });
        }
      }
    })();
  }

  async close(): Promise<void> {
    for (const s of this.subs) s.unsubscribe();
  }
}

type Status = 'online' | 'away';

/**
 * Who is online, per organization, as every node sees it: this node's
 * connected users (exact) and the others' (from the bus, refreshed every
 * `refreshMs`, forgotten — and announced offline — after three missed refreshes).
 */
export class PresenceBoard {
  /** org → user → sockets on this node and their chosen status. */
  private readonly local = new Map<string, Map<string, { sockets: number; status: Status }>>();
  /** org → user → last status heard from any node, and when. */
  private readonly known = new Map<string, Map<string, { status: Status; at: number }>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly bus: EphemeralBus,
    private readonly onFrame: (organizationId: string, frame: EphemeralFrame) => void,
    private readonly refreshMs = 20_000,
    private readonly now: () => number = Date.now,
  ) {
    bus.subscribe((m) => this.heard(m));
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.refreshMs);
    this.timer.unref();
  }

  connected(org: string, userId: string): void {
    const users = this.local.get(org) ?? new Map<string, { sockets: number; status: Status }>();
    this.local.set(org, users);
    const u = users.get(userId);
    if (u !== undefined) {
      u.sockets++;
      return;
    }
    users.set(userId, { sockets: 1, status: 'online' });
    this.bus.publish({ organizationId: org, frame: { type: 'presence', userId, status: 'online' } });
  }

  disconnected(org: string, userId: string): void {
    const users = this.local.get(org);
    const u = users?.get(userId);
    if (users === undefined || u === undefined) return;
    if (--u.sockets > 0) return;
    users.delete(userId);
    if (users.size === 0) this.local.delete(org);
    this.bus.publish({ organizationId: org, frame: { type: 'presence', userId, status: 'offline' } });
  }

  set(org: string, userId: string, status: Status): void {
    const u = this.local.get(org)?.get(userId);
    if (u === undefined) return;
    u.status = status;
    this.bus.publish({ organizationId: org, frame: { type: 'presence', userId, status } });
  }

  /** Everyone online or away in the organization now. */
  snapshot(org: string): { userId: string; status: Status }[] {
    const out: { userId: string; status: Status }[] = [];
    for (const [userId, k] of this.known.get(org) ?? []) out.push({ userId, status: k.status });
    return out;
  }

  private heard(m: EphemeralMessage): void {
    if (m.frame.type === 'presence') {
      const users = this.known.get(m.organizationId) ?? new Map<string, { status: Status; at: number }>();
      this.known.set(m.organizationId, users);
      const before = users.get(m.frame.userId)?.status;
      if (m.frame.status === 'offline') {
        // Another of the user's sockets may still be open on this node.
        const mine = this.local.get(m.organizationId)?.get(m.frame.userId);
        if (mine !== undefined) return;
        users.delete(m.frame.userId);
      } else users.set(m.frame.userId, { status: m.frame.status, at: this.now() });
      // Refreshes repeat what every socket already knows.
      const after = users.get(m.frame.userId)?.status ?? 'offline';
      if (before === after || (before === undefined && after === 'offline')) return;
    }
    this.onFrame(m.organizationId, m.frame);
  }

  private tick(): void {
    for (const [org, users] of this.local) {
      for (const [userId, u] of users) this.bus.publish({ organizationId: org, frame: { type: 'presence', userId, status: u.status } });
    }
    const stale = this.now() - this.refreshMs * 3;
    for (const [org, users] of this.known) {
      for (const [userId, k] of users) {
        if (k.at >= stale || this.local.get(org)?.has(userId)) continue;
        users.delete(userId);
        this.onFrame(org, { type: 'presence', userId, status: 'offline' });
      }
    }
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
