import type { ConversationRecord } from '../domain/conversation.js';
import type { ContactChange, ConversationChange, EphemeralBus } from './ephemeral.js';

/** The frame's row: the record without what the socket's receivers have no use for. */
export function conversationChange(r: ConversationRecord): ConversationChange {
  return {
    id: r.audienceExternalId,
    contactId: r.contactId,
    status: r.status,
    assigneeId: r.assigneeId,
    queuedAt: r.queuedAt,
    assignedAt: r.assignedAt,
    sessionId: r.sessionId,
    sessionStatus: r.sessionStatus,
    lastInboundAt: r.lastInboundAt,
    teamId: r.teamId ?? null,
    sla: r.sla ?? null,
    updatedAt: r.updatedAt,
    version: r.version,
  };
}

/**
 * Announces a conversation record the inbox's index stored, on the ephemeral
 * bus, so every socket of the organization (on every node) hears
 * `{"type":"conversation"}`. The conversation actors call it once the command
 * that wrote the record committed, so a list reloaded on it already has the
 * change, which the durable events (published before the index is written)
 * cannot promise. Best effort, like presence: a client reloads its lists when
 * its socket reconnects.
 */
export function conversationAnnouncer(bus: EphemeralBus): (record: ConversationRecord) => void {
  return (record) => bus.publish({ organizationId: record.organizationId, frame: { type: 'conversation', conversation: conversationChange(record) } });
}

/**
 * Announces a contact whose name, attributes or labels changed (after the
 * change is stored) as `{"type":"contact"}` to every socket of the
 * organization, so lists and contact pages read it again. Best effort, like
 * the conversation rows.
 */
export function contactAnnouncer(bus: EphemeralBus): (organizationId: string, contact: ContactChange) => void {
  return (organizationId, contact) => bus.publish({ organizationId, frame: { type: 'contact', contact: { id: contact.id, audienceExternalId: contact.audienceExternalId } } });
}
