import type { ConversationRecord, ReadMarker } from '../../domain/conversation.js';
import { numbered, type PgDb } from '../postgres/db.js';
import type { ConversationIndexRepo } from './port.js';
import { conversationCounts, conversationList, conversationViewPage, countsOf, keysetPage, PUT_CONVERSATION, putArgs, SELECT_ASSIGNED_COUNTS, SELECT_CONVERSATION, SELECT_DUE } from './sql.js';

const PUT = numbered(PUT_CONVERSATION);
const GET = numbered(SELECT_CONVERSATION);
const DUE = numbered(SELECT_DUE);

/**
 * The conversation index in PostgreSQL: `conversations` (the embedded
 * adapter's table and statements) and `conversation_markers`. A put is one
 * upsert whose update only happens over a lower version; racing writers of
 * one contact serialize on its row, so exactly one of equal versions wins.
 */
export function createPostgresConversationIndex(db: PgDb): ConversationIndexRepo {
  return {
    async put(r) {
      return (await db.query(PUT, putArgs(r))).rowCount === 1;
    },
    async get(org, aeid) {
      return (await db.rows<{ body: ConversationRecord }>(GET, [org, aeid]))[0]?.body ?? null;
    },
    async list(q) {
      const { page, pageArgs, count, countArgs } = conversationList(q);
      const [rows, total] = await Promise.all([db.rows<{ body: ConversationRecord }>(numbered(page), pageArgs), db.rows<{ n: string }>(numbered(count), countArgs)]);
      return { conversations: rows.map((r) => r.body), total: Number(total[0]?.n ?? 0) };
    },
    async listView(q) {
      const { sql, args } = conversationViewPage(q);
      return keysetPage(await db.rows<{ body: ConversationRecord; k: string }>(numbered(sql), args), q.limit);
    },
    async counts(q) {
      const { sql, args } = conversationCounts(q);
      return countsOf(await db.rows<{ lane: string; mine: number; n: string }>(numbered(sql), args));
    },
    async assignedCounts(org) {
      const rows = await db.rows<{ assignee_id: string | null; n: string }>(numbered(SELECT_ASSIGNED_COUNTS), [org]);
      return new Map(rows.filter((r) => r.assignee_id !== null).map((r) => [r.assignee_id!, Number(r.n)]));
    },
    async due(at, limit) {
      const rows = await db.rows<{ org: string; audience_external_id: string; due_at: string }>(DUE, [at, limit]);
      return rows.map((r) => ({ organizationId: r.org, audienceExternalId: r.audience_external_id, dueAt: r.due_at }));
    },
    async markSeen(org, userId, aeid, marker) {
      await db.query(
        'INSERT INTO conversation_markers (org, user_id, audience_external_id, body) VALUES ($1, $2, $3, $4) ON CONFLICT (org, user_id, audience_external_id) DO UPDATE SET body = excluded.body',
        [org, userId, aeid, JSON.stringify(marker)],
      );
    },
    async seen(org, userId, aeids) {
      const out = new Map<string, ReadMarker>();
      if (aeids.length === 0) return out;
      const rows = await db.rows<{ aeid: string; body: ReadMarker }>(
        'SELECT audience_external_id AS aeid, body FROM conversation_markers WHERE org = $1 AND user_id = $2 AND audience_external_id = ANY($3::text[])',
        [org, userId, aeids],
      );
      for (const r of rows) out.set(r.aeid, r.body);
      return out;
    },
  };
}
