import { createHash } from 'node:crypto';
import pg from 'pg';
import { AppError, isAppError, unavailable } from '../../errors.js';

/** One numbered step of the schema; its SQL runs in one transaction with the step's row in `schema_migrations`. */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

/** What a store runs its statements on: the pool (each statement on its own) or one transaction's client. */
export interface PgQueryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

export interface PgOpenOptions {
  migrations: PgMigration[];
  /** Connections this node holds at most. */
  poolSize?: number;
  /** How long `open` keeps trying to reach a server that is still starting. */
  connectTimeoutMs?: number;
  /** Name shown in `pg_stat_activity`. */
  applicationName?: string;
  /** A schema of its own for every table (created when missing); unset: the database's default (`public`). */
  schema?: string;
}

// Any key will do as long as every node uses the same one: it serializes the nodes' migration runs.
const MIGRATION_LOCK = 0x5b_0d_b0_01;

// Errors that say "not now" rather than "never": the server is unreachable, starting, shutting down, or out of room.
const RETRYABLE_SQLSTATE = /^(08|53|57P0[1-3])/;
const CONFLICT_SQLSTATE = new Set(['40001', '40P01']);
// The driver's own socket errors carry Node's codes (ECONNREFUSED, ECONNRESET…) where a SQLSTATE would be.
const SOCKET_ERROR = /^E[A-Z]+$/;

/**
 * The clustered system of record: one PostgreSQL database reached through a
 * pool per node (node-postgres).
 *
 * Guarantees:
 * - `open` applies the numbered migrations not yet in `schema_migrations`,
 *   each in its own transaction, under a transaction-level advisory lock:
 *   nodes starting together run each step once, and a node that finds the
 *   database at a newer version than it knows refuses to start.
 * - `tx(fn)` runs `fn` in one transaction (READ COMMITTED): everything it
 *   writes commits together or not at all. A serialization failure or a
 *   deadlock retries `fn` from the start (at most 5 times), so `fn` must
 *   only touch the database.
 * - A statement that fails because the server is unreachable, starting,
 *   shutting down or out of resources rejects with a 503
 *   `storage_unavailable` (retryable); nothing of a transaction that failed
 *   stays. Anything else (a constraint, a bug) rejects with the driver's
 *   error.
 * - The key-value methods keep small collections in `records`, one JSONB
 *   value per (collection, key), like the embedded database does.
 */
export class PgDb implements PgQueryable {
  /** Transactions committed and statements run since start (for benchmarks and metrics). */
  readonly stats = { transactions: 0, statements: 0 };

  private constructor(readonly pool: pg.Pool) {}

