import { MESSAGE_STATUSES, nextStatus, type MessageStatus } from '../../domain/message-status.js';
import { isPrivateNote, type SessionMessage } from '../../domain/messages.js';
import { numbered, type PgDb } from '../postgres/db.js';
import { TurnBatches } from '../turn-batches.js';
import type { MessageLocation, SessionMessageRepo, SessionRef, StatusAdvance } from './port.js';
import { REGISTER_SESSION, SELECT_BY_NETWORK_ID, SELECT_CONTACT_SESSIONS, SELECT_MESSAGE, SELECT_SESSION, SELECT_SESSION_MESSAGES } from './sql.js';

// The message, and its session when the message was new: one statement, so both or neither.
// (A data-modifying WITH runs whether or not the outer query reads it.) Its search text is computed
// here, once (`sb_message_search`): the content never changes, and a status write leaves it as it is.
const APPEND = numbered(`
  WITH m AS (
    INSERT INTO session_messages (org, id, session_id, network_id, status, body, search)
    SELECT ?, ?, ?, ?, ?, b, sb_message_search(b) FROM (SELECT ?::jsonb AS b) v ON CONFLICT DO NOTHING RETURNING 1
  ),
       s AS (INSERT INTO chat_sessions (org, session_id, audience_external_id, opened_at) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM m) ON CONFLICT DO NOTHING)
  SELECT count(*) AS stored FROM m`);

// The compare-and-set of statuses, for messages of one organization ($2–$5, one row of the arrays
// each, the statuses a row may follow comma-separated): each row is written only while its status
// is one the new status may follow (by `nextStatus`, computed per target below), each judged on its
// own. A concurrent writer's update makes this one wait and then re-check the condition on the row
// as that writer left it, so nothing computed from an older read ever lands. Answers the positions
// (from 1) of the rows written. Planned for each batch (not prepared): a generic plan made while the
// table was small joins through every row of the organization (a hash join over a scan), and a
// connection keeps it until the table is next analyzed; planned for its values it looks each row up
// by its key.
const ADVANCE = `
  WITH v AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS v(id, body, status, follows, n))
  UPDATE session_messages m SET body = v.body::jsonb, status = v.status
  FROM v WHERE m.org = $1 AND m.id = v.id AND coalesce(m.status, 'accepted') = ANY(string_to_array(v.follows, ','))
  RETURNING v.n`;

/** Most status writes one statement carries. */
const MAX_ADVANCE_BATCH = 100;

/** For each status, the stored statuses it may follow. */
const FOLLOWS = new Map<MessageStatus, MessageStatus[]>(MESSAGE_STATUSES.map((to) => [to, MESSAGE_STATUSES.filter((from) => nextStatus(from, to) === to)]));

/** Network ids this node remembers where to find (see `located`). */
const MAX_LOCATED = 50_000;

/**
 * The message log in PostgreSQL: `session_messages` and `chat_sessions`,
 * the tables (and most statements, `sql.ts`) of the embedded adapter.
 * Appends are idempotent by `(org, id)`; a status moves by a conditional
 * UPDATE (one for the status writes of one turn).
 */
