import { badRequest } from '../errors.js';
import type { RouteContext } from './route.js';

/**
 * The optional `Idempotency-Key` header: a retry with the same key and body
 * gets the first answer and does nothing twice; the same key with another
 * body is refused with 422 `idempotency_key_reused`.
 */
export function idempotencyKey(ctx: RouteContext<unknown, unknown, unknown>): string | undefined {
  const h = ctx.req.headers['idempotency-key'];
  if (h === undefined) return undefined;
  if (typeof h !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(h)) throw badRequest('invalid_idempotency_key', 'Idempotency-Key must be 1 to 200 visible ASCII characters');
  return h;
}
