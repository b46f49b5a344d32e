import type { Clock } from '../../clock.js';
import type { Logger } from '../../log.js';
import type { ConversationIndexRepo } from '../../store/conversations/port.js';
import { partitionOf } from '../partitions.js';
import type { ActorSystem } from '../system.js';
import { CONVERSATION_ACTOR } from './actor.js';
import { conversationKey } from './state.js';

export interface ConversationTimersOptions {
  index: ConversationIndexRepo;
  system: ActorSystem;
  clock: Clock;
  log: Logger;
  /** How often the index is looked at (default 1 s): a timer fires at most this late. */
  intervalMs?: number;
  /** Most conversations told per sweep (default 200); the rest wait for the next. */
  batch?: number;
}

/**
 * The conversation actors' durable timers (the bot's fallback). A timer is
 * part of the actor's fenced state and is projected into the conversation
 * index as `dueAt`; each node sweeps the index and tells the actors of the
 * partitions it owns that something is due. The actor decides on its own
 * current state whether it still is, so a sweep that races a reply, a
 * second node's sweep during a move, or a repeat after a failure changes
 * nothing twice. Nothing lives in one node's memory: after a crash or a
 * restart the partition's next owner finds the same timers in the index.
 *
 * Guarantees: a due timer is acted on within about `intervalMs` of its time
 * by whichever node owns its contact then; never twice (the actor clears it
 * in the same write that acts on it).
 */
export class ConversationTimers {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private readonly batch: number;

  constructor(private readonly o: ConversationTimersOptions) {
    this.batch = o.batch ?? 200;
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.sweep().catch((e: unknown) => this.o.log.warn('conversation timer sweep failed; tried again shortly', { err: e })), this.o.intervalMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => 0);
  }

  /** One sweep: tells every due conversation of this node's partitions; resolves with how many were told. */
  sweep(): Promise<number> {
    // One sweep at a time: a slow one is not overlapped by the next interval.
    this.running ??= this.sweepOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async sweepOnce(): Promise<number> {
    const { system } = this.o;
    const owned = new Set(system.coordinator.ownedPartitions());
    if (owned.size === 0) return 0;
    const due = await this.o.index.due(new Date(this.o.clock.now()).toISOString(), this.batch);
    const mine = due
      .map((d) => conversationKey(d.organizationId, d.audienceExternalId))
      .filter((key) => owned.has(partitionOf({ type: CONVERSATION_ACTOR, key }, system.settings.partitions)));
    const results = await Promise.allSettled(mine.map((key) => system.ask({ type: CONVERSATION_ACTOR, key }, { kind: 'automation.tick' })));
    for (const r of results) if (r.status === 'rejected') this.o.log.warn('a conversation timer could not be acted on; tried again at the next sweep', { err: r.reason });
    return mine.length;
  }
}
