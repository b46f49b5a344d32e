export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in the current window (after this one). */
  remaining: number;
  /** Milliseconds until a request would be allowed again (0 when allowed and room remains). */
  retryAfterMs: number;
  /** Milliseconds until the window has fully drained. */
  resetMs: number;
}

/**
 * Sliding-window rate limits: at most `limit` allowed hits per `windowMs`
 * for one key, counted over the trailing window. Refused hits do not count.
 * The Redis adapter is shared by every node and judges time by the Redis
 * server's clock, so nodes with drifting clocks still agree.
 */
export interface RateLimiter {
  hit(key: string, limit: number, windowMs: number): Promise<RateLimitResult>;
}
