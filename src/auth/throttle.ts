import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import type { FailureCounter } from '../store/index.js';

/** One authentication attempt, as far as throttling is concerned. Never carries the secret. */
export interface AuthAttempt {
  via: 'password' | 'api_key' | 'session' | 'inbox_token';
  /** The client address (express `req.ip`). */
  address?: string | undefined;
  /** The sign-in email, lower case. */
  account?: string | undefined;
  /** The first characters of a presented API key. */
  keyPrefix?: string | undefined;
}

export interface ThrottleLimits {
  windowMs: number;
  perAccount: number;
  perAddress: number;
}

/**
 * Failed-authentication throttling, one mechanism for passwords, API keys
 * and session cookies: failures are counted per client address and per
 * account (sign-in email) or API key prefix, in windows that start at the
 * first failure. Past a limit every attempt of that subject is refused with
 * 429 `too_many_attempts` and `Retry-After` until its window ends, whether
 * or not the credential is right, so a guesser learns nothing more.
 *
 * Guarantees:
 * - Counts live in the store's `FailureCounter`: shared by every node when
 *   clustered (Redis), so limits hold across a load balancer.
 * - Every failure is logged (subject and reason, never the secret).
 * - Successful attempts are not counted.
 */
export class FailedAuthThrottle {
  constructor(
    private readonly counter: FailureCounter,
    private readonly log: Logger,
    private readonly limits: ThrottleLimits,
  ) {}

  private subjects(a: AuthAttempt): { subject: string; limit: number }[] {
    const out: { subject: string; limit: number }[] = [];
    if (a.address) out.push({ subject: `addr:${a.address}`, limit: this.limits.perAddress });
    if (a.account) out.push({ subject: `acct:${a.account.toLowerCase()}`, limit: this.limits.perAccount });
    if (a.keyPrefix) out.push({ subject: `key:${a.keyPrefix}`, limit: this.limits.perAccount });
    return out;
  }

  /** Throws 429 when any subject of the attempt is past its limit. */
  async assertAllowed(a: AuthAttempt): Promise<void> {
    const subjects = this.subjects(a);
    if (subjects.length === 0) return;
    const waitMs = await this.counter.blockedMs(subjects);
    if (waitMs > 0) throw tooManyAttempts(waitMs);
  }

  /** Counts and logs a failed attempt. */
  async failed(a: AuthAttempt, reason: string): Promise<void> {
    const subjects = this.subjects(a);
    this.log.warn('authentication failed', { via: a.via, reason, address: a.address, account: a.account, keyPrefix: a.keyPrefix });
    if (subjects.length === 0) return;
    await this.counter.record(
      subjects.map((s) => s.subject),
      this.limits.windowMs,
    );
  }
}

export function tooManyAttempts(waitMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new AppError(429, 'too_many_attempts', `too many failed attempts; try again in ${seconds} s`, { retryAfterSeconds: seconds }, { retryAfterSeconds: seconds });
}