export function createPostgresSessionMessageRepo(db: PgDb): SessionMessageRepo {
  const one = async (sql: string, args: unknown[]) => (await db.rows<{ body: SessionMessage }>(numbered(sql), args))[0]?.body ?? null;
  // Where a network id's message lives never changes once written (the row is appended with
  // it, and a status write keeps it): the node remembers it for the messages it appended or
  // located, so the three status webhooks of a send it made need no read.
  const located = new Map<string, MessageLocation>();
  const remember = (org: string, netId: string, loc: MessageLocation) => {
    if (located.size >= MAX_LOCATED) located.clear();
    located.set(`${org}\n${netId}`, loc);
  };
  const session = async (org: string, sid: string) => (await db.rows<SessionRef>(numbered(SELECT_SESSION), [org, sid]))[0] ?? null;
  /** The status writes of messages of one organization (distinct messages) in one statement, each judged on its own. */
  const advance = async (org: string, ms: readonly (SessionMessage & { status: MessageStatus })[]): Promise<StatusAdvance[]> => {
    const r = await db.rows<{ n: string }>(
      ADVANCE,
      [org, ms.map((m) => m._id), ms.map((m) => JSON.stringify(m)), ms.map((m) => m.status), ms.map((m) => (FOLLOWS.get(m.status) ?? []).join(','))],
      { prepare: false },
    );
    const written = new Set(r.map((row) => Number(row.n) - 1));
    const refused = ms.filter((_, i) => !written.has(i)).map((m) => m._id);
    // What is stored now for the ones not written (read after the refusal, so at least what refused it).
    const stored = new Map<string, MessageStatus>();
    if (refused.length > 0) {
      const rows = await db.rows<{ id: string; status: MessageStatus | null }>('SELECT id, status FROM session_messages WHERE org = $1 AND id = ANY($2::text[])', [org, refused]);
      for (const row of rows) stored.set(row.id, row.status ?? 'accepted');
    }
    return ms.map((m, i) => (written.has(i) ? { applied: true, status: m.status } : { applied: false, status: stored.get(m._id) ?? null }));
  };
  // Status writes asked in one turn (the network's reports of many messages arriving together) go in
  // one statement per organization: one round trip and one commit where each was its own.
  const advances = new TurnBatches<string, SessionMessage & { status: MessageStatus }, StatusAdvance>({
    key: (org) => org,
    maxSize: MAX_ADVANCE_BATCH,
    send: async (org, ms) => {
      if (new Set(ms.map((m) => m._id)).size === ms.length) return advance(org, ms);
      // Two reports of one message in one batch: one after the other, as asked (one UPDATE cannot judge a row twice).
      const out: StatusAdvance[] = [];
      for (const m of ms) out.push(...(await advance(org, [m])));
      return out;
    },
  });
  return {
    async pruneBefore(before, limit) {
      // Rows are appended in time order: the oldest by seq are the ones past the retention, found through the primary key.
      const r = await db.query('DELETE FROM session_messages WHERE seq IN (SELECT seq FROM session_messages WHERE created_at < $1 ORDER BY seq LIMIT $2)', [before, limit]);
      return r.rowCount ?? 0;
    },
    async registerSession(ref) {
      await db.query(numbered(REGISTER_SESSION), [ref.organizationId, ref.sessionId, ref.audienceExternalId, ref.openedAt]);
    },
    async append(m) {
      const r = await db.rows<{ stored: string }>(APPEND, [
        m.organizationId,
        m._id,
        m.sessionId,
        m.messageId,
        m.status ?? null,
        JSON.stringify(m),
        m.organizationId,
        m.sessionId,
        m.audienceExternalId,
        m.sentAt,
      ]);
      const stored = Number(r[0]?.stored ?? 0) === 1;
      if (stored && m.messageId !== null) remember(m.organizationId, m.messageId, { _id: m._id, audienceExternalId: m.audienceExternalId });
      return stored;
    },
    async advanceStatus(m) {
      // Inside a unit of work the write belongs to its transaction.
      return db.unitOpen ? (await advance(m.organizationId, [m]))[0]! : advances.add(m.organizationId, m);
    },
    async get(org, id) {
      return one(SELECT_MESSAGE, [org, id]);
    },
    async getByNetworkId(org, netId) {
      return one(SELECT_BY_NETWORK_ID, [org, netId]);
    },
    async locateByNetworkId(org, netId) {
      const known = located.get(`${org}\n${netId}`);
      if (known !== undefined) return known;
      const rows = await db.rows<MessageLocation>(
        `SELECT id AS "_id", body->>'audienceExternalId' AS "audienceExternalId" FROM session_messages WHERE org = $1 AND network_id = $2 ORDER BY seq LIMIT 1`,
        [org, netId],
      );
      const found = rows[0];
      if (found === undefined) return null;
      remember(org, netId, found);
      return { ...found };
    },
    async contactSessions(org, aeid) {
      return db.rows<SessionRef>(numbered(SELECT_CONTACT_SESSIONS), [org, aeid]);
    },
    getSession: session,
    async listSession(org, sid, opts) {
      const [ref, rows] = await Promise.all([session(org, sid), db.rows<{ body: SessionMessage }>(numbered(SELECT_SESSION_MESSAGES), [org, sid])]);
      if (ref === null) return null;
      const all = rows.map((r) => r.body);
      return opts?.notes === true ? all : all.filter((m) => !isPrivateNote(m));
    },
  };
}
