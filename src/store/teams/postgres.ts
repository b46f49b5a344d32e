import { teamNameKey, type Team } from '../../domain/teams.js';
import type { PgDb } from '../postgres/db.js';
import { teamNameTaken, tooManyTeams, type TeamStore } from './port.js';

const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';

/**
 * Teams in PostgreSQL (`teams`, migration step 11): a name unique per
 * organization by a constraint, so two nodes creating one name cannot both
 * win; a create counts the organization's teams under its advisory lock.
 */
export function createPostgresTeamStore(db: PgDb): TeamStore {
  return {
    async create(t, max) {
      await db.tx(async (c) => {
        await c.query("SELECT pg_advisory_xact_lock(hashtextextended('teams:' || $1, 0))", [t.organizationId]);
        const { rows } = await c.query<{ n: string }>('SELECT COUNT(*) AS n FROM teams WHERE org = $1', [t.organizationId]);
        if (Number(rows[0]?.n ?? 0) >= max) throw tooManyTeams(max);
        const res = await c.query('INSERT INTO teams (org, id, name_key, body) VALUES ($1, $2, $3, $4) ON CONFLICT (org, name_key) DO NOTHING', [t.organizationId, t.id, teamNameKey(t.name), JSON.stringify(t)]);
        if (res.rowCount !== 1) throw teamNameTaken(t.name);
      });
    },
    async get(org, id) {
      return (await db.rows<{ body: Team }>('SELECT body FROM teams WHERE org = $1 AND id = $2', [org, id]))[0]?.body ?? null;
    },
    async list(org) {
      return (await db.rows<{ body: Team }>('SELECT body FROM teams WHERE org = $1 ORDER BY name_key, id', [org])).map((r) => r.body);
    },
    async update(org, id, change) {
      return db.tx(async (c) => {
        const { rows } = await c.query<{ body: Team }>('SELECT body FROM teams WHERE org = $1 AND id = $2 FOR UPDATE', [org, id]);
        if (rows[0] === undefined) return null;
        const cur = rows[0].body;
        const next = { ...change(cur), id: cur.id, organizationId: cur.organizationId };
        try {
          await c.query('UPDATE teams SET name_key = $3, body = $4 WHERE org = $1 AND id = $2', [org, id, teamNameKey(next.name), JSON.stringify(next)]);
        } catch (e) {
          if (isUniqueViolation(e)) throw teamNameTaken(next.name);
          throw e;
        }
        return next;
      });
    },
    async delete(org, id) {
      return (await db.query('DELETE FROM teams WHERE org = $1 AND id = $2', [org, id])).rowCount === 1;
    },
  };
}
