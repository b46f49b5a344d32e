import type { AuthSession } from '../../domain/types.js';

/** What a single-use inbox token stands for: the session that asked for it. */
export interface InboxTokenGrant {
  organizationId: string;
  userId: string;
  sessionIdHash: string;
}

/**
 * Dashboard sessions and single-use inbox tokens, kept server-side so that
 * every node sees a logout or a deactivation on the next request.
 *
 * Guarantees, in both adapters:
 * - Records are found by the SHA-256 of the secret the browser holds; the
 *   secret itself is never stored.
 * - `touch` never brings back a session that was deleted meanwhile.
 * - A record is gone (not just ignored) by `evictAtMs`, so stale sessions do
 *   not pile up; whether a session is still valid (idle and absolute
 *   timeouts) is the caller's judgement, on every read.
 * - `takeInboxToken` hands a token's grant out at most once, across nodes.
 */
export interface AuthSessionRepo {
  create(session: AuthSession, evictAtMs: number): Promise<void>;
  get(idHash: string): Promise<AuthSession | null>;
  /** Records activity and moves the eviction time; a no-op for a session that no longer exists. */
  touch(idHash: string, lastSeenAt: string, evictAtMs: number): Promise<void>;
  delete(idHash: string): Promise<void>;
  /** Ends every session of the user except `keep`; resolves once none of them authenticates anywhere. */
  deleteForUser(organizationId: string, userId: string, keep?: string): Promise<number>;
  putInboxToken(tokenHash: string, grant: InboxTokenGrant, ttlMs: number): Promise<void>;
  /** Returns the grant and deletes it in one step; null when unknown, used or expired. */
  takeInboxToken(tokenHash: string): Promise<InboxTokenGrant | null>;
}

export interface FailureCount {
  count: number;
  /** Milliseconds until the window (which started at its first failure) resets; 0 when nothing is counted. */
  resetMs: number;
}

/**
 * Failed authentication attempts per subject (a client address, an account,
 * a key prefix), in fixed windows that start at a subject's first failure.
 * The Redis adapter is shared by all nodes and judges time by Redis's clock.
 */
export interface FailureCounter {
  get(subjects: string[]): Promise<FailureCount[]>;
  /**
   * Milliseconds until every subject is below its limit again (0 when none is
   * at it): `get` narrowed to the question each authentication asks, so the
   * common answer (nobody is throttled) costs one plain read per subject.
   */
  blockedMs(limits: { subject: string; limit: number }[]): Promise<number>;
  record(subjects: string[], windowMs: number): Promise<FailureCount[]>;
}
