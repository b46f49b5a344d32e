import { randomUUID } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log.js';
import type { z } from 'zod';
import type { serverFrameSchemas } from './protocol.js';

/** A conversation's row as the index now holds it: the `conversation` frame of the protocol. */
export type ConversationChange = z.infer<(typeof serverFrameSchemas)['conversation']>['conversation'];
/** Which contact changed: the `contact` frame of the protocol. */
export type ContactChange = z.infer<(typeof serverFrameSchemas)['contact']>['contact'];

/**
 * A frame for the agents of an organization that is relayed, never stored:
 * presence, typing, a conversation's changed row (written to the index
 * after the change, so a list refreshed on it shows the change), and a
 * contact that changed (stored before the frame is sent).
 */
export type EphemeralFrame =
  | { type: 'presence'; userId: string; status: 'online' | 'away' | 'offline' }
  | { type: 'typing'; userId: string; conversationId: string }
  | { type: 'conversation'; conversation: ConversationChange }
  | { type: 'contact'; contact: ContactChange }
  // Between nodes only (never sent to a socket): a user chose a status; each node applies it to its sockets of theirs.
  | { type: 'presence_choice'; userId: string; status: 'online' | 'away' | 'offline' };

export interface EphemeralMessage {
  organizationId: string;
  frame: EphemeralFrame;
  /** The node a presence frame speaks for (a user can be connected to several). */
  node?: string;
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
      // Presence, typing and row changes are best effort: a lost one is refreshed, not shown, or reloaded on reconnect.
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
/** What a user chose: offline shows them as offline on every node while their sockets stay open. */
type Choice = Status | 'offline';

/**
 * Who is online, per organization, as every node sees it.
 *
 * Guarantees:
 * - A user is online while any node has a socket of theirs (online beats
 *   away): each node speaks only for its own sockets, and an offline from one
 *   node never hides the user's sockets on another.
 * - A node that stops speaking (killed, cut off) is forgotten for its users
 *   after three missed refreshes (`refreshMs`), and they are announced offline
 *   unless another node still has them.
 * - Sockets hear a presence frame only when the user's combined status
 *   changes; refreshes are silent.
 */
export class PresenceBoard {
  /** This board's node, as named in the frames it publishes. */
  readonly node = randomUUID();
  /** org → user → sockets on this node and their chosen status. */
  private readonly local = new Map<string, Map<string, { sockets: number; status: Choice }>>();
  /** org → user → node → last status heard from that node, and when. */
  private readonly known = new Map<string, Map<string, Map<string, { status: Status; at: number }>>>();
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

  /** A socket of the user opened on this node; `status` is what they chose (their first socket here shows it). */
  connected(org: string, userId: string, status: Choice = 'online'): void {
    const users = this.local.get(org) ?? new Map<string, { sockets: number; status: Choice }>();
    this.local.set(org, users);
    const u = users.get(userId);
    if (u !== undefined) {
      u.sockets++;
      return;
    }
    users.set(userId, { sockets: 1, status });
    this.announce(org, userId, status);
  }

  /** True while this node has a socket of the user. */
  holds(org: string, userId: string): boolean {
    return this.local.get(org)?.has(userId) ?? false;
  }

  /** Every user with a socket on this node. */
  localUsers(): { organizationId: string; userId: string }[] {
    return [...this.local].flatMap(([organizationId, users]) => [...users.keys()].map((userId) => ({ organizationId, userId })));
  }

  /** Tells every node (this one too) that the user chose `status`: each shows it for its sockets of theirs. */
  choose(org: string, userId: string, status: Choice): void {
    this.bus.publish({ organizationId: org, frame: { type: 'presence_choice', userId, status } });
  }

  disconnected(org: string, userId: string): void {
    const users = this.local.get(org);
    const u = users?.get(userId);
    if (users === undefined || u === undefined) return;
    if (--u.sockets > 0) return;
    users.delete(userId);
    if (users.size === 0) this.local.delete(org);
    this.announce(org, userId, 'offline');
  }

  set(org: string, userId: string, status: Choice): void {
    const u = this.local.get(org)?.get(userId);
    if (u === undefined) return;
    u.status = status;
    this.announce(org, userId, status);
  }

  /** Everyone online or away in the organization now. */
  snapshot(org: string): { userId: string; status: Status }[] {
    const out: { userId: string; status: Status }[] = [];
    for (const [userId, nodes] of this.known.get(org) ?? []) {
      const status = combined(nodes);
      if (status !== 'offline') out.push({ userId, status });
    }
    return out;
  }

  private announce(org: string, userId: string, status: Status | 'offline'): void {
    this.bus.publish({ organizationId: org, frame: { type: 'presence', userId, status }, node: this.node });
  }

  private heard(m: EphemeralMessage): void {
    if (m.frame.type === 'presence_choice') {
      this.set(m.organizationId, m.frame.userId, m.frame.status);
      return;
    }
    if (m.frame.type !== 'presence') {
      this.onFrame(m.organizationId, m.frame);
      return;
    }
    const org = m.organizationId;
    const userId = m.frame.userId;
    const users = this.known.get(org) ?? new Map<string, Map<string, { status: Status; at: number }>>();
    this.known.set(org, users);
    const nodes = users.get(userId) ?? new Map<string, { status: Status; at: number }>();
    users.set(userId, nodes);
    const before = combined(nodes);
    // A frame from a node too old to name itself speaks for one unnamed node.
    const node = m.node ?? '';
    if (m.frame.status === 'offline') nodes.delete(node);
    else nodes.set(node, { status: m.frame.status, at: this.now() });
    this.settle(org, userId, nodes, before);
  }

  private tick(): void {
    for (const [org, users] of this.local) {
      for (const [userId, u] of users) this.announce(org, userId, u.status);
    }
    const stale = this.now() - this.refreshMs * 3;
    for (const [org, users] of this.known) {
      for (const [userId, nodes] of users) {
        const before = combined(nodes);
        for (const [node, k] of nodes) if (k.at < stale && node !== this.node) nodes.delete(node);
        this.settle(org, userId, nodes, before);
      }
    }
  }

  /** Tells the sockets when the user's combined status changed; forgets users no node has. */
  private settle(org: string, userId: string, nodes: Map<string, { status: Status; at: number }>, before: Status | 'offline'): void {
    const after = combined(nodes);
    if (nodes.size === 0) {
      const users = this.known.get(org);
      users?.delete(userId);
      if (users?.size === 0) this.known.delete(org);
    }
    if (before !== after) this.onFrame(org, { type: 'presence', userId, status: after });
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}

function combined(nodes: Map<string, { status: Status }>): Status | 'offline' {
  let status: Status | 'offline' = 'offline';
  for (const n of nodes.values()) {
    if (n.status === 'online') return 'online';
    status = 'away';
  }
  return status;
}
