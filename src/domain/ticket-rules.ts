import type { Ticket, TicketActivity, TicketFieldChange, TicketOrigin, TicketPriority, TicketStatus } from './types.js';

export interface TicketChanges {
  title?: string;
  description?: string;
  status?: TicketStatus;
  priority?: TicketPriority;
  assigneeId?: string | null;
  resolutionDate?: string | null;
}

const isDone = (s: TicketStatus) => s === 'resolved' || s === 'closed';

/**
 * Applies an update to a ticket. Only the given fields change; `updatedAt`
 * moves. `resolutionDate` follows the status unless the caller sets it: it is
 * stamped when the ticket becomes resolved or closed, and cleared when it is
 * reopened (open / in_progress).
 */
export function applyTicketChanges(ticket: Ticket, changes: TicketChanges, now: string): Ticket {
  const next: Ticket = { ...ticket, updatedAt: now };
  if (changes.title !== undefined) next.title = changes.title;
  if (changes.description !== undefined) next.description = changes.description;
  if (changes.priority !== undefined) next.priority = changes.priority;
  if (changes.assigneeId !== undefined) next.assigneeId = changes.assigneeId;
  if (changes.status !== undefined) next.status = changes.status;

  if (changes.resolutionDate !== undefined) {
    next.resolutionDate = changes.resolutionDate;
  } else if (changes.status !== undefined && changes.status !== ticket.status) {
    if (isDone(changes.status) && !isDone(ticket.status)) next.resolutionDate = now;
    else if (!isDone(changes.status)) next.resolutionDate = null;
  }
  return next;
}

/**
 * A resolution date says when a ticket was resolved or closed, so it only
 * exists on such tickets: true when the changes would leave one on an open
 * or in-progress ticket (the caller refuses them).
 */
export function resolutionDateOnOpenTicket(ticket: Ticket, changes: TicketChanges): boolean {
  return changes.resolutionDate !== undefined && changes.resolutionDate !== null && !isDone(changes.status ?? ticket.status);
}

/** Resolution date for a ticket created directly in a given status. */
export function initialResolutionDate(status: TicketStatus, now: string): string | null {
  return isDone(status) ? now : null;
}

/** `T-<yymmdd>-<sequence padded to 6>`: readable, sortable, unique per organization. */
export function formatTicketId(createdAt: Date, sequence: number): string {
  const y = String(createdAt.getUTCFullYear() % 100).padStart(2, '0');
  const m = String(createdAt.getUTCMonth() + 1).padStart(2, '0');
  const d = String(createdAt.getUTCDate()).padStart(2, '0');
  return `T-${y}${m}${d}-${String(sequence).padStart(6, '0')}`;
}

export const TICKET_ID_PATTERN = /^T-\d+-\d+$/;

/** The ticket's fields in the spec's order, and nothing else (storage may add its own). */
export function canonicalTicket(t: Ticket): Ticket {
  return {
    _id: t._id,
    ticketId: t.ticketId,
    title: t.title,
    description: t.description,
    status: t.status,
    priority: t.priority,
    assigneeId: t.assigneeId,
    audienceId: t.audienceId,
    // Tickets stored before the field existed get it from the contact (TicketService).
    audienceExternalId: t.audienceExternalId ?? null,
    organizationId: t.organizationId,
    resolutionDate: t.resolutionDate,
    // Tickets stored before origins were recorded have none.
    createdBy: t.createdBy ?? null,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

/** The fields that differ between a ticket and its next version, in a fixed order (what a `changed` activity entry lists). */
export function ticketFieldChanges(before: Ticket, after: Ticket): TicketFieldChange[] {
  const pairs: [TicketFieldChange['field'], string | null, string | null][] = [
    ['subject', before.title, after.title],
    ['description', before.description, after.description],
    ['status', before.status, after.status],
    ['priority', before.priority, after.priority],
    ['assigneeId', before.assigneeId, after.assigneeId],
    ['resolutionDate', before.resolutionDate, after.resolutionDate],
  ];
  return pairs.filter(([, from, to]) => from !== to).map(([field, from, to]) => ({ field, from, to }));
}

/** The activity entry of a ticket's creation, by whoever the ticket says made it. */
export function creationEntry(t: Ticket, id: string): TicketActivity {
  return { id, ticketId: t.ticketId, organizationId: t.organizationId, kind: 'created', actor: t.createdBy ?? null, at: t.createdAt };
}

/** The activity entry of a change from `before` to `after`, at `after.updatedAt`; null when no field it follows changed. */
export function changeEntry(before: Ticket, after: Ticket, actor: TicketOrigin | null, id: string): TicketActivity | null {
  const changes = ticketFieldChanges(before, after);
  if (changes.length === 0) return null;
  return { id, ticketId: after.ticketId, organizationId: after.organizationId, kind: 'changed', actor, at: after.updatedAt, changes };
}
