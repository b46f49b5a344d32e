import { silentLogger, type Logger } from '../log.js';
import type { PartitionLeaseStore } from '../store/actors/port.js';
import type { ActorHost, PartitionOwnership } from './host.js';
import { desiredOwners } from './partitions.js';
import type { Fence } from '../domain/fence.js';

/**
 * The node side of routing: start and stop receiving a partition's commands,
 * and tell the other nodes that placement changed (so they act at once
 * instead of at their next tick).
 */
export interface PartitionListener {
  listen(partition: number): Promise<void>;
  unlisten(partition: number): Promise<void>;
  announcePlacementChange(): void;
  onPlacementChange(cb: () => void): void;
  /** Starts answering other nodes' liveness probes (before joining). Absent: no fast failure detection. */
  answerProbes?(nodeId: string): Promise<void>;
  /** Whether `nodeId` is still connected: `gone` only on the messaging system's own word that it is not. */
  probe?(nodeId: string, timeoutMs: number): Promise<'alive' | 'gone' | 'unknown'>;
  /** Tells every node that an evicted node's partitions are free: requests waiting on it go again at once. */
  announceFreed?(partitions: readonly number[]): void;
}

export interface PartitionCoordinatorOptions {
  nodeId: string;
  partitions: number;
  /** Lease (and membership) time to live. A dead node's partitions move after at most about this long. */
  leaseMs: number;
  /** How often the other members are probed (0: never; a dead node's partitions then wait for its lease). */
  probeMs?: number;
  leases: PartitionLeaseStore;
  host: ActorHost;
  listener: PartitionListener;
  log?: Logger;
}

interface Owned {
  epoch: number;
  /** Local monotonic time until which the lease is surely ours (`performance.now()`). */
  validUntil: number;
  draining: boolean;
}

/** Share of the lease we trust locally: leaves room for clock rate differences and slow replies. */
const SAFETY = 0.8;

/**
 * Places partitions on nodes and keeps them there.
 *
 * Every tick (a quarter of the lease) the node renews its membership and the
 * leases it holds, computes the desired owner of each partition by rendezvous
 * hashing over the live members (all nodes compute the same answer), and
 * then:
 * - drains the partitions that belong elsewhere now: stop listening, finish
 *   every command already accepted, stop their actors, release the lease
 *   (which bumps the epoch), announce; the successor then acquires at once;
 * - acquires the partitions that should be its own and are free (never held,
 *   released, or expired because their holder died), and listens to them;
 * - gives up at once a partition whose renewal failed or whose lease it can
 *   no longer vouch for; its waiting commands fail with a retryable error.
 *
 * Between ticks (every `probeMs`) it probes the other members, and evicts one
 * whose NATS connection is gone (see `probeMembers`): a killed node's
 * partitions move within about two probe intervals instead of a lease. A
 * node that is only slow or paused is never evicted by a probe.
 *
 * Safety does not rest on any of this timing: every state write carries the
 * lease's epoch and the store refuses it once a new owner took the partition.
 */
export class PartitionCoordinator implements PartitionOwnership {
  private readonly owned = new Map<number, Owned>();
  private readonly drains = new Map<number, Promise<void>>();
  private readonly log: Logger;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private members: string[] = [];
  /** `performance.now()` of the last membership heartbeat that succeeded. */
  private lastHeartbeat = -Infinity;
  private readonly tickMs: number;
  private probeTimer: ReturnType<typeof setTimeout> | null = null;
  /** Members that answered a probe at least once (only those can be found gone), and their consecutive `gone` answers. */
  private readonly probed = new Map<string, number>();

  constructor(private readonly opts: PartitionCoordinatorOptions) {
    this.log = opts.log ?? silentLogger;
    this.tickMs = Math.max(50, Math.floor(opts.leaseMs / 4));
    opts.listener.onPlacementChange(() => this.tickSoon());
  }

  fenceFor(partition: number): Fence | undefined {
    const o = this.owned.get(partition);
    if (o === undefined || o.draining || performance.now() > o.validUntil) return undefined;
    return { partition, epoch: o.epoch };
  }

