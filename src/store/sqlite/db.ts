import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { AppError, unavailable } from '../../errors.js';
import { ensurePrivateDir, tightenFiles } from '../../private-files.js';
import { sqliteDatabase, sqlitePackage } from './native.js';

export type WriteOp =
  | { coll: string; key: string; value: unknown }
  | { coll: string; key: string; delete: true };

/** One step of a database's schema; `up` runs inside the transaction that also sets `user_version`. */
export interface Migration {
  version: number;
  up(db: BetterSqlite3.Database): void;
}

export type Synchronous = 'FULL' | 'NORMAL';

export interface SqliteOpenOptions {
  /** The schema, oldest step first; versions 1, 2, 3… */
  migrations: Migration[];
  /**
   * `FULL` (default): every commit fsyncs the WAL, so an acknowledged write
   * survives a power loss. `NORMAL`: commits reach the OS but are fsynced only
   * at checkpoints: a killed process loses nothing, a power loss or kernel
   * crash can lose the last commits (never corrupts).
   */
  synchronous?: Synchronous;
  /** Writes gathered into one commit at most (bounds how long a commit holds the event loop). */
  maxBatch?: number;
  /** Runs after the migrations, in their transaction's wake (the one-time import of an older store). */
  afterMigrate?: (db: SqliteDb) => void;
  /**
   * How long a `together` unit may keep its batch from committing once the
   * commit is due (default 2000 ms). Past it the batch commits anyway, the
   * unit's writes split across commits (as without a unit) and
   * `stats.unitsCutShort` counts it: a unit is only local writes, so this is
   * a unit that waited on something it should not have.
   */
  maxHoldMs?: number;
}

/** The writes of one `together` call. */
interface Unit {
  /** False once `together` returned: writes from work it left behind are plain writes. */
  open: boolean;
  /** Its writes are in the open batch, which does not commit until the unit settles or ends. */
  holding: boolean;
  /** Settle when the batches carrying its writes committed; reject when one failed. */
  pending: Promise<void>[];
  /**
   * Set when a batch holding some of its writes was lost while it still ran:
   * its later writes are refused with this, so it never commits a part after
   * the start was lost.
   */
  lost: unknown;
}

/** Raised at start when the database cannot be used; the message names the file and what to do. */
export class StorageOpenError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageOpenError';
  }
}

const SQLITE_HEADER = 'SQLite format 3\0';

/**
 * One SQLite database (better-sqlite3, WAL journal) with group commit.
 *
 * Guarantees:
 * - `run(fn)` executes `fn` at once, synchronously, inside the open batch
 *   transaction (readers on this connection see its writes immediately), as
 *   one savepoint: if `fn` throws, none of its statements stay.
 * - The promise `run` returns resolves only after the batch that carries
 *   `fn` committed (with `synchronous=FULL`, after the WAL was fsynced); it
 *   rejects when that commit failed, and then none of the batch's writes are
 *   in the database. Nothing uncommitted is ever acknowledged. Its
 *   `onCommit` callback runs at that commit, in the order the writes ran.
 * - Group commit: every `run` of the same turn of the event loop shares one
 *   commit (one fsync), up to `maxBatch` writes per commit.
 * - `together(fn)` makes every write of `fn` (across its awaits, in any
 *   store on this database) part of one commit: inside it `run` resolves as
 *   soon as `fn`'s statements ran, the batch does not commit before `fn`
 *   ended, and `together` resolves once that commit is done (it rejects,
 *   with nothing of the unit kept, when the commit failed). It is a commit,
 *   not a rollback scope: if `fn` throws, what it wrote commits. `settle()`
 *   inside it commits the writes so far and waits for them (before an
 *   outside effect). A unit's first write waits for a commit that is already
 *   due, so overlapping units never put a commit off for long; one held past
 *   `maxHoldMs` is committed in pieces and counted. A unit whose earlier
 *   writes were lost (their batch failed while it still ran) has its later
 *   writes refused with that error: it never commits a tail without its head.
 * - A failed commit (disk full, I/O error) rolls the batch back and rejects
 *   its writes with a 503 `storage_unavailable`; the next batch tries again,
 *   so the service recovers once the disk has room.
 * - A `beforeCommit` hook runs inside every batch, just before its COMMIT, as
 *   one savepoint: what it writes commits with the batch; if it throws, its
 *   writes are undone and the batch commits without them.
 * - The database file, its WAL and its directory are created 0600 / 0700.
 * - `open` refuses a file that is not a database, is truncated, is
 *   unreadable, or was written by a newer schema, with a StorageOpenError
 *   that names the file and what to do.
 *
 * The key-value methods (`get`, `put`, `write`…) keep small collections in the
 * `records` table; anything queried has a table of its own.
 */
