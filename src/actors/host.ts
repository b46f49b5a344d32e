import { isAppError, type AppError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { mailboxFull, ownershipLost, partitionMoved, partitionNotOwned } from './errors.js';
import { partitionOf } from './partitions.js';
import { systemClock, type Actor, type ActorAddress, type ActorFactory, type Clock, type Envelope } from './types.js';
import type { Fence } from '../domain/fence.js';

/** Which partitions this node may serve right now, and under which fence. */
export interface PartitionOwnership {
  fenceFor(partition: number): Fence | undefined;
}

/** Receives one call per processed command (for metrics). */
export interface CommandObserver {
  commandDone(type: string, durationMs: number, outcome: 'ok' | 'error'): void;
}

export interface ActorHostOptions {
  partitions: number;
  /** Commands an actor may hold that are not finished yet (the running one included). */
  mailboxSize: number;
  /** Passivate an actor after this long with nothing to do. */
  idleMs: number;
  ownership: PartitionOwnership;
  clock?: Clock;
  log?: Logger;
  observer?: CommandObserver;
  /** Called when an actor's write was fenced: the partition has a new owner. */
  onOwnershipLost?: (fence: Fence) => void;
}

interface Item {
  envelope: Envelope;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

class Cell {
  readonly queue: Item[] = [];
  /** 1 while a command is being processed. */
  current = 0;
  /** A hook is running (the message loop, or a lifecycle step). */
  busy = false;
  started = false;
  /** Set when the actor accepts no new commands (its partition is moving or was lost). */
  closing: AppError | null = null;
  lastActive: number;
  private idleWaiters: (() => void)[] = [];

  constructor(
    readonly id: string,
    readonly address: ActorAddress,
    readonly partition: number,
    readonly fence: Fence,
    readonly actor: Actor,
    now: number,
  ) {
    this.lastActive = now;
  }

  setIdle(now: number): void {
    this.busy = false;
    this.lastActive = now;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }

  get depth(): number {
    return this.queue.length + this.current;
  }

  whenNotBusy(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }
}

const addressId = (a: ActorAddress) => `${a.type}\u0000${a.key}`;

/**
 * Runs this node's actors: one mailbox per address, drained one command at a
 * time in arrival order; different addresses run concurrently (a slow command
 * blocks only its own actor).
 *
 * Guarantees:
 * - `onStart` runs once per activation even when many commands race it; a
 *   failed start fails the waiting commands and is retried by the next one.
 * - A mailbox holds at most `mailboxSize` unfinished commands; more are refused
 *   with a retryable 503 `mailbox_full`, never dropped.
 * - Idle actors are passivated (`onIdle`, then `onStop`) after `idleMs`.
 * - A partition being drained finishes every command it accepted before its
 *   actors stop; a partition that was lost fails its waiting commands with a
 *   retryable error.
 */
export class ActorHost {
  private readonly cells = new Map<string, Cell>();
  private readonly factories = new Map<string, ActorFactory>();
  private readonly clock: Clock;
  private readonly log: Logger;
  private sweeper: ReturnType<typeof setInterval> | null = null;
  private stopped = false;

  constructor(private readonly opts: ActorHostOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger;
    const every = Math.max(20, Math.min(Math.floor(opts.idleMs / 2), 5_000));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  register(type: string, factory: ActorFactory): void {
    if (this.factories.has(type)) throw new Error(`actor type ${type} is already registered`);
    this.factories.set(type, factory);
  }

  hasType(type: string): boolean {
    return this.factories.has(type);
  }

  partitionOf(address: ActorAddress): number {
    return partitionOf(address, this.opts.partitions);
  }

  /**
   * Queues `envelope` for its actor. Resolves with the reply (for `tell`: as
   * soon as the command is queued). Rejects at once when the mailbox is full
   * or this node does not own the actor's partition.
   */
  deliver(envelope: Envelope): Promise<unknown> {
    if (this.stopped) return Promise.reject(partitionMoved(this.partitionOf(envelope)));
    const factory = this.factories.get(envelope.type);
    if (factory === undefined) return Promise.reject(new Error(`unknown actor type ${envelope.type}`));
    const address = { type: envelope.type, key: envelope.key };
    const partition = this.partitionOf(address);
    const id = addressId(address);
    const fence = this.opts.ownership.fenceFor(partition);
    if (fence === undefined) return Promise.reject(partitionNotOwned(partition));
    let cell = this.cells.get(id);
    // An actor activated under an older lease holds state that may be stale.
    if (cell !== undefined && cell.fence.epoch !== fence.epoch) return Promise.reject(ownershipLost(partition));
    if (cell === undefined) {
      const actor = factory({ address, fence, clock: this.clock, log: this.log.child({ actor: envelope.type, key: envelope.key }) });
      cell = new Cell(id, address, partition, fence, actor, this.clock.now());
      this.cells.set(id, cell);
    }
    if (cell.closing !== null) return Promise.reject(cell.closing);
    if (cell.depth >= this.opts.mailboxSize) return Promise.reject(mailboxFull(address, this.opts.mailboxSize));
    const target = cell;
    return new Promise((resolve, reject) => {
      if (envelope.tell) {
        target.queue.push({
          envelope,
          resolve: () => {},
          reject: (e) => this.log.warn('told command failed', { actor: envelope.type, key: envelope.key, err: e }),
        });
        resolve(undefined);
      } else {
        target.queue.push({ envelope, resolve, reject });
      }
      if (!target.busy) void this.run(target);
    });
  }

  private async run(cell: Cell): Promise<void> {
    cell.busy = true;
    try {
      while (cell.queue.length > 0) {
        if (!cell.started) {
          try {
            await cell.actor.onStart?.();
            cell.started = true;
          } catch (e) {
            // Everyone who raced this start learns why it failed; the next
            // command starts over.
            for (const item of cell.queue.splice(0)) item.reject(e);
            this.noteFenced(cell, e);
            break;
          }
        }
        const item = cell.queue.shift()!;
        cell.current = 1;
        const t0 = performance.now();
        try {
          const meta = item.envelope.idempotencyKey === undefined ? {} : { idempotencyKey: item.envelope.idempotencyKey };
          const reply = await cell.actor.onMessage(item.envelope.command, meta);
          this.opts.observer?.commandDone(cell.address.type, performance.now() - t0, 'ok');
          item.resolve(reply);
        } catch (e) {
          this.opts.observer?.commandDone(cell.address.type, performance.now() - t0, 'error');
          item.reject(e);
          this.noteFenced(cell, e);
        } finally {
          cell.current = 0;
        }
      }
    } finally {
      cell.setIdle(this.clock.now());
    }
  }

  /** A fenced write means the cached state is stale: stop this actor and tell the owner. */
  private noteFenced(cell: Cell, e: unknown): void {
    if (!isAppError(e) || e.code !== 'ownership_lost') return;
    if (cell.closing === null) cell.closing = ownershipLost(cell.partition);
    for (const item of cell.queue.splice(0)) item.reject(cell.closing);
    this.opts.onOwnershipLost?.(cell.fence);
    void this.stopCell(cell);
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const cell of this.cells.values()) {
      if (!cell.busy && cell.queue.length === 0 && cell.closing === null && now - cell.lastActive >= this.opts.idleMs) {
        void this.passivate(cell);
      }
    }
  }

  /** Runs the idle hooks of actors idle for `idleMs` now (tests drive this with a fake clock). */
  passivateIdle(): Promise<void> {
    const now = this.clock.now();
    const due = [...this.cells.values()].filter(
      (c) => !c.busy && c.queue.length === 0 && c.closing === null && now - c.lastActive >= this.opts.idleMs,
    );
    return Promise.all(due.map((c) => this.passivate(c))).then(() => undefined);
  }

  private async passivate(cell: Cell): Promise<void> {
    if (cell.busy) return;
    cell.busy = true;
    let keep = false;
    try {
      keep = cell.started && (await cell.actor.onIdle?.()) === false;
    } catch (e) {
      this.log.warn('actor onIdle failed', { actor: cell.address.type, key: cell.address.key, err: e });
    }
    if (keep || cell.queue.length > 0) {
      cell.setIdle(this.clock.now());
      if (cell.queue.length > 0) void this.run(cell);
      return;
    }
    cell.busy = false;
    await this.stopCell(cell);
  }

  /** Waits for the running hook, then stops the actor and forgets it (unless new commands arrived meanwhile). */
  private async stopCell(cell: Cell): Promise<void> {
    await cell.whenNotBusy();
    if (cell.busy) return this.stopCell(cell);
    cell.busy = true;
    try {
      if (cell.started) await cell.actor.onStop?.();
    } catch (e) {
      this.log.warn('actor onStop failed', { actor: cell.address.type, key: cell.address.key, err: e });
    } finally {
      cell.started = false;
      const restart = cell.queue.length > 0 && cell.closing === null;
      if (!restart && this.cells.get(cell.id) === cell) this.cells.delete(cell.id);
      cell.setIdle(this.clock.now());
      if (restart) void this.run(cell);
    }
  }

  /**
   * Stops the actors of `partition` gracefully: they refuse new commands,
   * finish every command already queued, run `onStop`, and are forgotten.
   * Resolves once none is left (before the partition's lease is released).
   */
  async drainPartition(partition: number): Promise<void> {
    const cells = [...this.cells.values()].filter((c) => c.partition === partition);
    const moved = partitionMoved(partition);
    for (const c of cells) if (c.closing === null) c.closing = moved;
    await Promise.all(
      cells.map(async (c) => {
        while (c.queue.length > 0 || c.busy) {
          if (!c.busy) void this.run(c);
          await c.whenNotBusy();
        }
        await this.stopCell(c);
      }),
    );
  }

  /**
   * The partition was lost (lease not renewed, or a write was fenced): waiting
   * commands fail with a retryable error at once; the running one finishes
   * (its write will be refused by the fence if a new owner exists).
   */
  async abandonPartition(partition: number): Promise<void> {
    const cells = [...this.cells.values()].filter((c) => c.partition === partition);
    const err = ownershipLost(partition);
    for (const c of cells) {
      if (c.closing === null) c.closing = err;
      for (const item of c.queue.splice(0)) item.reject(err);
    }
    await Promise.all(cells.map((c) => this.stopCell(c)));
  }

  /** Drains every actor and stops the sweeper. */
  async stop(): Promise<void> {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    this.stopped = true;
    const partitions = new Set([...this.cells.values()].map((c) => c.partition));
    await Promise.all([...partitions].map((p) => this.drainPartition(p)));
  }

  /** Actors in memory, and commands waiting in their mailboxes. */
  stats(): { actors: number; mailboxDepth: number; maxMailboxDepth: number } {
    let depth = 0;
    let max = 0;
    for (const c of this.cells.values()) {
      depth += c.depth;
      if (c.depth > max) max = c.depth;
    }
    return { actors: this.cells.size, mailboxDepth: depth, maxMailboxDepth: max };
  }

  /** Number of actors of `partition` currently in memory. */
  actorsIn(partition: number): number {
    let n = 0;
    for (const c of this.cells.values()) if (c.partition === partition) n++;
    return n;
  }
}
