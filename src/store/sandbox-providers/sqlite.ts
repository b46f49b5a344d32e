import type { SqliteDb } from '../sqlite/db.js';
import type { SandboxProviderRecords } from './port.js';

/** The records in a SQLite database of their own (`openKeyValueDb`), closed with them. One process: a check and its write run without an await between. */
export function createSqliteSandboxProviderRecords(db: SqliteDb): SandboxProviderRecords {
  return {
    async get(coll, key) {
      return db.get(coll, key);
    },
    put: (coll, key, value) => db.put(coll, key, value),
    async putIfAbsent(coll, key, value) {
      if (db.has(coll, key)) return false;
      await db.put(coll, key, value);
      return true;
    },
    delete: (coll, key) => db.delete(coll, key),
    async values(coll) {
      return db.values(coll);
    },
    async entries<T>(coll: string, prefix?: string) {
      const all = db.entries<T>(coll);
      return prefix === undefined ? all : all.filter(([k]) => k.startsWith(prefix));
    },
    close: () => db.close(),
  };
}
