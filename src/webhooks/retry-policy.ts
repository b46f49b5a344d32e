import type { HttpOutcome } from './http-client.js';

export interface RetrySettings {
  /** First retry delay; doubles per attempt. */
  baseMs: number;
  maxDelayMs: number;
  /** No retry is scheduled later than this after the first attempt (or a resend). */
  windowMs: number;
}

export type Verdict =
  | { kind: 'succeeded' }
  | { kind: 'retry'; reason: string; retryAfterMs: number | null }
  | { kind: 'failed'; reason: string }
  /** 410 Gone: the receiver asks to stop; the registration is disabled. */
  | { kind: 'disable'; reason: string };

/**
 * What an attempt's outcome means. Retried: timeouts, connection errors,
 * 408, 429 and 5xx. Final: other 4xx, 3xx (redirects are not followed), and
 * addresses the SSRF guard refused. 410 disables the registration.
 */
export function judge(o: HttpOutcome): Verdict {
  if (o.status === null) {
    if (o.forbidden) return { kind: 'failed', reason: o.error ?? 'forbidden address' };
    return { kind: 'retry', reason: o.error ?? 'no response', retryAfterMs: null };
  }
  const s = o.status;
  if (s >= 200 && s < 300) return { kind: 'succeeded' };
  if (s === 410) return { kind: 'disable', reason: 'the receiver answered 410 Gone' };
  if (s >= 300 && s < 400) return { kind: 'failed', reason: `HTTP ${s}: redirects are not followed` };
  if (s === 408 || s === 429 || s >= 500) return { kind: 'retry', reason: `HTTP ${s}`, retryAfterMs: o.retryAfterMs };
  return { kind: 'failed', reason: `HTTP ${s}` };
}

/**
 * Delay before retry number `attempt` (1 = the first retry): exponential from
 * `baseMs`, capped, with ±20 % jitter so receivers coming back are not hit by
 * a synchronized wave; never shorter than the receiver's `Retry-After`.
 */
export function retryDelayMs(attempt: number, s: RetrySettings, retryAfterMs: number | null, random: () => number = Math.random): number {
  const exp = Math.min(s.maxDelayMs, s.baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  const jittered = Math.round(exp * (0.8 + 0.4 * random()));
  return retryAfterMs === null ? jittered : Math.max(jittered, Math.min(retryAfterMs, s.windowMs));
}

/**
 * When to try next, or null to give up: a retry that would fall past
 * `retryUntil` becomes one last attempt at `retryUntil` itself.
 */
export function nextAttemptAt(now: number, delayMs: number, retryUntil: number): number | null {
  if (now >= retryUntil) return null;
  return Math.min(now + delayMs, retryUntil);
}
