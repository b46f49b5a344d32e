import type { DomainEvent } from './types.js';

/** Organization ids and event types become NATS subject tokens: no dots in ids, no wildcards or spaces anywhere. */
const ORG_ID = /^[A-Za-z0-9_-]{1,128}$/;
const TYPE = /^[a-z0-9_]+(\.[a-z0-9_]+)*$/;

/** Throws when `event` cannot be recorded as is (a programming error of the producer). */
export function assertPublishable(event: DomainEvent): void {
  if (typeof event.id !== 'string' || event.id.length === 0 || event.id.length > 200) throw new TypeError('event.id must be a non-empty string');
  if (!ORG_ID.test(event.organizationId)) throw new TypeError(`event.organizationId ${JSON.stringify(event.organizationId)} is not a valid subject token`);
  if (!TYPE.test(event.type) || event.type.length > 100) throw new TypeError(`event.type ${JSON.stringify(event.type)} is not valid`);
  if (typeof event.createdAt !== 'string' || Number.isNaN(Date.parse(event.createdAt))) throw new TypeError('event.createdAt must be an ISO date-time');
}

/** Delay before a failed handler sees the event again: 1 s doubling to 1 min. */
export function redeliveryDelayMs(deliveryCount: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.max(0, deliveryCount - 1));
}

/** `read`'s default and largest `limit`. */
export const DEFAULT_READ_LIMIT = 1000;
export const MAX_READ_LIMIT = 10_000;

/**
 * Checks `read`'s arguments and resolves its range against the head: the last
 * seq to include (never past the head: later events are read by the next
 * call) and the limit. Throws a TypeError on a programming error of the caller.
 */
export function readBounds(organizationId: string, afterSeq: number, opts: { untilSeq?: number; limit?: number }, headSeq: number): { untilSeq: number; limit: number } {
  if (!ORG_ID.test(organizationId)) throw new TypeError(`organizationId ${JSON.stringify(organizationId)} is not valid`);
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new TypeError('afterSeq must be an integer >= 0');
  const until = opts.untilSeq ?? headSeq;
  if (!Number.isSafeInteger(until) || until < 0) throw new TypeError('untilSeq must be an integer >= 0');
  const limit = opts.limit ?? DEFAULT_READ_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_READ_LIMIT) throw new TypeError(`limit must be an integer from 1 to ${MAX_READ_LIMIT}`);
  return { untilSeq: Math.min(until, headSeq), limit };
}

/** Retention may have dropped events after `afterSeq` when the oldest one held is past afterSeq + 1. */
export function isTruncated(afterSeq: number, oldestSeq: number): boolean {
  return afterSeq + 1 < oldestSeq;
}
