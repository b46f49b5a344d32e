/**
 * Organization credit balances. Template sends reserve their price before
 * the network call; a send that did not happen releases it, a sent message
 * the network later reports failed is refunded.
 *
 * Guarantees, in both adapters:
 * - `reserve` is atomic: it takes the amount only if the balance covers it,
 *   so concurrent sends never drive a balance below zero.
 * - `reserve` with a reservation id that is held (or was refunded) changes
 *   nothing and reports success, so a retried send is not charged twice.
 * - `release` gives a held reservation back and forgets it: the send did not
 *   happen, so a retry with the same idempotency key (same reservation id) is
 *   a new attempt and is charged again. Without that, a retry after a refused
 *   attempt (a full mailbox, say) would be sent for free.
 * - `refund` gives a held reservation back and remembers it as refunded: the
 *   message was sent and then failed; a retry of that send is answered as
 *   sent, and must not be charged again.
 * - Either gives a reservation back at most once, however often, and in
 *   whatever mix, they are called (retries, redelivered webhooks, a stale owner).
 * - `topUp` with an operation id counts once.
 */
/** One change of a balance, as the ledger keeps it. */
export interface CreditEntry {
  at: string;
  /** `top_up` adds; `charge` reserves a send's price; `refund` and `release` give a charge back. */
  kind: 'top_up' | 'charge' | 'refund' | 'release';
  /** Signed: negative for a charge. */
  amount: number;
  /** The balance right after this change. */
  balance: number;
  /** The top-up's operation id or the send's reservation id, when there is one. */
  reference: string | null;
}

/** Changes the ledger keeps per organization (oldest dropped first). */
export const CREDIT_LEDGER_SIZE = 1000;

export interface CreditRepo {
  balance(organizationId: string): Promise<number>;
  /** The latest balance changes, newest first (at most `CREDIT_LEDGER_SIZE` kept); each written atomically with its change. */
  history(organizationId: string, limit: number): Promise<CreditEntry[]>;
  topUp(organizationId: string, amount: number, operationId?: string): Promise<{ balance: number; applied: boolean }>;
  reserve(organizationId: string, reservationId: string, amount: number): Promise<{ ok: boolean; balance: number }>;
  refund(organizationId: string, reservationId: string): Promise<{ refunded: boolean; balance: number }>;
  release(organizationId: string, reservationId: string): Promise<{ released: boolean; balance: number }>;
}

/** Reservations and top-up ids are remembered this long (refunds of older sends are refused). */
export const CREDIT_RECORD_TTL_MS = 30 * 24 * 3600 * 1000;
