import { requireScope } from '../app/principal.js';
import { notFound } from '../errors.js';
import type { Principal } from '../domain/types.js';
import type { ContactRepo } from '../store/core/port.js';
import type { HandoverReply } from '../actors/conversation/actor.js';
import { timelineActorOf } from '../actors/conversation/timeline.js';
import type { ConversationClient } from './client.js';

/** A caller's key names one operation: the same key on request and open are two commands. */
const scoped = (op: string, key: string | undefined) => (key === undefined ? undefined : `handover.${op}:${key}`);

/**
 * The handover operations of the REST API (and the MCP `request_handover`
 * tool): find the caller's contact, then let its conversation actor decide.
 * The actor serializes concurrent requests, so of any number of simultaneous
 * requests for one contact exactly one succeeds. Checks the caller's scopes
 * itself (like TicketService), so every front end gets the same refusal.
 */
export class HandoverService {
  constructor(
    private readonly contacts: Pick<ContactRepo, 'get'>,
    private readonly conversations: ConversationClient,
  ) {}

  private async contact(principal: Principal, audienceExternalId: string) {
    const contact = await this.contacts.get(principal.organizationId, audienceExternalId);
    if (contact === null) throw notFound('contact');
    return contact;
  }

  /** Moves the contact's latest conversation to the live-chat queue; `success: false` when one is pending or an agent has it. */
  async request(principal: Principal, audienceExternalId: string, idempotencyKey?: string, via?: 'mcp'): Promise<HandoverReply> {
    requireScope(principal, 'conversation:handover:request');
    const contact = await this.contact(principal, audienceExternalId);
    return this.conversations.askPlaced(
      principal.organizationId,
      contact.audienceExternalId,
      { kind: 'handover.request', contactId: contact.id, actor: timelineActorOf(principal, via) },
      { idempotencyKey: scoped('request', idempotencyKey) },
    );
  }

  /** Hands the conversation back to the bot; `success: false` when the bot already has it. */
  async open(principal: Principal, audienceExternalId: string, idempotencyKey?: string): Promise<HandoverReply> {
    requireScope(principal, 'conversation:handover:open');
    const contact = await this.contact(principal, audienceExternalId);
    return this.conversations.askPlaced(principal.organizationId, contact.audienceExternalId, { kind: 'handover.open', contactId: contact.id, actor: timelineActorOf(principal) }, { idempotencyKey: scoped('open', idempotencyKey) });
  }
}
