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

/**
 * A text search counts its matches up to this many for the page's `total` (then `totalRelation`
 * is `gte`): an exact count reads every matching ticket (a common word in 200,000 tickets: 33,000
 * rows, 70–90 ms in PostgreSQL), while the page itself reads only its own rows.
 */
export const TEXT_SEARCH_TOTAL_CAP = 1000;

/** The statement counting a list's `total` (`where` from `totalFilter`): capped for a text search. */
export function totalSql(q: TicketQuery, where: string[]): string {
  const matching = `FROM tickets WHERE ${where.join(' AND ')}`;
  return q.text === undefined ? `SELECT COUNT(*) AS n ${matching}` : `SELECT COUNT(*) AS n FROM (SELECT 1 ${matching} LIMIT ${TEXT_SEARCH_TOTAL_CAP + 1}) m`;
}

/** A counted total as the page reports it: a text search's past the cap, the cap and `gte`. */
export function pageTotal(q: TicketQuery, n: number): { total: number; totalRelation: 'eq' | 'gte' } {
  return q.text !== undefined && n > TEXT_SEARCH_TOTAL_CAP ? { total: TEXT_SEARCH_TOTAL_CAP, totalRelation: 'gte' } : { total: n, totalRelation: 'eq' };
}
