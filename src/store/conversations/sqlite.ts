import type { ConversationRecord, ReadMarker } from '../../domain/conversation.js';
import type { SqliteDb } from '../sqlite/db.js';
import type { ConversationIndexRepo } from './port.js';

const SEEN = 'conversationsSeen';

/**
 * Conversations in the node's SQLite database (`conversations`, indexed by
 * organization and update time, and by status). Compare and write run in one
 * synchronous `db.run`, so nothing interleaves between the version check and
 * the write.
 */
export function createSqliteConversationIndex(db: SqliteDb): ConversationIndexRepo {
  const s = (sql: string) => db.stmt(sql);
  return {
    async put(r) {
      return db.run(() => {
        const cur = s('SELECT version FROM conversations WHERE org = ? AND audience_external_id = ?').get(r.organizationId, r.audienceExternalId) as { version: number } | undefined;
        if (cur !== undefined && cur.version >= r.version) return false;
        s(
          'INSERT OR REPLACE INTO conversations (org, audience_external_id, status, assignee_id, updated_at, queued_at, version, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        ).run(r.organizationId, r.audienceExternalId, r.status, r.assigneeId, r.updatedAt, r.queuedAt, r.version, JSON.stringify(r));
        return true;
      });
    },
    async get(org, aeid) {
      const row = s('SELECT body FROM conversations WHERE org = ? AND audience_external_id = ?').get(org, aeid) as { body: string } | undefined;
      return row === undefined ? null : (JSON.parse(row.body) as ConversationRecord);
    },
    async list(q) {
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
      const rows = s(`SELECT body FROM conversations WHERE ${cond} ORDER BY ${order} LIMIT ? OFFSET ?`).all(...args, q.limit, q.offset) as { body: string }[];
      const total = (s(`SELECT COUNT(*) AS n FROM conversations WHERE ${cond}`).get(...args) as { n: number }).n;
      return { conversations: rows.map((r) => JSON.parse(r.body) as ConversationRecord), total };
    },
    // Read markers are per user and small: `records`, keyed `<org>/<user>/<contact>`.
    async markSeen(org, userId, aeid, marker) {
      await db.put(SEEN, `${org}/${userId}/${aeid}`, marker);
    },
    async seen(org, userId, aeids) {
      const out = new Map<string, ReadMarker>();
      for (const aeid of aeids) {
        const m = db.get<ReadMarker>(SEEN, `${org}/${userId}/${aeid}`);
        if (m !== undefined) out.set(aeid, m);
      }
      return out;
    },
  };
}
