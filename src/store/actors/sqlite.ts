import { systemClock, type Clock } from '../../clock.js';
import type { Fence } from '../../domain/fence.js';
import { FencedWriteError, type ActorStateRef, type ActorStateStore, type LeaseHolder, type PartitionLeaseStore } from './port.js';
import type { SqliteDb } from '../sqlite/db.js';

const STATE = 'actor_state';
const EPOCHS = 'actor_epochs';

/**
 * Actor state and partition leases for the embedded mode, over the node's SQLite database.
 *
 * There is one process, so leases only fence actors of the same process
 * against each other (an actor started under a released lease); epochs are
 * persisted so they keep growing across restarts. Lease holders and
 * membership live in memory: they mean nothing once the process is gone.
 */
export class SqliteActorStore implements ActorStateStore, PartitionLeaseStore {
  private readonly leases = new Map<number, { nodeId: string; epoch: number; expiresAt: number }>();
  private readonly members = new Map<string, number>();

  constructor(
    private readonly db: SqliteDb,
    private readonly clock: Clock = systemClock,
  ) {}

  private epochOf(partition: number): number {
    return this.db.get<number>(EPOCHS, String(partition)) ?? 0;
  }

  load(ref: ActorStateRef): Promise<unknown> {
    return Promise.resolve(this.db.get(STATE, `${ref.type}/${ref.key}`));
  }

  save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void> {
    // Check and apply in the same synchronous step (also when the write waits for its turn in a unit of work).
    return this.db.run(() => {
      this.assertFence(ref, fence);
      this.db.apply([{ coll: STATE, key: `${ref.type}/${ref.key}`, value }]);
    });
  }

  checkFence(ref: ActorStateRef, fence: Fence): Promise<void> {
    try {
      this.assertFence(ref, fence);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }

  private assertFence(ref: ActorStateRef, fence: Fence): void {
    if (fence.partition !== ref.partition || this.epochOf(fence.partition) !== fence.epoch) throw new FencedWriteError(fence);
  }

  private live(partition: number) {
    const l = this.leases.get(partition);
    if (l === undefined || l.expiresAt <= this.clock.now()) return undefined;
    return l;
  }

  async acquire(partition: number, nodeId: string, ttlMs: number): Promise<number | null> {
    if (this.live(partition) !== undefined) return null;
    const epoch = this.epochOf(partition) + 1;
    this.leases.set(partition, { nodeId, epoch, expiresAt: this.clock.now() + ttlMs });
    await this.db.put(EPOCHS, String(partition), epoch);
    return epoch;
  }

  renew(partition: number, nodeId: string, epoch: number, ttlMs: number): Promise<boolean> {
    const l = this.live(partition);
    if (l === undefined || l.nodeId !== nodeId || l.epoch !== epoch) return Promise.resolve(false);
    l.expiresAt = this.clock.now() + ttlMs;
    return Promise.resolve(true);
  }

  async release(partition: number, nodeId: string, epoch: number): Promise<boolean> {
    const l = this.live(partition);
    if (l === undefined || l.nodeId !== nodeId || l.epoch !== epoch) return false;
    this.leases.delete(partition);
    await this.db.put(EPOCHS, String(partition), this.epochOf(partition) + 1);
    return true;
  }

  holder(partition: number): Promise<LeaseHolder | null> {
    const l = this.live(partition);
    return Promise.resolve(l === undefined ? null : { nodeId: l.nodeId, epoch: l.epoch });
  }

  heartbeat(nodeId: string, ttlMs: number): Promise<string[]> {
    const now = this.clock.now();
    this.members.set(nodeId, now + ttlMs);
    for (const [n, exp] of this.members) if (exp <= now) this.members.delete(n);
    return Promise.resolve([...this.members.keys()].sort());
  }

  leave(nodeId: string): Promise<void> {
    this.members.delete(nodeId);
    return Promise.resolve();
  }

  async evict(nodeId: string, partitions: readonly number[]): Promise<number[]> {
    this.members.delete(nodeId);
    const freed: number[] = [];
    for (const p of partitions) {
      const l = this.live(p);
      if (l === undefined || l.nodeId !== nodeId) continue;
      this.leases.delete(p);
      await this.db.put(EPOCHS, String(p), this.epochOf(p) + 1);
      freed.push(p);
    }
    return freed;
  }
}