export class SqliteDb {
  private batch: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private inBatch = false;
  private scheduled = false;
  private closed = false;
  private readonly stmts = new Map<string, BetterSqlite3.Statement>();
  /** Commits so far (each one fsync of the WAL with synchronous=FULL) and the writes they carried. */
  readonly stats = { commits: 0, writes: 0, failedCommits: 0, unitsCutShort: 0 };

  private readonly units = new AsyncLocalStorage<Unit>();
  /** Units whose writes are in the open batch: it commits when the last of them settles. */
  private readonly holders = new Set<Unit>();
  /** A commit came due while units held the batch. */
  private commitDue = false;
  private holdTimer: NodeJS.Timeout | null = null;
  /** Writes of units that wait for the due commit before they join a batch. */
  private afterCommit: (() => void)[] = [];
  private readonly commitHooks: (() => void)[] = [];

  private constructor(
    readonly raw: BetterSqlite3.Database,
    /** The file, or null for an in-memory database. */
    readonly file: string | null,
    private readonly maxBatch: number,
    private readonly maxHoldMs: number,
  ) {}

  static open(file: string | null, opts: SqliteOpenOptions): SqliteDb {
    if (file !== null) {
      ensurePrivateDir(dirname(file));
      checkFile(file);
    }
    let raw: BetterSqlite3.Database;
    try {
      // Created 0600: the process umask is narrowed around the open, since SQLite creates with 0644.
      const old = process.umask(0o077);
      try {
        raw = new (sqliteDatabase())(file ?? ':memory:');
      } finally {
        process.umask(old);
      }
    } catch (e) {
      throw openError(file, e);
    }
    try {
      raw.pragma('journal_mode = WAL');
      raw.pragma(`synchronous = ${opts.synchronous ?? 'FULL'}`);
      raw.pragma('foreign_keys = OFF');
      raw.pragma('busy_timeout = 5000');
      // Keeps the WAL from growing past ~4 MB between checkpoints.
      raw.pragma('wal_autocheckpoint = 1000');
      const db = new SqliteDb(raw, file, opts.maxBatch ?? 1000, opts.maxHoldMs ?? 2000);
      db.migrate(opts.migrations);
      opts.afterMigrate?.(db);
      if (file !== null) tightenFiles([file, `${file}-wal`, `${file}-shm`]);
      return db;
    } catch (e) {
      raw.close();
      if (e instanceof StorageOpenError) throw e;
      throw openError(file, e);
    }
  }

  private migrate(migrations: Migration[]): void {
    const latest = migrations.length === 0 ? 0 : migrations[migrations.length - 1]!.version;
    const current = this.raw.pragma('user_version', { simple: true }) as number;
    if (current > latest) {
      throw new StorageOpenError(
        `${this.file ?? ':memory:'} was written by a newer version of Switchboard (schema ${current}; this version knows up to ${latest}). Run the newer version, or restore a backup taken with this one.`,
      );
    }
    for (const m of migrations) {
      if (m.version <= current) continue;
      this.raw.transaction(() => {
        m.up(this.raw);
        this.raw.pragma(`user_version = ${m.version}`);
      })();
    }
  }

  /** The schema version stored in the file. */
  get version(): number {
    return this.raw.pragma('user_version', { simple: true }) as number;
  }

  /** True once `close` ran: later writes are refused. */
  get isClosed(): boolean {
    return this.closed;
  }

  get persistent(): boolean {
    return this.file !== null;
  }

