import type { CannedReply } from '../../domain/canned-replies.js';
import type { SqliteDb } from '../sqlite/db.js';
import { shortCodeTaken, tooMany, type CannedReplyStore } from './port.js';

/** SQLite adapter: each check-then-write runs in one synchronous `db.run`. */
export function createSqliteCannedReplyStore(db: SqliteDb): CannedReplyStore {
  const s = (sql: string) => db.stmt(sql);
  const byCode = (org: string, code: string) => s('SELECT id FROM canned_replies WHERE org = ? AND short_code = ?').get(org, code) as { id: string } | undefined;
  const one = (org: string, id: string) => {
    const row = s('SELECT body FROM canned_replies WHERE org = ? AND id = ?').get(org, id) as { body: string } | undefined;
    return row === undefined ? null : (JSON.parse(row.body) as CannedReply);
  };
  return {
    async create(r, max) {
      await db.run(() => {
        if (byCode(r.organizationId, r.shortCode)) throw shortCodeTaken(r.shortCode);
        const { n } = s('SELECT COUNT(*) AS n FROM canned_replies WHERE org = ?').get(r.organizationId) as { n: number };
        if (n >= max) throw tooMany(max);
        s('INSERT INTO canned_replies (org, id, short_code, body) VALUES (?, ?, ?, ?)').run(r.organizationId, r.id, r.shortCode, JSON.stringify(r));
      });
    },
    async get(org, id) {
      return one(org, id);
    },
    async list(org) {
      return (s('SELECT body FROM canned_replies WHERE org = ? ORDER BY short_code').all(org) as { body: string }[]).map((r) => JSON.parse(r.body) as CannedReply);
    },
    async update(org, id, change) {
      return db.run(() => {
        const cur = one(org, id);
        if (cur === null) return null;
        const next = { ...change(cur), id: cur.id, organizationId: cur.organizationId };
        const holder = byCode(org, next.shortCode);
        if (holder !== undefined && holder.id !== id) throw shortCodeTaken(next.shortCode);
        s('UPDATE canned_replies SET short_code = ?, body = ? WHERE org = ? AND id = ?').run(next.shortCode, JSON.stringify(next), org, id);
        return next;
      });
    },
    async delete(org, id) {
      return db.run(() => s('DELETE FROM canned_replies WHERE org = ? AND id = ?').run(org, id).changes === 1);
    },
  };
}
