import { teamNameKey, type Team } from '../../domain/teams.js';
import type { SqliteDb } from '../sqlite/db.js';
import { teamNameTaken, tooManyTeams, type TeamStore } from './port.js';

/** Teams in the node's SQLite database (`teams`, schema step 13); each check-then-write runs in one synchronous `db.run`. */
export function createSqliteTeamStore(db: SqliteDb): TeamStore {
  const s = (sql: string) => db.stmt(sql);
  const byName = (org: string, name: string) => s('SELECT id FROM teams WHERE org = ? AND name_key = ?').get(org, teamNameKey(name)) as { id: string } | undefined;
  const one = (org: string, id: string) => {
    const row = s('SELECT body FROM teams WHERE org = ? AND id = ?').get(org, id) as { body: string } | undefined;
    return row === undefined ? null : (JSON.parse(row.body) as Team);
  };
  return {
    async create(t, max) {
      await db.run(() => {
        if (byName(t.organizationId, t.name)) throw teamNameTaken(t.name);
        const { n } = s('SELECT COUNT(*) AS n FROM teams WHERE org = ?').get(t.organizationId) as { n: number };
        if (n >= max) throw tooManyTeams(max);
        s('INSERT INTO teams (org, id, name_key, body) VALUES (?, ?, ?, ?)').run(t.organizationId, t.id, teamNameKey(t.name), JSON.stringify(t));
      });
    },
    async get(org, id) {
      return one(org, id);
    },
    async list(org) {
      return (s('SELECT body FROM teams WHERE org = ? ORDER BY name_key, id').all(org) as { body: string }[]).map((r) => JSON.parse(r.body) as Team);
    },
    async update(org, id, change) {
      return db.run(() => {
        const cur = one(org, id);
        if (cur === null) return null;
        const next = { ...change(cur), id: cur.id, organizationId: cur.organizationId };
        const holder = byName(org, next.name);
        if (holder !== undefined && holder.id !== id) throw teamNameTaken(next.name);
        s('UPDATE teams SET name_key = ?, body = ? WHERE org = ? AND id = ?').run(teamNameKey(next.name), JSON.stringify(next), org, id);
        return next;
      });
    },
    async delete(org, id) {
      return db.run(() => s('DELETE FROM teams WHERE org = ? AND id = ?').run(org, id).changes === 1);
    },
  };
}
