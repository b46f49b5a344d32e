import type { OAuthState, PaymentEvent, ToolCredentials, ToolRecord } from '../../domain/tools.js';
import type { SealedSecret, SecretBox } from '../secret-box.js';

/**
 * Connected tools, their credentials and their sign-ins in flight.
 *
 * Guarantees (the contract suite checks each, for every adapter):
 * - Credentials are stored sealed by the secret box, bound to the tool id
 *   (a sealed value copied onto another tool does not open); a value sealed
 *   under a rotated-out key opens and is sealed again under the current key
 *   when read. Nothing here logs them.
 * - `delete` removes the tool, its credentials and its payment events at
 *   once; afterwards nothing of the credentials is left in the store.
 * - `takeState` is single use: of any number of concurrent takes of one
 *   state (on any node) at most one gets it, and never after it expired.
 * - `tryLock` is held by one owner at a time across nodes, until `unlock`
 *   by that owner or `ttlMs`.
 * - `get(organizationId, id)` never returns another organization's tool.
 */
export interface ToolRepo {
  create(tool: ToolRecord, credentials: ToolCredentials | null): Promise<void>;
  get(organizationId: string, id: string): Promise<ToolRecord | null>;
  /** By id alone: for the provider's callbacks (its webhooks), which carry no organization. */
  getGlobal(id: string): Promise<ToolRecord | null>;
  /** Oldest first. */
  list(organizationId: string): Promise<ToolRecord[]>;
  /** Replaces the record when the tool still exists; false when it was deleted meanwhile. */
  update(tool: ToolRecord): Promise<boolean>;
  /** Sets only `lastUsedAt` (atomically: a concurrent status change is never undone by it). */
  touch(organizationId: string, id: string, at: string): Promise<void>;
  /** Removes the tool with its credentials and payment events; false when there was none. */
  delete(organizationId: string, id: string): Promise<boolean>;

  getCredentials(toolId: string): Promise<ToolCredentials | null>;
  /** Stores them when the tool still exists; false otherwise (a delete won the race). */
  putCredentials(toolId: string, credentials: ToolCredentials): Promise<boolean>;

  putState(state: OAuthState): Promise<void>;
  /** Removes and returns the state when it exists and has not expired at `now` (epoch ms). */
  takeState(state: string, now: number): Promise<OAuthState | null>;

  tryLock(toolId: string, owner: string, ttlMs: number): Promise<boolean>;
  unlock(toolId: string, owner: string): Promise<void>;

  /** Records a payment event once per provider event id; false when the event was already recorded. */
  recordPaymentEvent(toolId: string, event: PaymentEvent): Promise<boolean>;
  paymentEvents(toolId: string, paymentId: string): Promise<PaymentEvent[]>;

  /** Return-URL origins the operator allowed at run time (besides TOOLS_ALLOWED_RETURN_ORIGINS). */
  allowReturnOrigin(origin: string): Promise<void>;
  removeReturnOrigin(origin: string): Promise<boolean>;
  returnOrigins(): Promise<string[]>;

  close(): Promise<void>;
}

/** Credentials as stored: one sealed JSON value, bound to the tool id. */
export function sealCredentials(box: SecretBox, toolId: string, c: ToolCredentials): SealedSecret {
  return box.seal(JSON.stringify(c), `tool:${toolId}`);
}

export function openCredentials(box: SecretBox, toolId: string, s: SealedSecret): ToolCredentials {
  return JSON.parse(box.open(s, `tool:${toolId}`)) as ToolCredentials;
}
