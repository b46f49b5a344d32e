import { CONVERSATION_VIEWS, type ConversationCountQuery, type ConversationCounts, type ConversationQuery, type ConversationRecord, type ConversationView, type ConversationViewQuery } from '../../domain/conversation.js';

/*
 * The conversation index's statements both engines run as written (`?`
 * placeholders; PostgreSQL's adapter numbers them).
 */

/**
 * Stores the record unless the stored one has the same or a higher version:
 * the check and the write are one statement (a stale writer's row counts 0).
 */
export const PUT_CONVERSATION = `
  INSERT INTO conversations (org, audience_external_id, status, assignee_id, updated_at, queued_at, version, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (org, audience_external_id) DO UPDATE SET
    status = excluded.status, assignee_id = excluded.assignee_id, updated_at = excluded.updated_at,
    queued_at = excluded.queued_at, version = excluded.version, body = excluded.body
  WHERE conversations.version < excluded.version`;

/** `PUT_CONVERSATION`'s arguments. */
export const putArgs = (r: ConversationRecord) => [r.organizationId, r.audienceExternalId, r.status, r.assigneeId, r.updatedAt, r.queuedAt, r.version, JSON.stringify(r)];

/** Due timers of every organization, earliest first (the partial index holds only conversations with one). */
export const SELECT_DUE = 'SELECT org, audience_external_id, due_at FROM conversations WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at LIMIT ?';

export const SELECT_CONVERSATION = 'SELECT body FROM conversations WHERE org = ? AND audience_external_id = ?';

/**
 * A list's page and its total: queued conversations oldest first, any other
 * selection most recently updated first.
 */
export function conversationList(q: ConversationQuery): { page: string; pageArgs: unknown[]; count: string; countArgs: unknown[] } {
  const where = ['org = ?'];
  const args: unknown[] = [q.organizationId];
  if (q.status !== undefined) {
    where.push('status = ?');
    args.push(q.status);
  }
  if (q.assigneeId !== undefined) {
    where.push("status = 'assigned' AND assignee_id = ?");
    args.push(q.assigneeId);
  }
  const cond = where.join(' AND ');
  const order = q.status === 'queued' ? "COALESCE(queued_at, '') ASC, audience_external_id ASC" : 'updated_at DESC, audience_external_id ASC';
  return {
    page: `SELECT body FROM conversations WHERE ${cond} ORDER BY ${order} LIMIT ? OFFSET ?`,
    pageArgs: [...args, q.limit, q.offset],
    count: `SELECT COUNT(*) AS n FROM conversations WHERE ${cond}`,
    countArgs: args,
  };
}

/** The filters of a view query both the page and the counts take. */
function viewFilters(q: ConversationCountQuery): { where: string[]; args: unknown[] } {
  const where = ['org = ?'];
  const args: unknown[] = [q.organizationId];
  if (q.phoneNumberId !== undefined) {
    where.push('phone_number_id = ?');
    args.push(q.phoneNumberId);
  }
  if (q.assigneeId !== undefined) {
    where.push('assignee_id = ?');
    args.push(q.assigneeId);
  }
  if (q.audienceExternalId !== undefined) {
    where.push('audience_external_id = ?');
    args.push(q.audienceExternalId);
  }
  if (q.sla === 'breached') where.push('sla_breached_at IS NOT NULL');
  if (q.teamIds !== undefined) {
    // An empty list matches nothing (a caller in no team asking for their teams' queues).
    where.push(q.teamIds.length === 0 ? '1 = 0' : `team_id IN (${q.teamIds.map(() => '?').join(', ')})`);
    args.push(...q.teamIds);
  }
  if (q.labelId !== undefined) {
    // Through the label's primary key (org, kind, label, target): one probe per conversation.
    where.push("EXISTS (SELECT 1 FROM labelled l WHERE l.org = conversations.org AND l.kind = 'conversation' AND l.label_id = ? AND l.target = conversations.audience_external_id)");
    args.push(q.labelId);
  }
  return { where, args };
}

/** The lanes (and, for mine and others, the assignee test) of a view. */
function viewCondition(view: ConversationView, userId: string): { cond: string | null; args: unknown[] } {
  switch (view) {
    case 'all':
      return { cond: null, args: [] };
    case 'mine':
      return { cond: "lane = 'assigned' AND assignee_id = ?", args: [userId] };
    case 'others':
      return { cond: "lane = 'assigned' AND assignee_id <> ?", args: [userId] };
    case 'unassigned':
      return { cond: "lane IN ('bot', 'waiting')", args: [] };
    default:
      return { cond: 'lane = ?', args: [view] };
  }
}

/**
 * One keyset page of a view (a row more than asked, to tell whether another
 * page follows), each row with its sort key `k`. Activity: updated_at
 * descending; waiting: waiting_since ascending; ties by conversation id.
 */
export function conversationViewPage(q: ConversationViewQuery): { sql: string; args: unknown[] } {
  const { where, args } = viewFilters(q);
  const view = viewCondition(q.view, q.userId);
  if (view.cond !== null) {
    where.push(view.cond);
    args.push(...view.args);
  }
  const col = q.sort === 'waiting' ? 'waiting_since' : 'updated_at';
  const cmp = q.sort === 'waiting' ? '>' : '<';
  if (q.after !== undefined) {
    where.push(`(${col} ${cmp} ? OR (${col} = ? AND audience_external_id > ?))`);
    args.push(q.after.key, q.after.key, q.after.id);
  }
  const order = q.sort === 'waiting' ? 'waiting_since ASC, audience_external_id ASC' : 'updated_at DESC, audience_external_id ASC';
  return { sql: `SELECT body, ${col} AS k FROM conversations WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ?`, args: [...args, q.limit + 1] };
}

/** Counts by lane, the assigned ones split into the caller's and others'. */
export function conversationCounts(q: ConversationCountQuery): { sql: string; args: unknown[] } {
  const { where, args } = viewFilters(q);
  return {
    sql: `SELECT lane, CASE WHEN assignee_id = ? THEN 1 ELSE 0 END AS mine, COUNT(*) AS n FROM conversations WHERE ${where.join(' AND ')} GROUP BY 1, 2`,
    args: [q.userId, ...args],
  };
}

/** The counts per view from `conversationCounts`' rows. */
export function countsOf(rows: { lane: string; mine: number | string; n: number | string }[]): ConversationCounts {
  const c = Object.fromEntries(CONVERSATION_VIEWS.map((v) => [v, 0])) as ConversationCounts;
  for (const r of rows) {
    const n = Number(r.n);
    c.all += n;
    if (r.lane === 'assigned') c[Number(r.mine) === 1 ? 'mine' : 'others'] += n;
    else if (r.lane === 'bot' || r.lane === 'waiting' || r.lane === 'resolved') c[r.lane] += n;
    if (r.lane === 'bot' || r.lane === 'waiting') c.unassigned += n;
  }
  return c;
}

/** The page and the key the next one starts after. */
export function keysetPage(rows: { body: ConversationRecord; k: string }[], limit: number) {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { conversations: page.map((r) => r.body), next: rows.length > limit && last !== undefined ? { key: last.k, id: last.body.audienceExternalId } : null };
}

/** How many conversations each agent holds (assigned, so unresolved): what auto-assignment weighs against capacity. */
export const SELECT_ASSIGNED_COUNTS = "SELECT assignee_id, COUNT(*) AS n FROM conversations WHERE org = ? AND status = 'assigned' GROUP BY assignee_id";
