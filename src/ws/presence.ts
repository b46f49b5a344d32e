import { requireScope } from '../app/principal.js';
import { isActiveUser, type Principal } from '../domain/types.js';
import type { UserRepo } from '../store/core/port.js';
import type { PresenceChoice, PresenceStore } from '../store/presence/port.js';
import type { EphemeralBus } from './ephemeral.js';

/** How long a node's lease on a connected user lasts unless renewed, and how often it renews it. */
export const PRESENCE_LEASE_MS = 60_000;
export const PRESENCE_RENEW_MS = 20_000;

export type PresenceStatus = PresenceChoice | 'offline';

export interface TeamPresence {
  userId: string;
  name: string;
  role: 'admin' | 'agent';
  status: PresenceStatus;
}

/**
 * Agents' presence: online or away as each chose, while they have a
 * dashboard socket open (on any node), offline otherwise. The store keeps
 * the leases and choices (memory embedded, Redis clustered); a choice is
 * also told to every node over the ephemeral bus, so teammates' sockets get
 * the `presence` frame at once. A deactivated user is offline whatever a
 * lease says.
 */
export class PresenceService {
  private readonly availableListeners: ((organizationId: string, userId: string) => void)[] = [];

  constructor(
    private readonly store: PresenceStore,
    private readonly users: UserRepo,
    private readonly bus: EphemeralBus,
  ) {}

  /**
   * Sets the caller's status (REST `PUT /v1/presence`, `PATCH
   * /v1/users/me/availability` and the socket's `presence` command): one
   * state, whichever way it is set. Offline shows the user as offline while
   * connected, and like away takes no conversations.
   */
  async choose(principal: Principal, status: PresenceChoice): Promise<{ userId: string; status: PresenceChoice }> {
    requireScope(principal, 'inbox:read');
    await this.store.choose(principal.organizationId, principal.userId, status);
    this.bus.publish({ organizationId: principal.organizationId, frame: { type: 'presence_choice', userId: principal.userId, status } });
    if (status === 'online') this.available(principal.organizationId, principal.userId);
    return { userId: principal.userId, status };
  }

  /**
   * Told (on this node) whenever a user may have become available: they
   * chose online, or one of their sockets took or renewed its lease (every
   * `PRESENCE_RENEW_MS`). Auto-assignment listens, so a queue waiting for
   * somebody is tried again; a listener that throws is ignored.
   */
  onAvailable(listener: (organizationId: string, userId: string) => void): void {
    this.availableListeners.push(listener);
  }

  private available(organizationId: string, userId: string): void {
    for (const l of this.availableListeners) {
      try {
        l(organizationId, userId);
      } catch {
        // a listener's trouble is its own
      }
    }
  }

  /** Every active user of the caller's organization with their status. */
  async team(principal: Principal): Promise<TeamPresence[]> {
    requireScope(principal, 'inbox:read');
    const [users, connected] = await Promise.all([this.users.list(principal.organizationId), this.store.list(principal.organizationId)]);
    const status = new Map(connected.map((p) => [p.userId, p.status]));
    return users.filter(isActiveUser).map((u) => ({ userId: u.id, name: u.name, role: u.role, status: status.get(u.id) ?? 'offline' }));
  }

  /** The organization's users who are online now (connected, chose online, active): whom new conversations may go to. */
  async online(organizationId: string): Promise<string[]> {
    const connected = (await this.store.list(organizationId)).filter((p) => p.status === 'online');
    if (connected.length === 0) return [];
    const users = await Promise.all(connected.map((p) => this.users.get(organizationId, p.userId)));
    return users.filter((u) => u !== null && isActiveUser(u)).map((u) => u!.id);
  }

  /** What the user chose (a socket opening shows it); online when unknown or the store does not answer. */
  async choiceOf(organizationId: string, userId: string): Promise<PresenceChoice> {
    return this.store.choiceOf(organizationId, userId).catch(() => 'online' as const);
  }

  /** A node holds (or renews) a lease on a connected user; best effort: a failed write is renewed on the next round. */
  async attach(organizationId: string, userId: string, node: string): Promise<void> {
    const held = await this.store.attach(organizationId, userId, node, PRESENCE_LEASE_MS).then(
      () => true,
      () => false,
    );
    if (held) this.available(organizationId, userId);
  }

  async detach(organizationId: string, userId: string, node: string): Promise<void> {
    await this.store.detach(organizationId, userId, node).catch(() => undefined);
  }
}
