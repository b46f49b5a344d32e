import type { Clock } from '../../clock.js';
import type { RateLimiter, RateLimitResult } from './port.js';

/** Hit times of one key in increasing order; `head` skips the ones that left the window. */
interface Log {
  times: number[];
  head: number;
  windowMs: number;
}

/** In-process rate limits (embedded mode: one node). Not persisted: a restart forgets recent hits. */
export function createMemoryRateLimiter(clock: Clock): RateLimiter {
  const logs = new Map<string, Log>();
  let sweeps = 0;
  return {
    async hit(key, limit, windowMs): Promise<RateLimitResult> {
      const now = clock.now();
      const from = now - windowMs;
      let log = logs.get(key);
      if (log === undefined) {
        log = { times: [], head: 0, windowMs };
        logs.set(key, log);
      }
      const t = log.times;
      while (log.head < t.length && t[log.head]! <= from) log.head++;
      if (log.head > 1024 && log.head * 2 > t.length) {
        log.times = t.slice(log.head);
        log.head = 0;
      }
      log.windowMs = windowMs;
      // Now and then forget keys whose every hit has left their own window.
      if (++sweeps % 1000 === 0) {
        for (const [k, l] of logs) if (k !== key && (l.times[l.times.length - 1] ?? 0) <= now - l.windowMs) logs.delete(k);
      }
      const times = log.times;
      const count = times.length - log.head;
      if (count >= limit) {
        const edge = times[times.length - limit]!;
        return { allowed: false, limit, remaining: 0, retryAfterMs: Math.max(1, edge + windowMs - now), resetMs: times[times.length - 1]! + windowMs - now };
      }
      times.push(now);
      return { allowed: true, limit, remaining: limit - count - 1, retryAfterMs: 0, resetMs: times[log.head]! + windowMs - now };
    },
  };
}
