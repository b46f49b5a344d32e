import { MESSAGE_STATUSES, nextStatus, type MessageStatus } from '../../domain/message-status.js';
import { isPrivateNote, type SessionMessage } from '../../domain/messages.js';
import { numbered, type PgDb } from '../postgres/db.js';
import type { MessageLocation, SessionMessageRepo, SessionRef } from './port.js';
import { INSERT_MESSAGE, REGISTER_SESSION, SELECT_BY_NETWORK_ID, SELECT_CONTACT_SESSIONS, SELECT_MESSAGE, SELECT_SESSION, SELECT_SESSION_MESSAGES } from './sql.js';

// The message, and its session when the message was new: one statement, so both or neither.
// (A data-modifying WITH runs whether or not the outer query reads it.)
const APPEND = numbered(`
  WITH m AS (${INSERT_MESSAGE} RETURNING 1),
       s AS (INSERT INTO chat_sessions (org, session_id, audience_external_id, opened_at) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM m) ON CONFLICT DO NOTHING)
  SELECT count(*) AS stored FROM m`);

// The compare-and-set of a status: the row is written only while its status is one the new
// status may follow (by `nextStatus`, computed per target below). A concurrent writer's update
// makes this one wait and then re-check the condition on the row as that writer left it, so
// nothing computed from an older read ever lands.
const ADVANCE = 'UPDATE session_messages SET body = $3, status = $4 WHERE org = $1 AND id = $2 AND coalesce(status, \'accepted\') = ANY($5::text[])';

/** For each status, the stored statuses it may follow. */
const FOLLOWS = new Map<MessageStatus, MessageStatus[]>(MESSAGE_STATUSES.map((to) => [to, MESSAGE_STATUSES.filter((from) => nextStatus(from, to) === to)]));

/** Network ids this node remembers where to find (see `located`). */
const MAX_LOCATED = 50_000;

/**
 * The message log in PostgreSQL: `session_messages` and `chat_sessions`,
 * the tables (and most statements, `sql.ts`) of the embedded adapter.
 * Appends are idempotent by `(org, id)`; a status moves by one conditional
 * UPDATE.
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
      const r = await db.query(ADVANCE, [m.organizationId, m._id, JSON.stringify(m), m.status, FOLLOWS.get(m.status) ?? []]);
      if (r.rowCount === 1) return { applied: true, status: m.status };
      // Not applied: what is stored now (read after the refusal, so it is at least what refused it).
      const rows = await db.rows<{ status: MessageStatus | null }>('SELECT status FROM session_messages WHERE org = $1 AND id = $2', [m.organizationId, m._id]);
      return { applied: false, status: rows[0] === undefined ? null : (rows[0].status ?? 'accepted') };
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
