import type { Label } from '../../domain/labels.js';
import { labelNameKey } from '../../domain/labels.js';
import { numbered, type PgDb } from '../postgres/db.js';
import type { LabelRepo } from './port.js';
import { ATTACH, DELETE_LABEL, DELETE_LABELLED, DETACH, SELECT_LABEL, SELECT_LABELS } from './sql.js';

/** A unique index refused the write (a name taken meanwhile). */
const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';

/**
 * Labels in PostgreSQL (`labels`, `labelled`; the embedded adapter's tables
 * and statements). A name is unique by its unique index; the limits are
 * checked under a transaction lock per organization (labels) or per target.
 */
export function createPostgresLabelRepo(db: PgDb): LabelRepo {
  const one = async (org: string, id: string) => (await db.rows<Label>(numbered(SELECT_LABEL), [org, id]))[0] ?? null;
  return {
    async list(org) {
      return db.rows<Label>(numbered(SELECT_LABELS), [org]);
    },
    get: one,
    async create(l, max) {
      try {
        return await db.tx(async (q) => {
          await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`labels/${l.organizationId}`]);
          const taken = await q.query('SELECT 1 FROM labels WHERE org = $1 AND name_key = $2', [l.organizationId, labelNameKey(l.name)]);
          if ((taken.rowCount ?? 0) > 0) return 'name_taken' as const;
          const n = await q.query<{ n: string }>('SELECT COUNT(*) AS n FROM labels WHERE org = $1', [l.organizationId]);
          if (Number(n.rows[0]?.n ?? 0) >= max) return 'too_many' as const;
          await q.query('INSERT INTO labels (org, id, name, name_key, color, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [l.organizationId, l.id, l.name, labelNameKey(l.name), l.color, l.createdAt]);
          return l;
        });
      } catch (e) {
        if (isUniqueViolation(e)) return 'name_taken';
        throw e;
      }
    },
    async update(org, id, change) {
      const cur = await one(org, id);
      if (cur === null) return null;
      const next = { ...cur, ...change };
      try {
        const r = await db.query('UPDATE labels SET name = $1, name_key = $2, color = $3 WHERE org = $4 AND id = $5', [next.name, labelNameKey(next.name), next.color, org, id]);
        return r.rowCount === 1 ? next : null;
      } catch (e) {
        if (isUniqueViolation(e)) return 'name_taken';
        throw e;
      }
    },
    async delete(org, id) {
      return db.tx(async (q) => {
        await q.query(numbered(DELETE_LABELLED), [org, id]);
        return ((await q.query(numbered(DELETE_LABEL), [org, id])).rowCount ?? 0) === 1;
      });
    },
    async attach(org, kind, target, labelIds, max) {
      return db.tx(async (q) => {
        await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`labelled/${org}/${kind}/${target}`]);
        const on = new Set((await q.query<{ label_id: string }>('SELECT label_id FROM labelled WHERE org = $1 AND kind = $2 AND target = $3', [org, kind, target])).rows.map((r) => r.label_id));
        const added = [...new Set(labelIds)].filter((id) => !on.has(id));
        if (on.size + added.length > max) return 'too_many' as const;
        const at = new Date().toISOString();
        for (const id of added) await q.query(numbered(ATTACH), [org, kind, target, id, at]);
        return 'ok' as const;
      });
    },
    async detach(org, kind, target, labelId) {
      return ((await db.query(numbered(DETACH), [org, kind, target, labelId])).rowCount ?? 0) === 1;
    },
    async labelsOf(org, kind, targets) {
      const out = new Map<string, string[]>();
      if (targets.length === 0) return out;
      const rows = await db.rows<{ target: string; label_id: string }>(
        'SELECT target, label_id FROM labelled WHERE org = $1 AND kind = $2 AND target = ANY($3::text[]) ORDER BY added_at, label_id',
        [org, kind, targets],
      );
      for (const r of rows) out.set(r.target, [...(out.get(r.target) ?? []), r.label_id]);
      return out;
    },
  };
}
