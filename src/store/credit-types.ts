/**
 * Organization credit balances. Template sends reserve their price before
 * the network call and refund it when the network rejects the message.
 *
 * Guarantees, in both adapters:
 * - `reserve` is atomic: it takes the amount only if the balance covers it,
 *   so concurrent sends never drive a balance below zero.
 * - A reservation is refunded at most once, however often `refund` is
 *   called (retries, a redelivered failure webhook).
 * - `reserve` with a reservation id already used changes nothing and reports
 *   the first outcome, so a retried command is not charged twice.
 * - `topUp` with an operation id counts once.
 */
export interface CreditRepo {
  balance(organizationId: string): Promise<number>;
  topUp(organizationId: string, amount: number, operationId?: string): Promise<{ balance: number; applied: boolean }>;
  reserve(organizationId: string, reservationId: string, amount: number): Promise<{ ok: boolean; balance: number }>;
  refund(organizationId: string, reservationId: string): Promise<{ refunded: boolean; balance: number }>;
}

/** Reservations and top-up ids are remembered this long (refunds of older sends are refused). */
export const CREDIT_RECORD_TTL_MS = 30 * 24 * 3600 * 1000;
