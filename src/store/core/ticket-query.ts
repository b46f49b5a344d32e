import type { TicketQuery } from './port.js';

/** The engine's condition that a ticket's subject or description has every word of `text`; null when it has no words. */
export type TextMatch = (organizationId: string, text: string) => { sql: string; args: unknown[] } | null;

/**
 * The WHERE clause of a ticket list, with `?` placeholders, shared by the
 * SQLite and PostgreSQL adapters (the dialects agree on it). Null when the
 * query can match nothing: an agent filtering by someone else's tickets.
 */
export function ticketFilter(q: TicketQuery, textMatch?: TextMatch): { where: string[]; args: unknown[] } | null {
  // An assignee filter decides visibility by itself: unassigned and the agent's own are visible, others' are not.
  let visibleToAgent = q.visibleToAgent;
  if (q.assigneeId !== undefined && visibleToAgent !== undefined) {
    if (q.assigneeId !== null && q.assigneeId !== visibleToAgent) return null;
    visibleToAgent = undefined;
  }
  const where = ['org = ?'];
  const args: unknown[] = [q.organizationId];
  if (q.status !== undefined) {
    where.push('status = ?');
    args.push(q.status);
  }
  if (q.priority !== undefined) {
    where.push('priority = ?');
    args.push(q.priority);
  }
  if (q.audienceId !== undefined) {
    where.push('audience_id = ?');
    args.push(q.audienceId);
  }
  if (q.assigneeId === null) where.push('assignee_id IS NULL');
  else if (q.assigneeId !== undefined) {
    where.push('assignee_id = ?');
    args.push(q.assigneeId);
  }
  if (visibleToAgent !== undefined) {
    where.push('(assignee_id IS NULL OR assignee_id = ?)');
    args.push(visibleToAgent);
  }
  if (q.before !== undefined) {
    where.push('seq < ?');
    args.push(q.before);
  }
  if (q.text !== undefined) {
    const m = textMatch?.(q.organizationId, q.text) ?? null;
    if (m === null) return null;
    where.push(m.sql);
    args.push(...m.args);
  }
  return { where, args };
}

/** True when the filter is the organization alone, or the organization and a status: a kept count answers its total. */
export function countedFilter(q: TicketQuery, where: string[]): boolean {
  return where.length === 1 || (where.length === 2 && q.status !== undefined);
}

/** The filter without the keyset position: what a page's `total` counts (every match, not only those after the cursor). */
export function totalFilter(q: TicketQuery, textMatch?: TextMatch): { where: string[]; args: unknown[] } | null {
  return ticketFilter({ ...q, before: undefined }, textMatch);
}
