import type { ConversationRecord } from '../../domain/conversation.js';
import { nextDueAt } from './routing.js';
import { targetShown } from './sla.js';
import type { ConversationState } from './state.js';

/** The inbox's view of a conversation actor's state (its `ConversationRecord`). */
export function conversationRecord(s: ConversationState, version: number, now: Date): ConversationRecord {
  const h = s.handover;
  const dueAt = nextDueAt(s);
  const record: ConversationRecord = {
    organizationId: s.organizationId,
    audienceExternalId: s.audienceExternalId,
    contactId: s.contactId,
    status: h.status === 'agent' ? 'assigned' : h.status,
    assigneeId: h.status === 'agent' ? h.agentId : null,
    queuedAt: h.status === 'queued' ? h.requestedAt : null,
    assignedAt: h.status === 'agent' ? h.assignedAt : null,
    sessionId: s.session?.id ?? null,
    sessionStatus: s.session?.status ?? null,
    lastInboundAt: s.lastInboundAt,
    inboundCount: s.session?.inboundCount ?? 0,
    updatedAt: now.toISOString(),
    version,
  };
  if (dueAt !== null) record.dueAt = dueAt;
  const sla = targetShown(s);
  if (sla !== null) record.sla = { target: sla.kind, priority: sla.priority ?? null, since: sla.since, dueAt: sla.dueAt, breachedAt: sla.breachedAt ?? null };
  if (s.teamId !== undefined) record.teamId = s.teamId;
  return record;
}