  /** A prepared statement, cached by its text. */
  stmt(sql: string): BetterSqlite3.Statement {
    let s = this.stmts.get(sql);
    if (s === undefined) {
      s = this.raw.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  /**
   * Runs `fn` now, atomically, in the current batch; resolves with its result
   * once the batch committed (inside `together`: once `fn` ran). See the
   * class guarantees.
   */
  run<T>(fn: () => T, onCommit?: (result: T) => void): Promise<T> {
    if (this.closed) return Promise.reject(new Error('database is closed'));
    const unit = this.units.getStore();
    if (unit !== undefined && unit.open) return this.runInUnit(unit, fn, onCommit);
    let result: T;
    try {
      result = this.execute(fn);
    } catch (e) {
      return Promise.reject(e);
    }
    this.stats.writes++;
    const done = new Promise<T>((resolve, reject) => {
      this.batch.push({
        resolve: () => {
          // A callback that throws fails its own write's promise, never the rest of the batch's settling.
          try {
            onCommit?.(result);
            resolve(result);
          } catch (e) {
            reject(e);
          }
        },
        reject,
      });
    });
    this.scheduleCommit();
    return done;
  }

  private runInUnit<T>(unit: Unit, fn: () => T, onCommit?: (result: T) => void): Promise<T> {
    if (unit.lost !== undefined) return Promise.reject(unit.lost);
    if (!unit.holding && this.commitDue) {
      // The batch is waiting for the units in it to finish: a unit not in it yet joins the next one,
      // so a stream of overlapping units cannot put the commit off.
      return new Promise<void>((resolve) => this.afterCommit.push(resolve)).then(() => this.run(fn, onCommit));
    }
    let result: T;
    try {
      result = this.execute(fn);
    } catch (e) {
      return Promise.reject(e);
    }
    this.stats.writes++;
    if (!unit.holding) {
      unit.holding = true;
      this.holders.add(unit);
      pend(unit, new Promise<void>((resolve, reject) => this.batch.push({ resolve, reject })));
    }
    if (onCommit !== undefined) {
      pend(
        unit,
        new Promise<void>((resolve, reject) =>
          this.batch.push({
            resolve: () => {
              try {
                onCommit(result);
                resolve();
              } catch (e) {
                reject(e);
              }
            },
            // A lost batch is reported to the unit once, by its first write's promise.
            reject: () => resolve(),
          }),
        ),
      );
    }
    this.scheduleCommit();
    return Promise.resolve(result);
  }

  /** `fn` as one savepoint of the open batch transaction (a writer's, or a commit hook's, which is no write of its own). */
  private execute<T>(fn: () => T): T {
    if (!this.inBatch) {
      this.raw.exec('BEGIN');
      this.inBatch = true;
    }
    let result: T;
    this.raw.exec('SAVEPOINT w');
    try {
      result = fn();
      this.raw.exec('RELEASE w');
    } catch (e) {
      if (this.raw.inTransaction) {
        this.raw.exec('ROLLBACK TO w');
        this.raw.exec('RELEASE w');
      } else {
        // SQLite rolled the whole transaction back (it does on a full disk or an I/O error): the
        // batch's earlier writes are gone too, so their writers learn it now.
        this.stats.failedCommits++;
        this.dropBatch(asStorageError(e));
      }
      throw asStorageError(e);
    }
    return result;
  }

  private scheduleCommit(): void {
    if (this.batch.length >= this.maxBatch) this.commit();
    else if (!this.scheduled) {
      this.scheduled = true;
      // Outside any unit: what the commit sets going (event consumers) is not part of the unit.
      this.units.exit(() =>
        setImmediate(() => {
          this.scheduled = false;
          this.commit();
        }),
      );
    }
  }

  /**
   * Runs `fn` with all its writes to this database in one commit; resolves
   * with its result once they committed. Nested calls join the outer unit.
   * See the class guarantees.
   */
  async together<T>(fn: () => Promise<T>): Promise<T> {
    const outer = this.units.getStore();
    if (outer !== undefined && outer.open) return fn();
    const unit: Unit = { open: true, holding: false, pending: [], lost: undefined };
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await this.units.run(unit, fn) };
    } catch (e) {
      outcome = { ok: false, error: e };
    }
    unit.open = false;
    this.release(unit);
    // Its writes are durable (or known lost) before it answers, even when it failed part way.
    const settled = await Promise.allSettled(unit.pending);
    const lost = settled.find((r) => r.status === 'rejected');
    if (lost !== undefined) throw lost.reason;
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** Inside `together`: commits the unit's writes so far and waits for them. Elsewhere: nothing to do. */
  async settle(): Promise<void> {
    const unit = this.units.getStore();
    if (unit === undefined || !unit.open) return;
    this.release(unit);
    const pending = unit.pending;
    unit.pending = [];
    await Promise.all(pending);
  }

  private release(unit: Unit): void {
    if (!unit.holding) return;
    unit.holding = false;
    this.holders.delete(unit);
    if (this.holders.size === 0 && this.commitDue) this.commit();
  }

  /** Commits the open batch, settling its writers; waits while units hold it (see `maxHoldMs`). */
  private commit(force = false): void {
    if (this.holders.size > 0 && !force) {
      if (!this.commitDue) {
        this.commitDue = true;
        this.holdTimer = setTimeout(() => {
          this.holdTimer = null;
          if (!this.commitDue) return;
          this.stats.unitsCutShort += this.holders.size;
          this.commit(true);
        }, this.maxHoldMs);
        this.holdTimer.unref();
      }
      return;
    }
    this.commitDue = false;
    if (this.holdTimer !== null) {
      clearTimeout(this.holdTimer);
      this.holdTimer = null;
    }
    // A unit cut short holds nothing now: its later writes wait for their own commit.
    const cut = [...this.holders];
    for (const u of cut) u.holding = false;
    this.holders.clear();
    const waiting = this.afterCommit;
    this.afterCommit = [];
    if (this.inBatch) {
      const failure = this.units.exit(() => this.commitBatch());
      if (failure !== undefined) for (const u of cut) u.lost = failure;
    }
    for (const w of waiting) w();
  }

  /**
   * Work that rides along with every commit (see the class guarantees): `hook`
   * runs in the batch's transaction just before its COMMIT.
   */
  beforeCommit(hook: () => void): void {
    this.commitHooks.push(hook);
  }

  /** Commits the open batch and settles its writers; returns the error when the commit failed. */
  private commitBatch(): unknown {
    for (const hook of this.commitHooks) {
      try {
        this.execute(hook);
      } catch (e) {
        // Undone by its savepoint; the hook's work waits for a later commit. When SQLite itself
        // dropped the transaction, `execute` already failed the batch's writers.
        if (!this.inBatch) return e;
      }
    }
    const waiters = this.batch;
    this.batch = [];
    this.inBatch = false;
    try {
      this.raw.exec('COMMIT');
      this.stats.commits++;
    } catch (e) {
      this.stats.failedCommits++;
      if (this.raw.inTransaction) {
        try {
          this.raw.exec('ROLLBACK');
        } catch {
          // The rollback of a failed commit can itself fail on a broken disk; the transaction is gone either way.
        }
      }
      const err = unavailable('storage_unavailable', `the database could not commit the write (${e instanceof Error ? e.message : String(e)}); nothing of it was kept`, 5);
      for (const w of waiters) w.reject(err);
      return err;
    }
    for (const w of waiters) w.resolve();
    return undefined;
  }

  /** The open transaction is gone (SQLite rolled it back): its writers, units included, learn it. */
  private dropBatch(err: unknown): void {
    this.inBatch = false;
    const lost = this.batch;
    this.batch = [];
    for (const u of this.holders) {
      u.holding = false;
      u.lost = err;
    }
    this.holders.clear();
    for (const w of lost) w.reject(err);
    // Units that waited for this batch's commit go on into the next one.
    if (this.commitDue) this.commit();
  }

  // --- key-value collections (the `records` table) ---

  get<T>(coll: string, key: string): T | undefined {
    const row = this.stmt('SELECT value FROM records WHERE coll = ? AND key = ?').get(coll, key) as { value: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.value) as T);
  }