  static async open(url: string, opts: PgOpenOptions): Promise<PgDb> {
    if (opts.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(opts.schema)) throw new Error(`invalid schema name ${opts.schema}`);
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? 10,
      application_name: opts.applicationName ?? 'switchboard',
      idleTimeoutMillis: 30_000,
      options: opts.schema === undefined ? undefined : `-c search_path=${opts.schema}`,
    });
    // An idle client whose server went away emits here; without a listener it would end the process.
    pool.on('error', () => {});
    const db = new PgDb(pool);
    const deadline = Date.now() + (opts.connectTimeoutMs ?? 30_000);
    for (;;) {
      try {
        await db.migrate(opts.migrations, opts.schema);
        return db;
      } catch (e) {
        if (!isRetryable(e) || Date.now() > deadline) {
          await pool.end().catch(() => {});
          throw e;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  private async migrate(migrations: PgMigration[], schema: string | undefined): Promise<void> {
    const known = Math.max(0, ...migrations.map((m) => m.version));
    await this.tx(async (q) => {
      await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      if (schema !== undefined) await q.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await q.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
      const done = new Set((await q.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
      const newest = Math.max(0, ...done);
      if (newest > known) {
        throw new Error(`the database's schema is at version ${newest}, newer than this build knows (${known}): run the newer build, or restore a backup made by this one`);
      }
      for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
        if (done.has(m.version)) continue;
        await q.query(m.sql);
        await q.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      }
    });
  }

  /** The schema version applied (the newest step in `schema_migrations`). */
  async version(): Promise<number> {
    const r = await this.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
    return r.rows[0]?.v ?? 0;
  }

  /**
   * One statement. `prepare: false` sends it unnamed, planned for its values
   * every time: for a statement whose best plan depends on them (a text
   * search: a common word and a rare one want different plans).
   */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[], opts?: { prepare?: boolean }): Promise<pg.QueryResult<R>> {
    this.stats.statements++;
    try {
      const q = opts?.prepare === false ? { text: sql, values: params } : prepared(sql, params);
      return await (typeof q === 'string' ? this.pool.query<R>(q) : this.pool.query<R>(q));
    } catch (e) {
      throw asStorageError(e);
    }
  }

  /** The rows of one statement. */
  async rows<R extends pg.QueryResultRow>(sql: string, params?: unknown[], opts?: { prepare?: boolean }): Promise<R[]> {
    return (await this.query<R>(sql, params, opts)).rows;
  }

  /** `fn` in one transaction on one connection (see Guarantees). */
  async tx<T>(fn: (q: PgQueryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (e) {
        throw asStorageError(e);
      }
      const stats = this.stats;
      const q: PgQueryable = {
        query: (sql, params) => {
          stats.statements++;
          const q = prepared(sql, params);
          return typeof q === 'string' ? client.query(q) : client.query(q);
        },
      };
      let broken: unknown;
      try {
        await client.query('BEGIN');
        const out = await fn(q);
        await client.query('COMMIT');
        stats.transactions++;
        return out;
      } catch (e) {
        await client.query('ROLLBACK').catch((err: unknown) => {
          broken = err;
        });
        if (attempt < 5 && CONFLICT_SQLSTATE.has(sqlState(e) ?? '')) continue;
        throw isAppError(e) ? e : asStorageError(e);
      } finally {
        // A connection whose rollback failed is in an unknown state: it leaves the pool.
        client.release(broken instanceof Error ? broken : undefined);
      }
    }
  }

  // Key-value collections (`records`).

  async get<T>(coll: string, key: string, q: PgQueryable = this): Promise<T | undefined> {
    const r = await q.query<{ value: T }>('SELECT value FROM records WHERE coll = $1 AND key = $2', [coll, key]);
    return r.rows[0]?.value;
  }

  async put(coll: string, key: string, value: unknown, q: PgQueryable = this): Promise<void> {
    await q.query('INSERT INTO records (coll, key, value) VALUES ($1, $2, $3) ON CONFLICT (coll, key) DO UPDATE SET value = excluded.value', [coll, key, JSON.stringify(value)]);
  }

  /** Sets the value only when the key is absent; true when it was set. */
  async putIfAbsent(coll: string, key: string, value: unknown, q: PgQueryable = this): Promise<boolean> {
    const r = await q.query('INSERT INTO records (coll, key, value) VALUES ($1, $2, $3) ON CONFLICT (coll, key) DO NOTHING', [coll, key, JSON.stringify(value)]);
    return r.rowCount === 1;
  }

  async delete(coll: string, key: string, q: PgQueryable = this): Promise<boolean> {
    const r = await q.query('DELETE FROM records WHERE coll = $1 AND key = $2', [coll, key]);
    return r.rowCount === 1;
  }

  /** Every value of a (small) collection, in key order. */
  async values<T>(coll: string, q: PgQueryable = this): Promise<T[]> {
    const r = await q.query<{ value: T }>('SELECT value FROM records WHERE coll = $1 ORDER BY key', [coll]);
    return r.rows.map((row) => row.value);
  }

  /** Throws when the database cannot be reached (the readiness check). */
  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

const names = new Map<string, string>();

/**
 * A statement as a named prepared statement: each connection parses and
 * plans it once, then only binds and runs it (the service's statements are a
 * fixed set of texts with their values as parameters, never spliced in).
 */
function prepared(sql: string, params: unknown[] | undefined): pg.QueryConfig | string {
  // Without parameters: sent as a simple query, which may hold several statements (a migration step).
  if (params === undefined) return sql;
  let name = names.get(sql);
  if (name === undefined) {
    name = `sb_${createHash('sha1').update(sql).digest('base64url').slice(0, 20)}`;
    if (names.size < 10_000) names.set(sql, name);
  }
  return { name, text: sql, values: params };
}

/** `prefix` with LIKE's wildcards escaped. */
export function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isRetryable(e: unknown): boolean {
  if (isAppError(e)) return e.code === 'storage_unavailable';
  const code = sqlState(e);
  if (code !== undefined) return RETRYABLE_SQLSTATE.test(code) || SOCKET_ERROR.test(code);
  return e instanceof Error && /Connection terminated|timeout exceeded when trying to connect/i.test(e.message);
}

function asStorageError(e: unknown): unknown {
  if (e instanceof AppError || !isRetryable(e)) return e;
  return unavailable('storage_unavailable', `the database could not be reached (${e instanceof Error ? e.message : String(e)}); nothing of the request was kept`, 2);
}

/**
 * SQL written with `?` placeholders (SQLite's, and the statements both
 * adapters share) in PostgreSQL's numbered form: `$1`, `$2`… The shared SQL
 * has no `?` inside literals.
 */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
