import { readFileSync, existsSync, renameSync, openSync, fsyncSync, closeSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE, tightenFiles } from '../private-files.js';

export type WriteOp =
  | { coll: string; key: string; value: unknown }
  | { coll: string; key: string; delete: true };

/**
 * The embedded mode's storage engine: collections of JSON values held in
 * memory, made durable by an append-only log under `DATA_DIR`.
 *
 * Guarantees:
 * - `write(ops)` applies the ops in memory at once (readers see them
 *   immediately) and resolves only after they are fsynced to the log; a batch
 *   is one log line, so it survives a crash whole or not at all.
 * - Concurrent writes are group-committed: one fsync serves every batch
 *   queued in the same turn of the event loop.
 * - `close()` compacts the log into a snapshot.
 * - Its directory is 0700 and its files 0600 (tightened on open if older
 *   versions left them wider).
 * - A failed log write is fatal for this instance: the batches it carried
 *   were applied in memory but never acknowledged, so every later write is
 *   refused and `assertHealthy()` throws until the process restarts and
 *   reloads what is durable (the way databases treat a failed fsync).
 *
 * Values are stored as given and handed out as stored: callers must treat them
 * as immutable and write new objects instead of mutating.
 */
export class EmbeddedDb {
  private readonly colls = new Map<string, Map<string, unknown>>();
  private pending: string[] = [];
  private waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;
  private failure: Error | null = null;

  private constructor(
    private readonly dir: string | null,
    private log: FileHandle | null,
  ) {}

  /** Opens (or creates) the database in `dir`; `null` keeps it in memory only. */
  static async open(dir: string | null): Promise<EmbeddedDb> {
    if (dir === null) return new EmbeddedDb(null, null);
    ensurePrivateDir(dir);
    const db = new EmbeddedDb(dir, null);
    const snap = join(dir, 'snapshot.json');
    tightenFiles([snap, join(dir, 'wal.jsonl')]);
    if (existsSync(snap)) {
      const data = JSON.parse(readFileSync(snap, 'utf8')) as Record<string, Record<string, unknown>>;
      for (const [coll, entries] of Object.entries(data)) db.colls.set(coll, new Map(Object.entries(entries)));
    }
    const logPath = join(dir, 'wal.jsonl');
    if (existsSync(logPath)) {
      const lines = readFileSync(logPath, 'utf8').split('\n');
      for (const line of lines) {
        if (line === '') continue;
        let ops: WriteOp[];
        try {
          ops = JSON.parse(line) as WriteOp[];
        } catch {
          // A torn final line: its write was never acknowledged.
          break;
        }
        db.apply(ops);
      }
    }
    db.log = await open(logPath, 'a', PRIVATE_FILE_MODE);
    return db;
  }

  get persistent(): boolean {
    return this.dir !== null;
  }

  /** True when nothing at all is stored (first start). */
  isEmpty(): boolean {
    for (const c of this.colls.values()) if (c.size > 0) return false;
    return true;
  }

  get<T>(coll: string, key: string): T | undefined {
    return this.colls.get(coll)?.get(key) as T | undefined;
  }

  has(coll: string, key: string): boolean {
    return this.colls.get(coll)?.has(key) ?? false;
  }

  values<T>(coll: string): IterableIterator<T> {
    return (this.colls.get(coll) ?? new Map<string, T>()).values() as IterableIterator<T>;
  }

  entries<T>(coll: string): IterableIterator<[string, T]> {
    return (this.colls.get(coll) ?? new Map<string, T>()).entries() as IterableIterator<[string, T]>;
  }

  size(coll: string): number {
    return this.colls.get(coll)?.size ?? 0;
  }

  put(coll: string, key: string, value: unknown): Promise<void> {
    return this.write([{ coll, key, value }]);
  }

  delete(coll: string, key: string): Promise<void> {
    return this.write([{ coll, key, delete: true }]);
  }

  /** Applies `ops` atomically in memory now; resolves once they are durable. */
  write(ops: WriteOp[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('embedded db is closed'));
    if (this.failure) return Promise.reject(this.failure);
    if (ops.length === 0) return Promise.resolve();
    const line = JSON.stringify(ops);
    this.apply(ops);
    if (this.log === null) return Promise.resolve();
    this.pending.push(line);
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      if (this.flushing === null) this.flushing = new Promise<void>((r) => setImmediate(r)).then(() => this.flush());
    });
  }

  private apply(ops: WriteOp[]): void {
    for (const op of ops) {
      let c = this.colls.get(op.coll);
      if (c === undefined) {
        c = new Map();
        this.colls.set(op.coll, c);
      }
      if ('delete' in op) c.delete(op.key);
      else c.set(op.key, op.value);
    }
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const lines = this.pending;
      const waiters = this.waiters;
      this.pending = [];
      this.waiters = [];
      try {
        await this.log!.appendFile(lines.join('\n') + '\n');
        await this.log!.datasync();
        for (const w of waiters) w.resolve();
      } catch (e) {
        this.failure ??= new Error(`embedded db: a write to the log failed; restart to reload the durable state (${e instanceof Error ? e.message : String(e)})`, { cause: e });
        for (const w of waiters) w.reject(this.failure);
        for (const w of this.waiters) w.reject(this.failure);
        this.pending = [];
        this.waiters = [];
      }
    }
    this.flushing = null;
  }

  /** Throws once a log write has failed (see the class comment). */
  assertHealthy(): void {
    if (this.failure) throw this.failure;
  }

  /** Waits for every queued write to be durable. */
  async sync(): Promise<void> {
    while (this.flushing !== null) await this.flushing;
  }

  /** Flushes, writes a snapshot and truncates the log. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.sync();
    this.closed = true;
    if (this.dir === null || this.log === null) return;
    await this.log.close().catch(() => {});
    // After a failed write, memory holds batches that never became durable:
    // a snapshot would make them so. Leave the log as the truth.
    if (this.failure) return;
    const data: Record<string, Record<string, unknown>> = {};
    for (const [name, c] of this.colls) data[name] = Object.fromEntries(c);
    const tmp = join(this.dir, 'snapshot.json.tmp');
    writeFileSync(tmp, JSON.stringify(data), { mode: PRIVATE_FILE_MODE });
    const fd = openSync(tmp, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, join(this.dir, 'snapshot.json'));
    // Replaying the old log over the new snapshot is harmless (writes are
    // absolute), so a crash between rename and truncate loses nothing.
    writeFileSync(join(this.dir, 'wal.jsonl'), '');
  }
}
