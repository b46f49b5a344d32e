import type { ConversationRecord, ReadMarker } from '../../domain/conversation.js';
import { numbered, type PgDb } from '../postgres/db.js';
import { TurnBatches } from '../turn-batches.js';
import type { ConversationIndexRepo } from './port.js';
import { conversationCounts, conversationList, conversationViewPage, countsOf, keysetPage, PUT_CONVERSATION, putArgs, SELECT_ASSIGNED_COUNTS, SELECT_CONVERSATION, SELECT_DUE } from './sql.js';

const PUT = numbered(PUT_CONVERSATION);
const GET = numbered(SELECT_CONVERSATION);
const DUE = numbered(SELECT_DUE);

/**
 * `PUT_CONVERSATION` for several records (JSON array $1, conversations distinct): each written only
 * over a lower version, as there. Answers the conversations written.
 */
const PUT_MANY = `
  INSERT INTO conversations (org, audience_external_id, status, assignee_id, updated_at, queued_at, version, body)
  SELECT org, aeid, status, assignee_id, updated_at, queued_at, version, body
  FROM json_to_recordset($1::json) AS v(org text, aeid text, status text, assignee_id text, updated_at text, queued_at text, version bigint, body jsonb)
  -- Rows locked in key order: two batches that share conversations never wait for each other in a circle.
  ORDER BY org, aeid
  ON CONFLICT (org, audience_external_id) DO UPDATE SET
    status = excluded.status, assignee_id = excluded.assignee_id, updated_at = excluded.updated_at,
    queued_at = excluded.queued_at, version = excluded.version, body = excluded.body
  WHERE conversations.version < excluded.version
  RETURNING org, audience_external_id AS aeid`;

/** Most conversations one statement writes. */
const MAX_PUT_BATCH = 100;

/**
 * The conversation index in PostgreSQL: `conversations` (the embedded
 * adapter's table and statements) and `conversation_markers`. A put is one
 * upsert whose update only happens over a lower version; racing writers of
 * one contact serialize on its row, so exactly one of equal versions wins.
 */
export function createPostgresConversationIndex(db: PgDb): ConversationIndexRepo {
  const putOne = async (r: ConversationRecord) => (await db.query(PUT, putArgs(r))).rowCount === 1;
  /**
   * The puts of one turn, of any organization: each conversation's first in one statement, then
   * (in the order asked) any later put of the same conversation on its own. If the statement
   * fails, each put is made on its own, so one record that cannot be written fails only itself.
   */
  const putMany = async (records: readonly ConversationRecord[]): Promise<boolean[]> => {
    if (records.length === 1) return [await putOne(records[0]!)];
    const keyOf = (org: string, aeid: string) => JSON.stringify([org, aeid]);
    const first = new Map<string, number>();
    records.forEach((r, i) => {
      const k = keyOf(r.organizationId, r.audienceExternalId);
      if (!first.has(k)) first.set(k, i);
    });
    const batched = [...first.values()];
    let written: Set<number>;
    try {
      // The columns `putArgs` gives, the record itself as the body.
      const rows = batched.map((i) => {
        const r = records[i]!;
        return { org: r.organizationId, aeid: r.audienceExternalId, status: r.status, assignee_id: r.assigneeId, updated_at: r.updatedAt, queued_at: r.queuedAt, version: r.version, body: r };
      });
      const stored = await db.rows<{ org: string; aeid: string }>(PUT_MANY, [JSON.stringify(rows)]);
      written = new Set(stored.map((r) => first.get(keyOf(r.org, r.aeid))!));
    } catch {
      const out: boolean[] = [];
      for (const r of records) out.push(await putOne(r));
      return out;
    }
    const inBatch = new Set(batched);
    const out: boolean[] = [];
    for (const [i, r] of records.entries()) out.push(inBatch.has(i) ? written.has(i) : await putOne(r));
    return out;
  };
  const puts = new TurnBatches<null, ConversationRecord, boolean>({ key: () => '', send: (_, records) => db.apart(() => putMany(records)), maxSize: MAX_PUT_BATCH });
  return {
    async put(r) {
      // A put that joins a transaction (written with an effect it must commit with) is made in it;
      // any other commits on its own, so the puts of one turn share one statement.
      return db.unitWriting ? putOne(r) : puts.add(null, r);
    },
    async get(org, aeid) {
      return (await db.rows<{ body: ConversationRecord }>(GET, [org, aeid]))[0]?.body ?? null;
    },
    async remove(org, aeid) {
      await db.query('DELETE FROM conversations WHERE org = $1 AND audience_external_id = $2', [org, aeid]);
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
