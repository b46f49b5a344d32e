/*
 * Messaging rules as plain functions over plain data: the 24-hour customer
 * service window. (The order of a sent message's states is a domain rule:
 * src/domain/message-status.ts.)
 */

/** The chat network's free-messaging window after a customer's last message. */
export const CUSTOMER_SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

export type WindowState =
  | { open: true; closesAt: string }
  | { open: false; closedAt: string | null };

/**
 * Whether free-form messages (text, buttons, media) may be sent now.
 * `lastInboundAt` is the time of the customer's last message (null: never
 * wrote). Templates are not subject to it.
 */
export function customerServiceWindow(lastInboundAt: string | null, now: Date): WindowState {
  if (lastInboundAt === null) return { open: false, closedAt: null };
  const closes = Date.parse(lastInboundAt) + CUSTOMER_SERVICE_WINDOW_MS;
  if (now.getTime() < closes) return { open: true, closesAt: new Date(closes).toISOString() };
  return { open: false, closedAt: new Date(closes).toISOString() };
}

/** Keeps the later of two inbound times (webhooks may arrive out of order). */
export function laterInbound(current: string | null, incoming: string): string {
  if (current === null) return incoming;
  return Date.parse(incoming) > Date.parse(current) ? incoming : current;
}
