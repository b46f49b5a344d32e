import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import { randomToken, safeEqual } from '../domain/secrets.js';
import type { Store } from '../store/index.js';

const META_KEY = 'operatorTokenHash';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Guards the operator API. The token comes from OPERATOR_TOKEN, or (embedded
 * first start) is generated once and only its hash kept in the store.
 */
export class OperatorAuth {
  private constructor(private hash: string | null) {}

  static async load(store: Store, configured: string | undefined): Promise<OperatorAuth> {
    if (configured !== undefined) return new OperatorAuth(sha(configured));
    return new OperatorAuth(await store.meta.get(META_KEY));
  }

  /** Generates and stores a token when none exists; returns it, or null if one was already set. */
  async generate(store: Store): Promise<string | null> {
    const token = 'op_' + randomToken(24);
    if (!(await store.meta.setIfAbsent(META_KEY, sha(token)))) return null;
    this.hash = sha(token);
    return token;
  }

  async authenticate(token: string | undefined): Promise<void> {
    if (this.hash === null) throw new AppError(401, 'unauthorized', 'the operator API is disabled: set OPERATOR_TOKEN');
    if (token === undefined || !safeEqual(sha(token), this.hash)) throw new AppError(401, 'unauthorized', 'missing or invalid operator token');
  }
}
