import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import { randomToken, safeEqual } from '../domain/secrets.js';
import type { Store } from '../store/index.js';

const META_KEY = 'operatorTokenHash';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Guards the operator API. The token comes from OPERATOR_TOKEN, or (embedded
 * first start) is generated once and only its hash kept in the store.
 *
 * Guarantees:
 * - With OPERATOR_TOKEN set, that token and only it is accepted; `reset()` refuses.
 * - Otherwise the stored hash is read on every check, so a token reset by
 *   `operator reset-token` (against Redis, while nodes run) takes effect at
 *   once and the old token stops working everywhere.
 */
export class OperatorAuth {
  private constructor(
    private readonly store: Store,
    private readonly configuredHash: string | null,
  ) {}

  static async load(store: Store, configured: string | undefined): Promise<OperatorAuth> {
    return new OperatorAuth(store, configured === undefined ? null : sha(configured));
  }

  /** True when OPERATOR_TOKEN fixes the token (nothing stored is used). */
  get configured(): boolean {
    return this.configuredHash !== null;
  }

  /** Generates and stores a token when none exists; returns it, or null if one was already set. */
  async generate(): Promise<string | null> {
    if (this.configured) return null;
    const token = newToken();
    return (await this.store.meta.setIfAbsent(META_KEY, sha(token))) ? token : null;
  }

  /** Replaces the stored token with a new one and returns it; the old one stops working. */
  async reset(): Promise<string> {
    if (this.configured) throw new AppError(409, 'operator_token_configured', 'OPERATOR_TOKEN is set, so the service uses it and ignores a stored token: change the variable instead');
    const token = newToken();
    await this.store.meta.set(META_KEY, sha(token));
    return token;
  }

  async authenticate(token: string | undefined): Promise<void> {
    const hash = this.configuredHash ?? (await this.store.meta.get(META_KEY));
    if (hash === null) throw new AppError(401, 'unauthorized', 'the operator API is disabled: set OPERATOR_TOKEN (or run `npm run admin -- operator reset-token`)');
    if (token === undefined || !safeEqual(sha(token), hash)) throw new AppError(401, 'unauthorized', 'missing or invalid operator token');
  }
}

const newToken = () => 'op_' + randomToken(24);
