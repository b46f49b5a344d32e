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
