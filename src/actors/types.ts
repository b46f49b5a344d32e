import type { Clock } from '../clock.js';
import type { Fence } from '../domain/fence.js';
import type { Logger } from '../log.js';

export type { Clock } from '../clock.js';
export { systemClock } from '../clock.js';

/** Names one actor: its kind and its identity within that kind. */
export interface ActorAddress {
  type: string;
  key: string;
}

/** One command on its way to an actor. Plain JSON: it may cross the network. */
export interface Envelope {
  type: string;
  key: string;
  command: unknown;
  /** Same key, same command: the actor answers a retry with the first result. */
  idempotencyKey?: string;
  /** `tell`: the sender wants the command accepted, not its result. */
  tell?: boolean;
}

/** What an actor is given when it is created (activated). */
export interface ActorContext {
  address: ActorAddress;
  /** The ownership its state writes are conditional on. */
  fence: Fence;
  clock: Clock;
  log: Logger;
}

export interface MessageMeta {
  idempotencyKey?: string;
}

/**
 * An actor: the only code that touches one address's state, driven by the
 * host one call at a time.
 *
 * - `onStart` runs once before the first message (loads state). When it
 *   fails, every message waiting for it fails with the same error and the next
 *   message tries again.
 * - `onMessage` runs for each command in arrival order, never concurrently
 *   with another hook of the same actor. Its result (or error) is the reply.
 * - `onIdle` runs after the actor has had nothing to do for the idle time;
 *   resolve to `false` to stay in memory, anything else lets it passivate.
 * - `onStop` runs when the actor is passivated, drained (its partition moves)
 *   or the node stops; state must already be durable by then, this is for
 *   flushing what is merely cached.
 */
export interface Actor {
  onStart?(): Promise<void>;
  onMessage(command: unknown, meta: MessageMeta): Promise<unknown>;
  onIdle?(): Promise<boolean | void> | boolean | void;
  onStop?(): Promise<void>;
}

export type ActorFactory = (ctx: ActorContext) => Actor;

/** Options of one `ask` / `tell`. */
export interface AskOptions {
  idempotencyKey?: string;
  /** Give up (503, retryable) after this long. Defaults to the system's setting. */
  timeoutMs?: number;
}
