import { AppError, conflict } from '../../errors.js';
import type { CannedReply } from '../../domain/canned-replies.js';

export const shortCodeTaken = (shortCode: string) => conflict('short_code_taken', `the organization has a canned reply /${shortCode}`, { field: 'shortCode' });
export const tooMany = (max: number) => new AppError(422, 'too_many_canned_replies', `an organization keeps at most ${max} canned replies: delete one first`);

/**
 * Storage port for an organization's canned replies. Adapters: `sqlite.ts`,
 * `postgres.ts`; one contract suite, `test/store/canned-replies.contract.ts`.
 * Short codes are unique per organization (the caller lower-cases them).
 */
export interface CannedReplyStore {
  /**
   * Stores a new reply. 409 `short_code_taken` when the organization has the
   * code; 422 `too_many_canned_replies` when it already keeps `max`.
   */
  create(reply: CannedReply, max: number): Promise<void>;
  get(organizationId: string, id: string): Promise<CannedReply | null>;
  /** Every reply of the organization, by short code. */
  list(organizationId: string): Promise<CannedReply[]>;
  /**
   * Read-modify-write of one reply in one step; returns the stored result,
   * or null when there is none. 409 `short_code_taken` when the new code is
   * another reply's.
   */
  update(organizationId: string, id: string, change: (current: CannedReply) => CannedReply): Promise<CannedReply | null>;
  delete(organizationId: string, id: string): Promise<boolean>;
}
