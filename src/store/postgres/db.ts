import { AsyncLocalStorage } from 'node:async_hooks';
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

/**
 * The writes of one `together` call: one transaction on one connection,
 * opened by its first write and committed by `settle` or when the call ends.
 */
interface PgUnit {
  /** False once `together` returned: work it left behind runs on the pool as plain statements. */
  open: boolean;
  /** The transaction holding its writes so far, once it wrote. */
  tx: UnitTx | null;
  /** `tx` calls inside the unit, one after the other (each is a savepoint of the unit's transaction). */
  nested: Promise<unknown>;
}

interface UnitTx {
  /** Its connection, once the statements of the turn that opened it were sent (see `open`). */
  client: Promise<pg.PoolClient>;
  /** The connection once they were; null before (and, with `queue` null too, when none could be had). */
  conn: pg.PoolClient | null;
  /** Statements asked before it was opened, sent by `open`; null once it was, or once its connection failed. */
  queue: QueuedStatement[] | null;
  /** The unit commits it: no statement joins it any more. */
  closing: boolean;
  /** It was one statement, sent with no BEGIN and COMMIT around it (it commits on its own). */
  alone: boolean;
  /** Statements sent in it whose answer has not come yet. */
  pending: Promise<unknown>[];
  /** The first statement of it that failed: the transaction is lost (PostgreSQL rolls it back). */
  failed: { error: unknown } | null;
}

interface QueuedStatement {
  q: pg.QueryConfig | string;
  resolve: (r: pg.QueryResult) => void;
  reject: (e: unknown) => void;
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
 * - `together(fn)` is the unit of work of `SqliteDb.together`: every write
 *   `fn` makes through this database (in any store, across its awaits) goes
 *   into one transaction on one connection, opened by its first write, and
 *   commits when `fn` ends; `together` resolves once that commit is done and
 *   rejects (with nothing of the transaction kept) when it failed. Reads
 *   before the first write run on the pool; after it, on the transaction's
 *   connection (they see its writes). `settle()` inside it commits the
 *   writes so far and waits for them (before an outside effect, or before
 *   writing to another store whose commit must follow them); the next write
 *   opens a new transaction. It is a commit, not a rollback scope: if `fn`
 *   throws, what it wrote commits, unless a statement of it failed (then
 *   PostgreSQL rolled the transaction back and `together` rejects with that
 *   failure). A `tx` inside it is a savepoint of its transaction (a `tx`
 *   inside that one joins it). The
 *   statements of a unit are pipelined: sent without waiting for the ones
 *   before, so writes made in one turn of the event loop, and the commit
 *   that follows them, cost one round trip. A unit's transaction that holds
 *   one statement when the unit commits it is sent as that statement alone
 *   (it commits on its own, just as atomically), without BEGIN and COMMIT.
 * - The key-value methods keep small collections in `records`, one JSONB
 *   value per (collection, key), like the embedded database does.
 */
export class PgDb implements PgQueryable {
  /** Transactions committed and statements run since start (for benchmarks and metrics). */
  readonly stats = { transactions: 0, statements: 0 };
  /** The state of an actor is not in this database: the runtime commits a command's writes here before its fenced state write (see `CommitScope`). */
  readonly holdsActorState = false;

  private readonly units = new AsyncLocalStorage<PgUnit>();
  /** Set inside a unit's savepoint: a `tx` there joins it (a second savepoint would wait for the first to end). */
  private readonly inSavepoint = new AsyncLocalStorage<true>();

  private constructor(readonly pool: pg.Pool) {}

  static async open(url: string, opts: PgOpenOptions): Promise<PgDb> {
    if (opts.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(opts.schema)) throw new Error(`invalid schema name ${opts.schema}`);
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? 10,
      application_name: opts.applicationName ?? 'switchboard',
      idleTimeoutMillis: 30_000,
      // A unit of work sends its statements without waiting for the answers to the ones before.
      pipeline: true,
      // No JIT: every statement here is short, and compiling one (tens of milliseconds, chosen by the
      // plan's estimated cost, so for some parameter values and not others) only made a query slow.
      options: ['-c jit=off', ...(opts.schema === undefined ? [] : [`-c search_path=${opts.schema}`])].join(' '),
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
    const unit = this.units.getStore();
    if (unit !== undefined && unit.open && (unit.tx !== null || !isRead(sql))) return this.inUnit<R>(unit, sql, params, opts);
    this.stats.statements++;
    try {
      const q = statement(sql, params, opts);
      return await (typeof q === 'string' ? this.pool.query<R>(q) : this.pool.query<R>(q));
    } catch (e) {
      throw asStorageError(e);
    }
  }