  /** Partitions this node serves now. */
  ownedPartitions(): number[] {
    return [...this.owned.entries()].filter(([, o]) => !o.draining).map(([p]) => p).sort((a, b) => a - b);
  }

  /** True while this node's membership is being renewed (it is part of the cluster). */
  isLive(): boolean {
    return !this.stopped && performance.now() - this.lastHeartbeat < this.opts.leaseMs;
  }

  /** Live members seen at the last tick. */
  liveMembers(): readonly string[] {
    return this.members;
  }

  /** Joins and takes the partitions that are free for it; resolves after the first tick. */
  async start(): Promise<void> {
    const { listener, probeMs = 0, nodeId } = this.opts;
    // Answering before joining: a member without an answer is never taken for dead.
    if (probeMs > 0 && listener.answerProbes !== undefined) await listener.answerProbes(nodeId);
    await this.tick();
    listener.announcePlacementChange();
    this.schedule();
    if (probeMs > 0 && listener.probe !== undefined) this.scheduleProbe(probeMs);
  }

  private scheduleProbe(probeMs: number): void {
    if (this.stopped) return;
    this.probeTimer = setTimeout(() => {
      void this.probeMembers(probeMs)
        .catch((e: unknown) => this.log.warn('member probe failed', { err: e }))
        .finally(() => this.scheduleProbe(probeMs));
    }, probeMs);
    this.probeTimer.unref();
  }

  /**
   * Probes every other member. One that answered before and is now reported
   * gone twice in a row (a probe interval apart, so a reconnect shorter than
   * that is forgiven) is evicted: out of the membership, its leases freed and
   * fenced, and every node told to tick. If it was alive after all (its
   * connection came back), it only lost its partitions: its writes are
   * fenced, and it rejoins at its next heartbeat.
   */
  private async probeMembers(probeMs: number): Promise<void> {
    const { listener, nodeId, leases, partitions } = this.opts;
    const others = this.members.filter((m) => m !== nodeId);
    for (const m of this.probed.keys()) if (!others.includes(m)) this.probed.delete(m);
    const answers = await Promise.all(others.map(async (m) => [m, await listener.probe!(m, probeMs)] as const));
    for (const [m, answer] of answers) {
      if (answer === 'alive') this.probed.set(m, 0);
      if (answer !== 'gone' || !this.probed.has(m)) continue;
      const misses = this.probed.get(m)! + 1;
      this.probed.set(m, misses);
      if (misses < 2 || this.stopped) continue;
      this.probed.delete(m);
      const freed = await leases.evict(m, Array.from({ length: partitions }, (_, p) => p));
      this.members = this.members.filter((x) => x !== m);
      this.log.warn('member evicted: its NATS connection is gone', { member: m, partitionsFreed: freed.length });
      this.onEvict?.(m);
      if (freed.length > 0) listener.announceFreed?.(freed);
      listener.announcePlacementChange();
      void this.tickSoon();
    }
  }

  /** Test and metrics hook: called with each member this node evicted. */
  onEvict?: (member: string) => void;

