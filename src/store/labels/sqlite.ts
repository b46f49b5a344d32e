import type { Label } from '../../domain/labels.js';
import { labelNameKey } from '../../domain/labels.js';
import type { SqliteDb } from '../sqlite/db.js';
import type { LabelRepo } from './port.js';
import { ATTACH, COUNT_LABELS, DELETE_LABEL, DELETE_LABELLED, DETACH, INSERT_LABEL, SELECT_LABEL, SELECT_LABELS } from './sql.js';

/**
 * Labels in the node's SQLite database (`labels`, `labelled`; schema step 8).
 * Each check-and-write runs in one synchronous `db.run`, so nothing
 * interleaves between the check and the write.
 */
export function createSqliteLabelRepo(db: SqliteDb): LabelRepo {
  const s = (sql: string) => db.stmt(sql);
  const one = (org: string, id: string) => (s(SELECT_LABEL).get(org, id) as Label | undefined) ?? null;
  const nameTaken = (org: string, name: string, except?: string) =>
    (s('SELECT id FROM labels WHERE org = ? AND name_key = ?').all(org, labelNameKey(name)) as { id: string }[]).some((r) => r.id !== except);
  return {
    async list(org) {
      return s(SELECT_LABELS).all(org) as Label[];
    },
    async get(org, id) {
      return one(org, id);
    },
    async create(l, max) {
      return db.run(() => {
        if (nameTaken(l.organizationId, l.name)) return 'name_taken' as const;
        if ((s(COUNT_LABELS).get(l.organizationId) as { n: number }).n >= max) return 'too_many' as const;
        s(INSERT_LABEL).run(l.organizationId, l.id, l.name, labelNameKey(l.name), l.color, l.createdAt);
        return l;
      });
    },
    async update(org, id, change) {
      return db.run(() => {
        const cur = one(org, id);
        if (cur === null) return null;
        if (change.name !== undefined && nameTaken(org, change.name, id)) return 'name_taken' as const;
        const next = { ...cur, ...change };
        s('UPDATE labels SET name = ?, name_key = ?, color = ? WHERE org = ? AND id = ?').run(next.name, labelNameKey(next.name), next.color, org, id);
        return next;
      });
    },
    async delete(org, id) {
      return db.run(() => {
        s(DELETE_LABELLED).run(org, id);
        return s(DELETE_LABEL).run(org, id).changes === 1;
      });
    },
    async attach(org, kind, target, labelIds, max) {
      return db.run(() => {
        const on = new Set((s('SELECT label_id FROM labelled WHERE org = ? AND kind = ? AND target = ?').all(org, kind, target) as { label_id: string }[]).map((r) => r.label_id));
        const added = [...new Set(labelIds)].filter((id) => !on.has(id));
        if (on.size + added.length > max) return 'too_many' as const;
        const at = new Date().toISOString();
        added.forEach((id) => s(ATTACH).run(org, kind, target, id, at));
        return 'ok' as const;
      });
    },
    async detach(org, kind, target, labelId) {
      return db.run(() => s(DETACH).run(org, kind, target, labelId).changes === 1);
    },
    async labelsOf(org, kind, targets) {
      const out = new Map<string, string[]>();
      if (targets.length === 0) return out;
      const rows = s(`SELECT target, label_id FROM labelled WHERE org = ? AND kind = ? AND target IN (SELECT value FROM json_each(?)) ORDER BY added_at, label_id`).all(
        org,
        kind,
        JSON.stringify(targets),
      ) as { target: string; label_id: string }[];
      for (const r of rows) out.set(r.target, [...(out.get(r.target) ?? []), r.label_id]);
      return out;
    },
  };
}

