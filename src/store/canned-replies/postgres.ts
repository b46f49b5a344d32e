import type { CannedReply } from '../../domain/canned-replies.js';
import type { PgDb } from '../postgres/db.js';
import { shortCodeTaken, tooMany, type CannedReplyStore } from './port.js';

const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';

/**
 * The clustered adapter: one row per reply, the short code unique per
 * organization by a constraint (two nodes creating one code cannot both
 * win). A create takes the organization's advisory lock for its transaction,
 * so concurrent creates count the replies one at a time.
 */
export function createPostgresCannedReplyStore(db: PgDb): CannedReplyStore {
  return {
    async create(r, max) {
      await db.tx(async (c) => {
        await c.query("SELECT pg_advisory_xact_lock(hashtextextended('canned_replies:' || $1, 0))", [r.organizationId]);
        const { rows } = await c.query<{ n: string }>('SELECT COUNT(*) AS n FROM canned_replies WHERE org = $1', [r.organizationId]);
        if (Number(rows[0]?.n ?? 0) >= max) throw tooMany(max);
        const res = await c.query('INSERT INTO canned_replies (org, id, short_code, body) VALUES ($1, $2, $3, $4) ON CONFLICT (org, short_code) DO NOTHING', [
          r.organizationId,
          r.id,
          r.shortCode,
          JSON.stringify(r),
        ]);
        if (res.rowCount !== 1) throw shortCodeTaken(r.shortCode);
      });
    },
    async get(org, id) {
      return (await db.rows<{ body: CannedReply }>('SELECT body FROM canned_replies WHERE org = $1 AND id = $2', [org, id]))[0]?.body ?? null;
    },
    async list(org) {
      return (await db.rows<{ body: CannedReply }>('SELECT body FROM canned_replies WHERE org = $1 ORDER BY short_code', [org])).map((r) => r.body);
    },
    async update(org, id, change) {
      return db.tx(async (c) => {
        const { rows } = await c.query<{ body: CannedReply }>('SELECT body FROM canned_replies WHERE org = $1 AND id = $2 FOR UPDATE', [org, id]);
        if (rows[0] === undefined) return null;
        const cur = rows[0].body;
        const next = { ...change(cur), id: cur.id, organizationId: cur.organizationId };
        try {
          await c.query('UPDATE canned_replies SET short_code = $3, body = $4 WHERE org = $1 AND id = $2', [org, id, next.shortCode, JSON.stringify(next)]);
        } catch (e) {
          if (isUniqueViolation(e)) throw shortCodeTaken(next.shortCode);
          throw e;
        }
        return next;
      });
    },
    async delete(org, id) {
      return (await db.query('DELETE FROM canned_replies WHERE org = $1 AND id = $2', [org, id])).rowCount === 1;
    },
  };
}
