import { AppError, isAppError } from '../errors.js';
import type { ActorAddress } from './types.js';

/**
 * Errors of the actor runtime. All are 503 with `Retry-After`: the command was
 * not applied and may be sent again (with the same idempotency key).
 */

export const mailboxFull = (address: ActorAddress, capacity: number, retryAfterSeconds = 1) =>
  new AppError(503, 'mailbox_full', `too many commands are waiting for this ${address.type}; retry shortly`, { capacity }, { retryAfterSeconds });

/** The partition is moving to another node; the router retries elsewhere. */
export const partitionMoved = (partition: number) =>
  new AppError(503, 'partition_moved', `partition ${partition} is moving to another node`, { partition }, { retryAfterSeconds: 1 });

/** This node does not own the partition (any more, or not yet). */
export const partitionNotOwned = (partition: number) =>
  new AppError(503, 'partition_not_owned', `this node does not own partition ${partition}`, { partition }, { retryAfterSeconds: 1 });

/** A state write was refused because another node took the partition over. */
export const ownershipLost = (partition: number, cause?: unknown) =>
  new AppError(503, 'ownership_lost', `another node took partition ${partition} over`, { partition }, { retryAfterSeconds: 1, cause });

export const actorUnavailable = (message: string, retryAfterSeconds = 2) =>
  new AppError(503, 'actor_unavailable', message, undefined, { retryAfterSeconds });

/** Codes that mean "not applied here, try the partition's (new) owner". */
export const ROUTING_RETRY_CODES: ReadonlySet<string> = new Set(['partition_moved', 'partition_not_owned', 'ownership_lost']);

export interface WireError {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  retryAfterSeconds?: number;
  extra?: Record<string, unknown>;
}

/** An error as it crosses the network; anything but an AppError is hidden. */
export function toWireError(e: unknown): WireError {
  if (isAppError(e)) {
    return { status: e.status, code: e.code, message: e.message, details: e.details, retryAfterSeconds: e.retryAfterSeconds, extra: e.extra };
  }
  return { status: 500, code: 'internal_error', message: 'internal error' };
}

export function fromWireError(w: WireError): AppError {
  return new AppError(w.status, w.code, w.message, w.details, { retryAfterSeconds: w.retryAfterSeconds, extra: w.extra });
}
