import { conflict } from '../../errors.js';
import type { SqliteDb } from '../sqlite/db.js';
import { nameKey, type Resource, type ResourceStore } from './port.js';

const RES = 'resources';
const NAMES = 'resourceNames';
const k = (org: string, id: string) => `${org}/${id}`;
const taken = (name: string) => conflict('resource_name_taken', 'a resource with this name exists in the organization', { name });

/** SQLite adapter: one process, and each check-then-write runs synchronously (the write applies before anything else runs). */
export function createSqliteResourceStore(db: SqliteDb): ResourceStore {
  return {
    async create(r) {
      if (db.has(NAMES, k(r.organizationId, nameKey(r.name)))) throw taken(r.name);
      await db.write([
        { coll: RES, key: k(r.organizationId, r.id), value: r },
        { coll: NAMES, key: k(r.organizationId, nameKey(r.name)), value: r.id },
      ]);
    },
    async get(org, id) {
      return db.get<Resource>(RES, k(org, id)) ?? null;
    },
    async list(org, page) {
      const all = db.valuesWithPrefix<Resource>(RES, `${org}/`).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
      return { resources: all.slice(page.offset, page.offset + page.limit), total: all.length };
    },
    async replace(expected, next) {
      const cur = db.get<Resource>(RES, k(expected.organizationId, expected.id));
      if (cur === undefined || cur.version !== expected.version) return false;
      const oldName = nameKey(cur.name);
      const newName = nameKey(next.name);
      if (oldName !== newName && db.has(NAMES, k(cur.organizationId, newName))) throw taken(next.name);
      await db.write([
        ...(oldName !== newName
          ? [
              { coll: NAMES, key: k(cur.organizationId, oldName), delete: true as const },
              { coll: NAMES, key: k(cur.organizationId, newName), value: cur.id },
            ]
          : []),
        { coll: RES, key: k(cur.organizationId, cur.id), value: next },
      ]);
      return true;
    },
    async delete(org, id) {
      const cur = db.get<Resource>(RES, k(org, id));
      if (cur === undefined) return false;
      await db.write([
        { coll: RES, key: k(org, id), delete: true },
        { coll: NAMES, key: k(org, nameKey(cur.name)), delete: true },
      ]);
      return true;
    },
  };
}
