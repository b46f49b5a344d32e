import { AppError } from '../errors.js';
import type { Principal } from '../domain/types.js';
import type { AuthSessions } from './sessions.js';
import type { FailedAuthThrottle } from './throttle.js';

/** What authentication reads from a request (framework-free). */
export interface RequestCredentials {
  method: string;
  /** The `Authorization` header as sent. */
  authorization: string | undefined;
  /** The bearer token in it, when it is one. */
  bearer: string | undefined;
  cookieHeader: string | undefined;
  /** The `X-CSRF-Token` header. */
  csrfToken: string | undefined;
  address: string | undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The first characters of a presented key, made safe for a log line and a store key. */
export function keyPrefixOf(key: string): string {
  return key.slice(0, 10).replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * Who is calling, for the REST routes: an API key (bearer) or a dashboard
 * session (cookie, with CSRF on unsafe methods).
 *
 * Guarantees:
 * - A request with an `Authorization` header is judged by its key alone,
 *   whatever cookie it also carries; it never needs a CSRF token.
 * - With the cookie, POST/PATCH/PUT/DELETE need `X-CSRF-Token` equal to the
 *   session's token (compared in constant time), else 403 `csrf_failed`.
 * - API key failures are throttled per client address and key prefix: the
 *   throttle is consulted beside the key lookup (no added latency), and a
 *   throttled caller gets 429 even with a valid key.
 */
export class RequestAuthenticator {
  constructor(
    private readonly authenticateKey: (key: string | undefined) => Promise<Principal>,
    private readonly sessions: AuthSessions,
    private readonly throttle: FailedAuthThrottle,
  ) {}

  /** An API key with throttling; `address` may be unknown (then only the key prefix counts). */
  async apiKey(key: string | undefined, address?: string): Promise<Principal> {
    // No credential at all is not an attempt: nothing to count.
    if (key === undefined) return this.authenticateKey(undefined);
    const attempt = { via: 'api_key' as const, address, keyPrefix: keyPrefixOf(key) };
    const [gate, result] = await Promise.allSettled([this.throttle.assertAllowed(attempt), this.authenticateKey(key)]);
    if (gate.status === 'rejected') throw gate.reason;
    if (result.status === 'rejected') {
      if (result.reason instanceof AppError && result.reason.status === 401) await this.throttle.failed(attempt, 'invalid API key');
      throw result.reason;
    }
    return result.value;
  }

  /**
   * `apiKey` routes take a bearer key or the session cookie; `session`
   * routes only the cookie.
   */
  async authenticate(c: RequestCredentials, kind: 'apiKey' | 'session'): Promise<Principal> {
    if (kind === 'apiKey' && (c.authorization !== undefined || !this.sessions.hasCookie(c.cookieHeader))) {
      // An Authorization header that is not `Bearer <token>` is a failed key attempt too.
      return this.apiKey(c.authorization === undefined ? undefined : (c.bearer ?? ''), c.address);
    }
    const signed = await this.sessions.resolve(c.cookieHeader);
    if (!SAFE_METHODS.has(c.method.toUpperCase())) this.sessions.assertCsrf(signed, c.csrfToken);
    return signed.principal;
  }
}
