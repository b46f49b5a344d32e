import type { ConversationRecord, ReadMarker } from '../../domain/conversation.js';
import type { SqliteDb } from '../sqlite/db.js';
import type { ConversationIndexRepo } from './port.js';
import { conversationCounts, conversationList, conversationViewPage, countsOf, keysetPage, PUT_CONVERSATION, putArgs, SELECT_ASSIGNED_COUNTS, SELECT_CONVERSATION, SELECT_DUE } from './sql.js';

const SEEN = 'conversationsSeen';

/**
 * Conversations in the node's SQLite database (`conversations`, indexed by
 * organization and update time, and by status). The version check and the
 * write are one statement (`PUT_CONVERSATION`), so nothing interleaves
 * between them.
 */
export function createSqliteConversationIndex(db: SqliteDb): ConversationIndexRepo {
  const s = (sql: string) => db.stmt(sql);
  return {
    async put(r) {
      return db.run(() => s(PUT_CONVERSATION).run(...putArgs(r)).changes === 1);
    },
    async remove(org, aeid) {
      await db.run(() => s('DELETE FROM conversations WHERE org = ? AND audience_external_id = ?').run(org, aeid));
    },
    async get(org, aeid) {
      const row = s(SELECT_CONVERSATION).get(org, aeid) as { body: string } | undefined;
      return row === undefined ? null : (JSON.parse(row.body) as ConversationRecord);
    },
    async list(q) {
      const { page, pageArgs, count, countArgs } = conversationList(q);
      const rows = s(page).all(...pageArgs) as { body: string }[];
      const total = (s(count).get(...countArgs) as { n: number }).n;
      return { conversations: rows.map((r) => JSON.parse(r.body) as ConversationRecord), total };
    },
    async listView(q) {
      const { sql, args } = conversationViewPage(q);
      const rows = s(sql).all(...args) as { body: string; k: string }[];
      return keysetPage(rows.map((r) => ({ body: JSON.parse(r.body) as ConversationRecord, k: r.k })), q.limit);
    },
    async counts(q) {
      const { sql, args } = conversationCounts(q);
      return countsOf(s(sql).all(...args) as { lane: string; mine: number; n: number }[]);
    },
    async assignedCounts(org) {
      const rows = s(SELECT_ASSIGNED_COUNTS).all(org) as { assignee_id: string | null; n: number }[];
      return new Map(rows.filter((r) => r.assignee_id !== null).map((r) => [r.assignee_id!, Number(r.n)]));
    },
    async due(at, limit) {
      const rows = s(SELECT_DUE).all(at, limit) as { org: string; audience_external_id: string; due_at: string }[];
      return rows.map((r) => ({ organizationId: r.org, audienceExternalId: r.audience_external_id, dueAt: r.due_at }));
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
