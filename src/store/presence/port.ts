/** What an agent chose to show: online, away (still connected, not taking conversations), or offline (shown as offline while connected). */
export type PresenceChoice = 'online' | 'away' | 'offline';

export interface AgentPresence {
  userId: string;
  status: PresenceChoice;
}

/**
 * Who of an organization has the dashboard open, and what each chose to
 * show. A user counts as connected while any node holds a lease for them
 * (a node takes one when a socket of theirs opens, renews it while one
 * stays open, and gives it back when the last closes); a lease that is not
 * renewed (its node died) expires by itself. Their status is their choice,
 * online until they choose away. Adapters: `memory.ts` (embedded: one
 * node) and `redis.ts` (clustered: shared by every node, leases expire on
 * Redis's clock); one contract suite, `test/store/presence.contract.ts`.
 */
export interface PresenceStore {
  /** Takes or renews `node`'s lease on the user for `ttlMs`. */
  attach(organizationId: string, userId: string, node: string, ttlMs: number): Promise<void>;
  /** Gives `node`'s lease back (its last socket of the user closed). */
  detach(organizationId: string, userId: string, node: string): Promise<void>;
  /** Records the user's choice; it outlives their sockets (a new tab shows what they chose). */
  choose(organizationId: string, userId: string, status: PresenceChoice): Promise<void>;
  /** The user's choice (online when never chosen). */
  choiceOf(organizationId: string, userId: string): Promise<PresenceChoice>;
  /** Every connected user of the organization with their status; users not connected are offline and absent. */
  list(organizationId: string): Promise<AgentPresence[]>;
  /** Drops the user's leases and choice (a deactivated or removed user). */
  forget(organizationId: string, userId: string): Promise<void>;
}
