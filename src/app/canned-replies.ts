import { randomUUID } from 'node:crypto';
import { badRequest, notFound } from '../errors.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../domain/types.js';
import { CANNED_PLACEHOLDERS, CANNED_REPLIES_MAX, unknownPlaceholders, type CannedReply } from '../domain/canned-replies.js';
import type { CannedReplyStore } from '../store/canned-replies/port.js';
import { requireScope } from './principal.js';

export interface CannedReplyInput {
  shortCode: string;
  text: string;
}

/**
 * The organization's canned replies: every agent reads them (`inbox:read`,
 * for the composer), admins manage them (`settings:manage`). Another
 * organization's replies answer as missing.
 */
export class CannedReplyService {
  constructor(
    private readonly store: CannedReplyStore,
    private readonly clock: Clock,
  ) {}

  async list(principal: Principal): Promise<CannedReply[]> {
    requireScope(principal, 'inbox:read');
    return this.store.list(principal.organizationId);
  }

  async create(principal: Principal, input: CannedReplyInput): Promise<CannedReply> {
    requireScope(principal, 'settings:manage');
    checkPlaceholders(input.text);
    const now = new Date(this.clock.now()).toISOString();
    const reply: CannedReply = { id: randomUUID(), organizationId: principal.organizationId, shortCode: input.shortCode, text: input.text, createdAt: now, updatedAt: now };
    await this.store.create(reply, CANNED_REPLIES_MAX);
    return reply;
  }

  async update(principal: Principal, id: string, input: Partial<CannedReplyInput>): Promise<CannedReply> {
    requireScope(principal, 'settings:manage');
    if (input.text !== undefined) checkPlaceholders(input.text);
    const now = new Date(this.clock.now()).toISOString();
    const next = await this.store.update(principal.organizationId, id, (cur) => ({ ...cur, ...input, updatedAt: now }));
    if (next === null) throw notFound('canned reply');
    return next;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    requireScope(principal, 'settings:manage');
    if (!(await this.store.delete(principal.organizationId, id))) throw notFound('canned reply');
  }
}

function checkPlaceholders(text: string): void {
  const unknown = unknownPlaceholders(text);
  if (unknown.length > 0) {
    throw badRequest('unknown_placeholder', `text has {{${unknown[0]}}}, which names nothing: use ${Object.keys(CANNED_PLACEHOLDERS).map((p) => `{{${p}}}`).join(', ')}`, { field: 'text', placeholders: unknown });
  }
}
