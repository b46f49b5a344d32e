import { conflict } from '../../errors.js';
import type { PgDb } from '../postgres/db.js';
import { nameKey, type Resource, type ResourceStore } from './port.js';

const taken = (name: string) => conflict('resource_name_taken', 'a resource with this name exists in the organization', { name });
const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';

/**
 * The clustered resource store: one row per resource in PostgreSQL, its name
 * unique per organization by a constraint (so two nodes creating or renaming
 * to the same name at once cannot both win), a replace conditional on the
 * version it read.
 */
export function createPostgresResourceStore(db: PgDb): ResourceStore {
  return {
    async create(r) {
      const res = await db.query('INSERT INTO resources (org, id, name_key, version, created_at, body) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (org, name_key) DO NOTHING', [
        r.organizationId,
        r.id,
        nameKey(r.name),
        r.version,
        r.createdAt,
        JSON.stringify(r),
      ]);
      if (res.rowCount !== 1) throw taken(r.name);
    },
    async get(org, id) {
      return (await db.rows<{ body: Resource }>('SELECT body FROM resources WHERE org = $1 AND id = $2', [org, id]))[0]?.body ?? null;
    },
    async list(org, page) {
      const [rows, count] = await Promise.all([
        db.rows<{ body: Resource }>('SELECT body FROM resources WHERE org = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3', [org, page.limit, page.offset]),
        db.rows<{ n: string }>('SELECT COUNT(*) AS n FROM resources WHERE org = $1', [org]),
      ]);
      return { resources: rows.map((r) => r.body), total: Number(count[0]?.n ?? 0) };
    },
    async replace(expected, next) {
      try {
        const res = await db.query('UPDATE resources SET name_key = $4, version = $5, body = $6 WHERE org = $1 AND id = $2 AND version = $3', [
          expected.organizationId,
          expected.id,
          expected.version,
          nameKey(next.name),
          next.version,
          JSON.stringify(next),
        ]);
        return res.rowCount === 1;
      } catch (e) {
        if (isUniqueViolation(e)) throw taken(next.name);
        throw e;
      }
    },
    async delete(org, id) {
      return (await db.query('DELETE FROM resources WHERE org = $1 AND id = $2', [org, id])).rowCount === 1;
    },
  };
}