  /** The stored JSON text, unparsed. */
  getRaw(coll: string, key: string): string | undefined {
    return (this.stmt('SELECT value FROM records WHERE coll = ? AND key = ?').get(coll, key) as { value: string } | undefined)?.value;
  }

  has(coll: string, key: string): boolean {
    return this.stmt('SELECT 1 FROM records WHERE coll = ? AND key = ?').get(coll, key) !== undefined;
  }

  /** Every value of a (small) collection, in key order. */
  values<T>(coll: string): T[] {
    return (this.stmt('SELECT value FROM records WHERE coll = ? ORDER BY key').all(coll) as { value: string }[]).map((r) => JSON.parse(r.value) as T);
  }

  /** Values whose key starts with `prefix` (keys are `<org>/<id>`: one organization's). */
  valuesWithPrefix<T>(coll: string, prefix: string): T[] {
    return (this.stmt('SELECT value FROM records WHERE coll = ? AND key >= ? AND key < ? ORDER BY key').all(coll, prefix, prefix + '\uffff') as { value: string }[]).map(
      (r) => JSON.parse(r.value) as T,
    );
  }

  entries<T>(coll: string): [string, T][] {
    return (this.stmt('SELECT key, value FROM records WHERE coll = ? ORDER BY key').all(coll) as { key: string; value: string }[]).map((r) => [r.key, JSON.parse(r.value) as T]);
  }

  put(coll: string, key: string, value: unknown): Promise<void> {
    return this.write([{ coll, key, value }]);
  }

  delete(coll: string, key: string): Promise<void> {
    return this.write([{ coll, key, delete: true }]);
  }

