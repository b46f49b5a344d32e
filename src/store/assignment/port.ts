/**
 * What auto-assignment shares across nodes, per organization: a lock under
 * which one node at a time picks agents for the organization's queue (so
 * two nodes never count the same free capacity twice), and the round-robin
 * order (when each agent was last given a conversation). Adapters:
 * `memory.ts` (embedded: one node, an in-process lock) and `redis.ts`
 * (clustered: a lock with a token and an expiry, renewed while held).
 */
export interface AssignmentStore {
  /**
   * Runs `fn` holding the organization's lock, or answers `busy` at once when
   * another holder has it. `held()` renews the lock and says whether it is
   * still this caller's: a holder that lost it (it stalled past the expiry)
   * must stop picking.
   */
  withLock<T>(organizationId: string, fn: (held: () => Promise<boolean>) => Promise<T>): Promise<T | 'busy'>;
  /** When each agent was last given a conversation automatically (ms); agents never given one are absent. */
  lastAssigned(organizationId: string): Promise<Map<string, number>>;
  noteAssigned(organizationId: string, userId: string, at: number): Promise<void>;
}
