import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { PgDb, NODE_PG_MIGRATIONS } from '../../src/store/index.js';
import { startPostgres, type PostgresProcess } from './servers.js';

/**
 * A real PostgreSQL server for the enclosing suite (started before its first
 * test, stopped after its last), and databases on it: each `open()` is the
 * node schema, migrated, in a schema of its own, so cases stay independent
 * on one server. Every database opened is closed after the last test.
 */
export function usePostgres(): { readonly server: PostgresProcess; open(opts?: { poolSize?: number }): Promise<PgDb> } {
  let server: PostgresProcess | undefined;
  const opened: PgDb[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(opened.map((db) => db.close().catch(() => {})));
    await server?.stop();
  });
  return {
    get server() {
      return server!;
    },
    async open(opts) {
      const db = await PgDb.open(server!.url, { migrations: NODE_PG_MIGRATIONS, schema: `t_${randomUUID().replace(/-/g, '').slice(0, 12)}`, poolSize: opts?.poolSize ?? 4 });
      opened.push(db);
      return db;
    },
  };
}
