/** A send's turn on a phone number: go after `waitMs`, or refused because the backlog is full. */
export type PaceGrant = { ok: true; waitMs: number } | { ok: false; retryAfterMs: number };

/**
 * The send budget of each phone number (channel), shared by every node that
 * sends on it.
 *
 * Guarantees:
 * - Turns are spaced `1000 / perSecond` ms apart, in the order `reserve` was
 *   called (one atomic step per call, or, in Redis, per channel for the calls
 *   one node makes in one turn of its event loop, granted in the order made
 *   as if made one after the other), with no burst: however many callers,
 *   turns granted on one channel never come faster than its tier.
 * - A turn further than `maxWaitMs` away is refused (`ok: false`) and takes
 *   nothing from the budget; `retryAfterMs` is when a turn would be within
 *   reach again. The backlog of one channel is thus at most
 *   `perSecond × maxWaitMs / 1000` sends.
 * - Time is real time (the store's clock in Redis), whatever clock the
 *   service runs on: throughput is a property of the network.
 */
export interface SendPacer {
  reserve(channelId: string, perSecond: number, maxWaitMs: number): Promise<PaceGrant>;
}