  /** The rows of one statement. */
  async rows<R extends pg.QueryResultRow>(sql: string, params?: unknown[], opts?: { prepare?: boolean }): Promise<R[]> {
    return (await this.query<R>(sql, params, opts)).rows;
  }

  /** `fn` in one transaction on one connection (see Guarantees); inside `together`, a savepoint of the unit's transaction. */
  async tx<T>(fn: (q: PgQueryable) => Promise<T>): Promise<T> {
    const unit = this.units.getStore();
    if (unit !== undefined && unit.open) {
      if (this.inSavepoint.getStore() === true) return fn({ query: (sql, params) => this.inUnit(unit, sql, params) });
      return this.savepoint(unit, fn);
    }
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

  /**
   * Runs `fn` with every write it makes here in one transaction; resolves
   * with its result once that committed. Nested calls join the outer unit.
   * See the class guarantees.
   */
  async together<T>(fn: () => Promise<T>): Promise<T> {
    const outer = this.units.getStore();
    if (outer !== undefined && outer.open) return fn();
    const unit: PgUnit = { open: true, tx: null, nested: Promise.resolve() };
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await this.units.run(unit, fn) };
    } catch (e) {
      outcome = { ok: false, error: e };
    }
    unit.open = false;
    // Its writes are durable (or known lost) before it answers, even when it failed part way
    // (then its own failure is the answer: it already says the unit did not finish).
    try {
      await this.commitUnit(unit);
    } catch (e) {
      if (outcome.ok) throw e;
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** Inside `together`: commits the unit's writes so far and waits for them. Elsewhere: nothing to do. */
  async settle(): Promise<void> {
    const unit = this.units.getStore();
    if (unit === undefined || !unit.open) return;
    await this.commitUnit(unit);
  }

  /** Whether this call runs inside a `together` that is still open (its writes go into the unit's transaction). */
  get unitOpen(): boolean {
    return this.units.getStore()?.open === true;
  }

  /** Whether this call runs inside an open `together` that has written since its last commit (a statement now joins that transaction). */
  get unitWriting(): boolean {
    const unit = this.units.getStore();
    return unit !== undefined && unit.open && unit.tx !== null;
  }

  /** Runs `fn` outside any unit: its statements run on the pool, each committing on its own. */
  apart<T>(fn: () => Promise<T>): Promise<T> {
    return this.units.exit(fn);
  }

  /** A statement of a unit: on its transaction's connection, opening the transaction first. */
  private async inUnit<R extends pg.QueryResultRow>(unit: PgUnit, sql: string, params: unknown[] | undefined, opts?: { prepare?: boolean }): Promise<pg.QueryResult<R>> {
    const tx = (unit.tx ??= this.begin());
    this.stats.statements++;
    // Its connection could not be had: the statement fails as the ones before it did.
    if (tx.conn === null && tx.queue === null) throw asStorageError(tx.failed?.error);
    const q = statement(sql, params, opts);
    const sent = tx.conn !== null ? this.send(tx, tx.conn, q) : new Promise<pg.QueryResult>((resolve, reject) => tx.queue!.push({ q, resolve, reject }));
    try {
      return (await sent) as pg.QueryResult<R>;
    } catch (e) {
      // `send` (or the failed connection) recorded it on the transaction already.
      throw asStorageError(e);
    }
  }

  /** Sends a statement of an opened transaction; its answer is waited for before the commit. */
  private send(tx: UnitTx, client: pg.PoolClient, q: pg.QueryConfig | string): Promise<pg.QueryResult> {
    const sent = typeof q === 'string' ? client.query(q) : client.query(q);
    tx.pending.push(sent);
    // Recorded before anything waiting for the commit looks (a reaction registered first runs first).
    sent.catch((e: unknown) => {
      tx.failed ??= { error: e };
    });
    return sent;
  }

  /**
   * Starts a unit's transaction: a connection, then (once the turn that asked for it has run, so
   * its statements are all there) BEGIN and those statements in one write; see `open`.
   */
  private begin(): UnitTx {
    const tx: UnitTx = { client: null as unknown as Promise<pg.PoolClient>, conn: null, queue: [], closing: false, alone: false, pending: [], failed: null };
    tx.client = this.pool.connect().then(
      (client) =>
        new Promise<pg.PoolClient>((resolve) =>
          process.nextTick(() => {
            this.open(tx, client);
            resolve(client);
          }),
        ),
      (e: unknown) => {
        tx.failed ??= { error: e };
        const queued = tx.queue ?? [];
        tx.queue = null;
        for (const s of queued) s.reject(e);
        throw asStorageError(e);
      },
    );
    // Nobody may wait on it if the unit's first write failed to get a connection and was caught.
    tx.client.catch(() => {});
    return tx;
  }

  /**
   * Sends what was asked of a transaction before it had its connection. A unit that already
   * commits it with one statement in it sends that statement alone: it commits on its own, as
   * atomic as inside BEGIN and COMMIT, for one exchange with the server instead of three.
   */
  private open(tx: UnitTx, client: pg.PoolClient): void {
    const queued = tx.queue ?? [];
    tx.queue = null;
    tx.conn = client;
    const deliver = (s: QueuedStatement) => this.send(tx, client, s.q).then(s.resolve, s.reject);
    if (tx.closing && queued.length === 1) {
      tx.alone = true;
      void deliver(queued[0]!);
      return;
    }
    // One write for BEGIN, the statements asked so far and what those waiting for the connection send
    // now (the COMMIT of a unit that ends here): they run as microtasks, the tick after them uncorks.
    const stream = (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection?.stream;
    stream?.cork?.();
    queueMicrotask(() => process.nextTick(() => stream?.uncork?.()));
    this.stats.statements++;
    void this.send(tx, client, 'BEGIN');
    for (const s of queued) void deliver(s);
  }

  /** Commits a unit's open transaction (COMMIT sent behind its statements) and waits for it; rejects when it was lost. */
  private async commitUnit(unit: PgUnit): Promise<void> {
    await unit.nested;
    const tx = unit.tx;
    if (tx === null) return;
    unit.tx = null;
    tx.closing = true;
    let client: pg.PoolClient;
    try {
      client = await tx.client;
    } catch (e) {
      throw asStorageError(e);
    }
    let broken: Error | undefined;
    if (tx.alone) {
      try {
        await Promise.allSettled(tx.pending);
        if (tx.failed !== null) throw asStorageError(tx.failed.error);
        this.stats.transactions++;
        return;
      } finally {
        client.release();
      }
    }
    try {
      // Sent at once, behind statements that may still be on their way: PostgreSQL answers them in order.
      this.stats.statements++;
      const commit = client.query('COMMIT');
      await Promise.allSettled(tx.pending);
      let committed: pg.QueryResult;
      try {
        committed = await commit;
      } catch (e) {
        tx.failed ??= { error: e };
        broken = e instanceof Error ? e : new Error(String(e));
        throw asStorageError(e);
      }
      // COMMIT of a transaction that a failed statement aborted answers ROLLBACK.
      if (tx.failed !== null || committed.command !== 'COMMIT') {
        const e = tx.failed?.error ?? new Error('the transaction was rolled back');
        throw isAppError(e) ? e : asStorageError(e);
      }
      this.stats.transactions++;
    } finally {
      client.release(broken);
    }
  }

  /** A `tx` inside a unit: a savepoint of its transaction, one at a time, so `fn` fails as a whole. */
  private savepoint<T>(unit: PgUnit, fn: (q: PgQueryable) => Promise<T>): Promise<T> {
    const q: PgQueryable = { query: (sql, params) => this.inUnit(unit, sql, params) };
    const run = unit.nested.then(async () => {
      await q.query('SAVEPOINT unit_tx');
      try {
        const out = await this.inSavepoint.run(true, () => fn(q));
        await q.query('RELEASE SAVEPOINT unit_tx');
        return out;
      } catch (e) {
        const tx = unit.tx;
        // A failed statement aborted the transaction; rolling back to the savepoint saves the rest of it.
        if (tx !== null) {
          const failed = tx.failed;
          tx.failed = null;
          await q.query('ROLLBACK TO SAVEPOINT unit_tx').catch(() => {
            tx.failed = failed;
          });
        }
        throw e;
      }
    });
    unit.nested = run.catch(() => {});
    return run;
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

/** A statement as sent: prepared (see `prepared`), or with `prepare: false` unnamed, planned for its values each time. */
function statement(sql: string, params: unknown[] | undefined, opts: { prepare?: boolean } | undefined): pg.QueryConfig | string {
  return opts?.prepare === false ? { text: sql, values: params } : prepared(sql, params);
}

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

/** A statement that only reads (it takes no row lock): inside a unit it needs no transaction of its own. */
function isRead(sql: string): boolean {
  return /^\s*SELECT\b/i.test(sql) && !/\bFOR\s+(UPDATE|SHARE|NO\s+KEY|KEY)\b/i.test(sql);
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
