import type { Clock } from '../clock.js';
import type { RateLimiter, RateLimitResult } from './ratelimit-types.js';

/** In-process rate limits (embedded mode: one node). Not persisted: a restart forgets recent hits. */
export function createMemoryRateLimiter(clock: Clock): RateLimiter {
  const hits = new Map<string, number[]>();
  let sweeps = 0;
  return {
    async hit(key, limit, windowMs): Promise<RateLimitResult> {
      const now = clock.now();
      const from = now - windowMs;
      const list = (hits.get(key) ?? []).filter((t) => t > from);
      if (++sweeps % 1000 === 0) for (const [k, l] of hits) if ((l[l.length - 1] ?? 0) <= from) hits.delete(k);
      if (list.length >= limit) {
        hits.set(key, list);
        const retry = list[list.length - limit]! + windowMs - now;
        return { allowed: false, limit, remaining: 0, retryAfterMs: Math.max(1, retry), resetMs: list[list.length - 1]! + windowMs - now };
      }
      list.push(now);
      hits.set(key, list);
      const remaining = limit - list.length;
      return { allowed: true, limit, remaining, retryAfterMs: 0, resetMs: list[0]! + windowMs - now };
    },
  };
}
