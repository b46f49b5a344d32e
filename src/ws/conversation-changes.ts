import type { ConversationRecord } from '../domain/conversation.js';
import type { ConversationIndexRepo } from '../store/conversations/port.js';
import type { ConversationChange, EphemeralBus } from './ephemeral.js';

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
    updatedAt: r.updatedAt,
    version: r.version,
  };
}

/**
 * The conversation index, announcing each record it stored on the inbox's
 * ephemeral bus, so every socket of the organization (on every node) hears
 * `{"type":"conversation"}` once the row changed: after the write, so a list
 * reloaded on it already has the change, which the durable events (published
 * before the index is written) cannot promise. Only records actually written
 * are announced (a stale version is not). Best effort, like presence: a
 * client reloads its lists when its socket reconnects.
 */
export function announcingConversationIndex(index: ConversationIndexRepo, bus: EphemeralBus): ConversationIndexRepo {
  return {
    put: async (record) => {
      const written = await index.put(record);
      if (written) bus.publish({ organizationId: record.organizationId, frame: { type: 'conversation', conversation: conversationChange(record) } });
      return written;
    },
    get: (o, a) => index.get(o, a),
    list: (q) => index.list(q),
    listView: (q) => index.listView(q),
    counts: (q) => index.counts(q),
    markSeen: (o, u, a, m) => index.markSeen(o, u, a, m),
    seen: (o, u, a) => index.seen(o, u, a),
    due: (at, limit) => index.due(at, limit),
  };
}
