/*
 * Messaging rules as plain functions over plain data: the 24-hour customer
 * service window and the order of a sent message's states.
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

export const MESSAGE_STATUSES = ['accepted', 'sent', 'delivered', 'read', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

const RANK: Record<MessageStatus, number> = { accepted: 0, sent: 1, delivered: 2, read: 3, failed: 1.5 };

/**
 * The status a message moves to when the network reports `reported`, or null
 * when the report is stale and changes nothing. Statuses only move forward:
 * accepted → sent → delivered → read. `failed` is final and can only follow
 * accepted or sent (a message the customer's phone has is not failed by a
 * late, reordered report). A repeat of the current status is stale too, so a
 * redelivered webhook is not reported twice.
 */
export function nextStatus(current: MessageStatus, reported: MessageStatus): MessageStatus | null {
  if (current === 'failed' || reported === 'accepted') return null;
  if (reported === 'failed') return current === 'accepted' || current === 'sent' ? 'failed' : null;
  return RANK[reported] > RANK[current] ? reported : null;
}
