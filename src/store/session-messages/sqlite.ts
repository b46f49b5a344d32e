import { nextStatus } from '../../domain/message-status.js';
import { isPrivateNote, type SessionMessage } from '../../domain/messages.js';
import type { SqliteDb } from '../sqlite/db.js';
import type { SessionMessageRepo, SessionRef } from './port.js';
import { INSERT_MESSAGE, REGISTER_SESSION, SELECT_BY_NETWORK_ID, SELECT_CONTACT_SESSIONS, SELECT_MESSAGE, SELECT_SESSION, SELECT_SESSION_MESSAGES } from './sql.js';

/**
 * Messages in the node's SQLite database: `session_messages` (in the order
 * recorded, found by id, network id and session) and `chat_sessions` (by
 * contact). Each check-and-write runs in one synchronous `db.run`.
 */
export function createSqliteSessionMessageRepo(db: SqliteDb): SessionMessageRepo {
  const s = (sql: string) => db.stmt(sql);
  const parse = (row: { body: string } | undefined) => (row === undefined ? null : (JSON.parse(row.body) as SessionMessage));
  const session = (org: string, sid: string) => s(SELECT_SESSION).get(org, sid) as SessionRef | undefined;
  const register = (ref: SessionRef) => s(REGISTER_SESSION).run(ref.organizationId, ref.sessionId, ref.audienceExternalId, ref.openedAt);
  return {
    async pruneBefore(before, limit) {
      // Rows are appended in time order: look only at the oldest `limit`, and stop at the first batch with nothing past the retention.
      return db.run(
        () =>
          s(
            "DELETE FROM session_messages WHERE seq IN (SELECT seq FROM session_messages WHERE seq < (SELECT min(seq) FROM session_messages) + ? AND json_extract(body, '$.sentAt') < ?)",
          ).run(limit, before.toISOString()).changes,
      );
    },
    async registerSession(ref) {
      if (session(ref.organizationId, ref.sessionId) !== undefined) return;
      await db.run(() => register(ref));
    },
    async append(m) {
      return db.run(() => {
        const r = s(INSERT_MESSAGE).run(
          m.organizationId,
          m._id,
          m.sessionId,
          m.messageId,
          m.status ?? null,
          JSON.stringify(m),
        );
        if (r.changes === 0) return false;
        register({ sessionId: m.sessionId, organizationId: m.organizationId, audienceExternalId: m.audienceExternalId, openedAt: m.sentAt });
        return true;
      });
    },
    async advanceStatus(m) {
      return db.run(() => {
        const cur = parse(s(SELECT_MESSAGE).get(m.organizationId, m._id) as { body: string } | undefined);
        if (cur === null) return { applied: false, status: null };
        const stored = cur.status ?? 'accepted';
        if (nextStatus(stored, m.status) !== m.status) return { applied: false, status: stored };
        s('UPDATE session_messages SET body = ?, status = ?, network_id = ? WHERE org = ? AND id = ?').run(JSON.stringify(m), m.status, m.messageId, m.organizationId, m._id);
        return { applied: true, status: m.status };
      });
    },
    async get(org, id) {
      return parse(s(SELECT_MESSAGE).get(org, id) as { body: string } | undefined);
    },
    async getByNetworkId(org, netId) {
      return parse(s(SELECT_BY_NETWORK_ID).get(org, netId) as { body: string } | undefined);
    },
    async locateByNetworkId(org, netId) {
      const m = await this.getByNetworkId(org, netId);
      return m === null ? null : { _id: m._id, audienceExternalId: m.audienceExternalId };
    },
    async contactSessions(org, aeid) {
      return s(SELECT_CONTACT_SESSIONS).all(org, aeid) as SessionRef[];
    },
    async getSession(org, sid) {
      return session(org, sid) ?? null;
    },
    async listSession(org, sid, opts) {
      if (session(org, sid) === undefined) return null;
      const all = (s(SELECT_SESSION_MESSAGES).all(org, sid) as { body: string }[]).map((r) => JSON.parse(r.body) as SessionMessage);
      return opts?.notes === true ? all : all.filter((m) => !isPrivateNote(m));
    },
  };
}
