import { insufficientScope } from '../errors.js';
import type { Principal } from '../domain/types.js';
import type { Scope } from '../domain/scopes.js';

/** Throws 403 `insufficient_scope` naming the scope when the key lacks it. */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope)) throw insufficientScope(scope);
}