  /** Runs a tick now (after the running one, if any). Resolves when it is done. */
  tickSoon(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.ticking !== null) {
      this.again = true;
      return this.ticking;
    }
    return this.tick();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.tickSoon().finally(() => this.schedule());
    }, this.tickMs);
    this.timer.unref();
  }

  private tick(): Promise<void> {
    const run = async () => {
      do {
        this.again = false;
        try {
          await this.tickOnce();
        } catch (e) {
          this.log.warn('placement tick failed', { err: e });
        }
      } while (this.again && !this.stopped);
    };
    this.ticking = run().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async tickOnce(): Promise<void> {
    const { leases, nodeId, leaseMs, partitions } = this.opts;
    const t0 = performance.now();
    let members: string[] | null = null;
    try {
      members = await leases.heartbeat(nodeId, leaseMs);
      this.members = members;
      this.lastHeartbeat = t0;
    } catch (e) {
      this.log.warn('membership heartbeat failed', { err: e });
    }

    // Renew what we hold (draining partitions too: a long drain must not lose its lease).
    await Promise.all(
      [...this.owned.entries()].map(async ([p, o]) => {
        let ok: boolean;
        try {
          ok = await leases.renew(p, nodeId, o.epoch, leaseMs);
        } catch (e) {
          // Unknown: keep serving while the last renewal still vouches for us.
          if (performance.now() > o.validUntil) this.lose(p, 'lease could not be renewed in time');
          else this.log.warn('lease renewal failed', { partition: p, err: e });
          return;
        }
        if (ok) o.validUntil = t0 + leaseMs * SAFETY;
        else this.lose(p, 'lease lost');
      }),
    );
    if (members === null || this.stopped) return;

    const desired = desiredOwners(members, partitions);
    let released = false;
    const drains: Promise<void>[] = [];
    for (const [p, o] of this.owned) {
      if (desired[p] !== nodeId && !o.draining) drains.push(this.drain(p).then(() => { released = true; }));
    }
    const acquired: number[] = [];
    await Promise.all(
      desired.map(async (owner, p) => {
        if (owner !== nodeId || this.owned.has(p)) return;
        const epoch = await leases.acquire(p, nodeId, leaseMs);
        if (epoch === null) return;
        this.owned.set(p, { epoch, validUntil: t0 + leaseMs * SAFETY, draining: false });
        try {
          await this.opts.listener.listen(p);
          acquired.push(p);
        } catch (e) {
          this.log.error('could not listen to an acquired partition; releasing it', { partition: p, err: e });
          this.owned.delete(p);
          await leases.release(p, nodeId, epoch).catch(() => false);
        }
      }),
    );
    if (acquired.length > 0) this.log.info('partitions acquired', { partitions: acquired.sort((a, b) => a - b) });
    // Draining can take as long as the slowest accepted command; it must not
    // hold up renewals, so only wait for it here when the node is stopping.
    void Promise.all(drains).then(() => {
      if (released) this.opts.listener.announcePlacementChange();
    });
  }

  /** Hands a partition over: no new commands, finish accepted ones, release. */
  private drain(p: number): Promise<void> {
    const running = this.drains.get(p);
    if (running !== undefined) return running;
    const o = this.owned.get(p);
    if (o === undefined) return Promise.resolve();
    const d = this.drainOwned(p, o).finally(() => this.drains.delete(p));
    this.drains.set(p, d);
    return d;
  }

  private async drainOwned(p: number, o: Owned): Promise<void> {
    o.draining = true;
    try {
      await this.opts.listener.unlisten(p);
      await this.opts.host.drainPartition(p);
    } catch (e) {
      this.log.warn('drain failed', { partition: p, err: e });
    }
    if (this.owned.get(p) !== o) return; // lost meanwhile
    this.owned.delete(p);
    try {
      await this.opts.leases.release(p, this.opts.nodeId, o.epoch);
    } catch (e) {
      // The lease will expire on its own; the epoch check keeps writes safe meanwhile.
      this.log.warn('lease release failed', { partition: p, err: e });
    }
    this.log.info('partition released', { partition: p });
  }

  /** Called when a write was fenced: another node owns the partition now. */
  ownershipLost(fence: Fence): void {
    const o = this.owned.get(fence.partition);
    if (o !== undefined && o.epoch === fence.epoch) this.lose(fence.partition, 'write fenced');
  }

  private lose(p: number, reason: string): void {
    if (!this.owned.has(p)) return;
    this.owned.delete(p);
    this.log.warn('partition lost', { partition: p, reason });
    void this.opts.listener.unlisten(p).catch(() => {});
    void this.opts.host.abandonPartition(p);
  }

  /** Leaves gracefully: drains and releases every partition, then leaves the membership. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.probeTimer !== null) clearTimeout(this.probeTimer);
    while (this.ticking !== null) await this.ticking;
    await Promise.all([...this.owned.keys()].map((p) => this.drain(p)));
    await Promise.all([...this.drains.values()]);
    await this.opts.leases.leave(this.opts.nodeId).catch(() => {});
    this.opts.listener.announcePlacementChange();
  }
}
