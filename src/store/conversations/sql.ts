import type { ConversationQuery, ConversationRecord } from '../../domain/conversation.js';

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
