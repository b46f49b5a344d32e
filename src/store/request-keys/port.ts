/** What a key's first request was compared with this one. */
export type RequestKeyMatch = 'new' | 'same' | 'different';

/**
 * Remembers which request body an idempotency key was first used with, so a
 * retry with the key but another body is refused instead of silently
 * answered with the first result.
 *
 * Guarantees, in both adapters:
 * - `remember` is atomic per key: of racing first uses, exactly one is `new`;
 *   the others compare against it (`same` or `different`).
 * - A key is remembered for `ttlMs` after its first use, then forgotten.
 * - Keys are per organization.
 */
export interface RequestKeyRepo {
  remember(organizationId: string, key: string, fingerprint: string, ttlMs: number): Promise<RequestKeyMatch>;
}

/** How long idempotency keys of sends and ticket creates are remembered. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3600 * 1000;