  /** Applies `ops` atomically now; resolves once committed. */
  write(ops: WriteOp[]): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    return this.run(() => this.apply(ops));
  }

  /** Applies `ops` inside the caller's `run`. */
  apply(ops: WriteOp[]): void {
    const put = this.stmt('INSERT INTO records (coll, key, value) VALUES (?, ?, ?) ON CONFLICT (coll, key) DO UPDATE SET value = excluded.value');
    const del = this.stmt('DELETE FROM records WHERE coll = ? AND key = ?');
    for (const op of ops) {
      if ('delete' in op) del.run(op.coll, op.key);
      else put.run(op.coll, op.key, JSON.stringify(op.value));
    }
  }

  /** Throws when the database cannot be read (the readiness check). */
  assertHealthy(): void {
    if (this.closed) throw new Error('database is closed');
    this.stmt('SELECT 1').get();
  }

  /** Commits whatever is pending (after the units holding it, if any). */
  async sync(): Promise<void> {
    this.commit();
  }

  /** Online backup to `file` (consistent, while writes go on). */
  async backup(file: string): Promise<void> {
    this.commit();
    await this.raw.backup(file);
  }

  /** Commits, checkpoints the WAL into the file and closes. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.commit(true);
    this.closed = true;
    try {
      if (this.file !== null) this.raw.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      this.raw.close();
    }
  }
}

/**
 * Keeps a unit's commit outcome for `together` / `settle` to report. It may fail while the unit
 * is still running (its batch lost, or committed early and failed), before anyone awaits it:
 * handled now, so that is not an unhandled rejection.
 */
function pend(unit: Unit, committed: Promise<void>): void {
  committed.catch(() => {});
  unit.pending.push(committed);
}

/** Problems SQLite would only report on first use, found before it opens the file. */
function checkFile(file: string): void {
  if (!existsSync(file)) return;
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new StorageOpenError(
      `cannot open the database ${file} (${code ?? String(e)}): give the user running Switchboard read and write access to it and to its directory`,
      { cause: e },
    );
  }
  try {
    const size = statSync(file).size;
    if (size === 0) return;
    const head = Buffer.alloc(100);
    const n = readSync(fd, head, 0, 100, 0);
    if (n < 100 || head.toString('latin1', 0, 16) !== SQLITE_HEADER) {
      throw new StorageOpenError(`${file} is not a SQLite database (damaged or overwritten): move it aside and restore the latest backup (see docs/embedded.md, "Storage": Restore)`);
    }
    const pageSize = head.readUInt16BE(16) === 1 ? 65536 : head.readUInt16BE(16);
    const pages = head.readUInt32BE(28);
    if (pages > 0 && size < pages * pageSize) {
      throw new StorageOpenError(
        `${file} is truncated (${size} bytes, its header says ${pages * pageSize}): move it aside and restore the latest backup (see docs/embedded.md, "Storage": Restore)`,
      );
    }
  } finally {
    closeSync(fd);
  }
}

function openError(file: string | null, e: unknown): StorageOpenError {
  const code = (e as { code?: string }).code ?? '';
  const what = e instanceof Error ? e.message : String(e);
  const name = file ?? ':memory:';
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || /malformed|not a database/i.test(what)) {
    return new StorageOpenError(`${name} is damaged (${what}): move it aside and restore the latest backup (see docs/embedded.md, "Storage": Restore)`, { cause: e });
  }
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM') {
    return new StorageOpenError(`cannot open the database ${name} (${what}): give the user running Switchboard read and write access to it and to its directory`, { cause: e });
  }
  if (code === 'SQLITE_FULL') return new StorageOpenError(`the disk holding ${name} is full: free some space and start again`, { cause: e });
  if (/NODE_MODULE_VERSION|did not self-register|invalid ELF/i.test(what)) {
    return new StorageOpenError(`${sqlitePackage()} was built for another Node version (${what}): run \`npm rebuild ${sqlitePackage()}\` with this Node (${process.version})`, { cause: e });
  }
  if (code === 'MODULE_NOT_FOUND') {
    return new StorageOpenError(
      `${sqlitePackage()} is not installed for Node ${process.version}: run \`npm ci\` (on Node 20 it is compiled from source, which needs python3, make and a C++ compiler; Node 22 and later need none)`,
      { cause: e },
    );
  }
  return new StorageOpenError(`cannot open the database ${name}: ${what}`, { cause: e });
}

/** A statement that failed for lack of space is the caller's 503, not a 500. */
function asStorageError(e: unknown): unknown {
  if (e instanceof AppError) return e;
  const code = (e as { code?: string }).code;
  if (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR' || code?.startsWith('SQLITE_IOERR_')) {
    return unavailable('storage_unavailable', `the database could not take the write (${(e as Error).message}); nothing of it was kept`, 5);
  }
  return e;
}
