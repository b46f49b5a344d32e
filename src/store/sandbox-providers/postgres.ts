import { likePrefix, type PgDb } from '../postgres/db.js';
import type { SandboxProviderRecords } from './port.js';

/** The records in the node's PostgreSQL (`records`, collections named `sb…`); the pool is the node's. */
export function createPostgresSandboxProviderRecords(db: PgDb): SandboxProviderRecords {
  return {
    get: (coll, key) => db.get(coll, key),
    put: (coll, key, value) => db.put(coll, key, value),
    putIfAbsent: (coll, key, value) => db.putIfAbsent(coll, key, value),
    async delete(coll, key) {
      await db.delete(coll, key);
    },
    values: (coll) => db.values(coll),
    async entries<T>(coll: string, prefix?: string) {
      const rows =
        prefix === undefined
          ? await db.rows<{ key: string; value: T }>('SELECT key, value FROM records WHERE coll = $1 ORDER BY key', [coll])
          : await db.rows<{ key: string; value: T }>("SELECT key, value FROM records WHERE coll = $1 AND key LIKE $2 ESCAPE '\\' ORDER BY key", [coll, `${likePrefix(prefix)}%`]);
      return rows.map((r): [string, T] => [r.key, r.value]);
    },
    async close() {},
  };
}
