/*
 * The chat network's 24-hour customer service window, the one rule every
 * side uses: the conversation actor refuses free-form sends outside it, the
 * inbox shows it, the sandbox network enforces it as Meta does.
 */

/** The chat network's free-messaging window after a customer's last message. */
export const CUSTOMER_SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

export type WindowState = { open: true; closesAt: string } | { open: false; closedAt: string | null };

/** When the window of a customer who last wrote at `lastInboundAt` closes (null: they never wrote). */
export function serviceWindowClosesAt(lastInboundAt: string | null): Date | null {
  return lastInboundAt === null ? null : new Date(Date.parse(lastInboundAt) + CUSTOMER_SERVICE_WINDOW_MS);
}

/**
 * Whether free-form messages (text, buttons, media) may be sent now.
 * `lastInboundAt` is the time of the customer's last message (null: never
 * wrote). Templates are not subject to it.
 */
export function customerServiceWindow(lastInboundAt: string | null, now: Date): WindowState {
  const closes = serviceWindowClosesAt(lastInboundAt);
  if (closes === null) return { open: false, closedAt: null };
  return now.getTime() < closes.getTime() ? { open: true, closesAt: closes.toISOString() } : { open: false, closedAt: closes.toISOString() };
}

export function isWithinServiceWindow(lastInboundAt: string | null, now: Date): boolean {
  return customerServiceWindow(lastInboundAt, now).open;
}

/** Keeps the later of two inbound times (webhooks may arrive out of order). */
export function laterInbound(current: string | null, incoming: string): string {
  if (current === null) return incoming;
  return Date.parse(incoming) > Date.parse(current) ? incoming : current;
}
