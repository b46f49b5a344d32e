import type { Fence } from '../../domain/fence.js';

/** Where one actor's state lives: its address and its partition. */
export interface ActorStateRef {
  type: string;
  key: string;
  partition: number;
}

/** A state write carried a fence that is no longer the partition's current epoch. */
export class FencedWriteError extends Error {
  constructor(readonly fence: Fence) {
    super(`write fenced: epoch ${fence.epoch} of partition ${fence.partition} is no longer current`);
    this.name = 'FencedWriteError';
  }
}

/**
 * Durable actor state. Values are JSON-compatible and treated as immutable.
 *
 * `save` is conditional on ownership: it applies only if `fence.epoch` is
 * still the current epoch of `fence.partition`, checked atomically with the
 * write (one Lua script in Redis), and rejects with `FencedWriteError`
 * otherwise, leaving the stored value untouched. It resolves once the write is
 * durable (fsynced in embedded mode, acknowledged by Redis in clustered mode).
 */
export interface ActorStateStore {
  load(ref: ActorStateRef): Promise<unknown>;
  save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void>;
  /**
   * Rejects with `FencedWriteError` when `fence` is no longer the current
   * epoch of the actor's partition: the check `save` makes, without a write
   * (for a command that publishes events and changes no state).
   */
  checkFence(ref: ActorStateRef, fence: Fence): Promise<void>;
}

/**
 * The replies of commands an actor applied under an idempotency key, kept
 * apart from the actor's state so that the state stays small whatever the
 * contact's traffic (the state remembers only a digest of each key). Rows
 * expire after the store's time to live.
 *
 * `put` is idempotent: a second put of one key replaces the first unless
 * the first was made under a newer fencing epoch (a stale owner's reply never
 * replaces the current owner's). `get` answers null for a key never put or
 * expired.
 */
export interface ActorReplyStore {
  put(ref: ActorStateRef, keyDigest: string, reply: unknown, epoch: number): Promise<void>;
  get(ref: ActorStateRef, keyDigest: string): Promise<{ reply: unknown } | null>;
}

/**
 * Writes to several stores committed as one: the embedded node's one SQLite
 * database (`SqliteDb`, which also holds the actor state) or the clustered
 * node's PostgreSQL (`PgDb`, which does not: the state is in Redis).
 */
export interface CommitScope {
  /** Runs `fn` with every write it makes in one commit; resolves once that commit is durable. */
  together<T>(fn: () => Promise<T>): Promise<T>;
  /** Inside `together`: makes the writes so far durable now (before an outside effect). */
  settle(): Promise<void>;
  /**
   * False when the actor state is stored elsewhere (clustered: the fenced
   * write goes to Redis): then a command's writes commit in two
   * transactions, those made before the state write (committed before it)
   * and those after it (committed before its events are published).
   * Absent: the state is in the same commit.
   */
  readonly holdsActorState?: boolean;
  /** Runs `fn` outside the unit: each of its writes commits on its own (a lone write needs no transaction around it). */
  apart?<T>(fn: () => Promise<T>): Promise<T>;
}

/** Who holds a partition's lease, and under which epoch. */
export interface LeaseHolder {
  nodeId: string;
  epoch: number;
}

/**
 * Partition leases with fencing epochs, and node membership.
 *
 * - `acquire` succeeds only when nobody holds the lease (never held, released,
 *   or expired); it bumps the partition's epoch and returns the new one.
 * - `renew` extends the lease only for the holder of that exact epoch.
 * - `release` ends the lease early and bumps the epoch, so the releasing
 *   node's fence is dead at once and a successor can acquire immediately.
 * - Epochs only grow. Expiry is judged by the store's clock (Redis server
 *   time), never by the nodes' clocks.
 * - `heartbeat` keeps `nodeId` a member for `ttlMs` and returns every live
 *   member, sorted.
 * - `evict` is what a survivor does for a node found dead before its lease
 *   ran out: the node leaves the membership, and each of the given
 *   partitions whose lease it holds (any epoch) is freed and its epoch bumped,
 *   as if it had released them; so the node's fence is dead at once even if
 *   it was alive after all. Returns the partitions freed.
 */
export interface PartitionLeaseStore {
  acquire(partition: number, nodeId: string, ttlMs: number): Promise<number | null>;
  renew(partition: number, nodeId: string, epoch: number, ttlMs: number): Promise<boolean>;
  release(partition: number, nodeId: string, epoch: number): Promise<boolean>;
  holder(partition: number): Promise<LeaseHolder | null>;
  heartbeat(nodeId: string, ttlMs: number): Promise<string[]>;
  leave(nodeId: string): Promise<void>;
  evict(nodeId: string, partitions: readonly number[]): Promise<number[]>;
}
