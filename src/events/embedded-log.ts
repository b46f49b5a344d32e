import { existsSync, readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { ensurePrivateDir, PRIVATE_FILE_MODE, tightenFiles } from '../private-files.js';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger, type Logger } from '../log.js';
import type { ConsumeOptions, DomainEvent, EventFollower, EventHandler, EventLog, EventReadOptions, EventReadResult, EventSubscription, LoggedEvent } from './types.js';
import { assertPublishable, isTruncated, readBounds, redeliveryDelayMs } from './validate.js';
import type { SqliteDb } from '../store/sqlite/db.js';

interface Entry {
  seq: number;
  event: DomainEvent;
}

interface Segment {
  firstSeq: number;
  path: string;
}

export interface EmbeddedEventLogOptions {
  log?: Logger;
  /** A new segment file starts once the current one is this big (default 16 MiB). */
  segmentBytes?: number;
  /** Most unacknowledged events per consumer, counting those waiting to be retried (default 1000). */
  maxAckPending?: number;
  /** The newest events kept readable by `read` (in memory and in their segment files, across restarts), whatever the consumers acknowledged (default 10,000). */
  replayRetainEvents?: number;
}

const SEGMENT_DIR = 'segments';
const CURSORS = 'cursors.json';

/**
 * The embedded mode's event log: JSON lines in segment files under
 * `<dir>/segments`, one line per event, appended and fsynced (group commit)
 * before `publish` resolves. Consumer positions (the highest sequence below
 * which everything is acknowledged) live in `<dir>/cursors.json`, replaced
 * atomically a few milliseconds after acks; a crash in between only causes
 * redeliveries, never loss.
 *
 * Guarantees:
 * - `publish` resolves only after its line is fsynced; consumers and
 *   followers only ever see events that are on disk.
 * - Memory and disk hold the events some known consumer has not acknowledged
 *   plus at least the newest `replayRetainEvents` (memory at most about twice
 *   that beyond the consumers' needs: it is trimmed in batches); segments
 *   holding only older events are deleted. A restart loads the same: the
 *   newest `replayRetainEvents` stay readable.
 * - `follow` sees every event recorded after its `startSeq`, in seq order,
 *   once, synchronously as its batch becomes durable.
 * - `read` answers from memory: every retained event of the organization in
 *   the range, in seq order; `truncated` when retention dropped some after
 *   `afterSeq`.
 *
 * `openSqlite` keeps the same in the node's SQLite database instead of
 * segment files (tables `events` and `event_cursors`): a publish joins the
 * database's group commit, so an event commits with the writes of the same
 * turn, and the guarantees above hold with "fsynced" read as "committed".
 */
export class EmbeddedEventLog implements EventLog {
  private entries: Entry[] = [];
  private nextSeq = 1;
  /** The newest seq on disk (or, after a restart that found no event, the newest ever assigned). */
  private head = 0;
  private readonly followers = new Set<(e: LoggedEvent) => void>();
  private segments: Segment[] = [];
  private file: FileHandle | null = null;
  private fileBytes = 0;
  private pending: { entry: Entry; line: string; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private flushing: Promise<void> | null = null;
  private readonly cursors = new Map<string, number>();
  private readonly consumers = new Set<EmbeddedConsumer>();
  private cursorTimer: NodeJS.Timeout | null = null;
  private cursorWriteRunning: Promise<void> = Promise.resolve();
  private cursorWriteQueued: Promise<void> | null = null;
  private closed = false;
  private readonly log: Logger;
  private readonly segmentBytes: number;
  private readonly replayRetain: number;
  /** Entries are dropped from memory at least this many at a time (an array splice is O(n)). */
  private readonly trimBatch: number;
  readonly maxAckPending: number;

  /** Set when the log lives in the node's SQLite database (`openSqlite`); then `dir` is unused. */
  private sql: SqliteDb | null = null;

  private constructor(private readonly dir: string | null, opts: EmbeddedEventLogOptions) {
    this.log = opts.log ?? silentLogger;
    this.segmentBytes = opts.segmentBytes ?? 16 * 1024 * 1024;
    this.maxAckPending = opts.maxAckPending ?? 1000;
    this.replayRetain = Math.max(1, Math.floor(opts.replayRetainEvents ?? 10_000));
    this.trimBatch = Math.min(1024, this.replayRetain);
  }

  /** Opens (or creates) the log in `dir`; `null` keeps it in memory only (tests). */
  static async open(dir: string | null, opts: EmbeddedEventLogOptions = {}): Promise<EmbeddedEventLog> {
    const l = new EmbeddedEventLog(dir, opts);
    if (dir !== null) await l.load(dir);
    return l;
  }

  /** The log in the node's SQLite database: events and consumer positions in its tables. */
  static async openSqlite(db: SqliteDb, opts: EmbeddedEventLogOptions = {}): Promise<EmbeddedEventLog> {
    const l = new EmbeddedEventLog(null, opts);
    l.sql = db;
    for (const r of db.stmt('SELECT name, seq FROM event_cursors').all() as { name: string; seq: number }[]) l.cursors.set(r.name, r.seq);
    const last = (db.stmt('SELECT MAX(seq) AS seq FROM events').get() as { seq: number | null }).seq ?? 0;
    const mark = db.get<number>('meta:events', 'lastSeq') ?? 0;
    // Load what a consumer still needs and the newest `replayRetain`, nothing older.
    const from = Math.min(last - l.replayRetain, l.minFloor() ?? last);
    for (const r of db.stmt('SELECT seq, body FROM events WHERE seq > ? ORDER BY seq').iterate(from) as Iterable<{ seq: number; body: string }>) {
      l.entries.push({ seq: r.seq, event: JSON.parse(r.body) as DomainEvent });
    }
    l.trimEntries(true);
    const cursorMax = Math.max(0, ...l.cursors.values());
    l.nextSeq = Math.max(last, mark, cursorMax) + 1;
    l.head = l.nextSeq - 1;
    l.deleteConsumedSegments();
    return l;
  }

  private async load(dir: string): Promise<void> {
    const segDir = join(dir, SEGMENT_DIR);
    ensurePrivateDir(dir);
    ensurePrivateDir(segDir);
    const cursorPath = join(dir, CURSORS);
    tightenFiles([cursorPath, ...readdirSync(segDir).map((n) => join(segDir, n))]);
    if (existsSync(cursorPath)) {
      const saved = JSON.parse(readFileSync(cursorPath, 'utf8')) as Record<string, number>;
      for (const [name, floor] of Object.entries(saved)) this.cursors.set(name, floor);
    }
    const names = readdirSync(segDir).filter((n) => /^\d{16}\.jsonl$/.test(n)).sort();
    let lastSeq = 0;
    for (const name of names) {
      const path = join(segDir, name);
      this.segments.push({ firstSeq: Number(name.slice(0, 16)), path });
      const text = readFileSync(path, 'utf8');
      let good = 0;
      let torn = false;
      for (let start = 0; start < text.length; ) {
        const nl = text.indexOf('\n', start);
        if (nl === -1) { torn = true; break; }
        let entry: Entry;
        try {
          entry = JSON.parse(text.slice(start, nl)) as Entry;
        } catch {
          torn = true;
          break;
        }
        start = nl + 1;
        good = Buffer.byteLength(text.slice(0, start));
        lastSeq = entry.seq;
        this.entries.push(entry);
      }
      // Keep memory bounded while loading: only what consumers need and the newest events.
      this.trimEntries(true);
      // A torn tail is a write that never completed, so it was never
      // acknowledged: cut it off so the next append starts on a clean line.
      if (torn) {
        this.log.warn('event log: dropping torn tail', { path, bytes: Buffer.byteLength(text) - good });
        truncateSync(path, good);
      }
    }
    // Never reuse a seq a reader may have seen: past the last event on disk, any
    // consumer position, and the first seq of the (possibly empty) active segment.
    const cursorMax = Math.max(0, ...this.cursors.values());
    this.nextSeq = Math.max(lastSeq + 1, cursorMax + 1, this.segments.at(-1)?.firstSeq ?? 1);
    this.head = this.nextSeq - 1;
    await this.openActiveSegment();
    this.deleteConsumedSegments();
  }

  private async openActiveSegment(): Promise<void> {
    if (this.dir === null) return;
    let seg = this.segments.at(-1);
    if (seg === undefined) {
      seg = { firstSeq: this.nextSeq, path: join(this.dir, SEGMENT_DIR, `${String(this.nextSeq).padStart(16, '0')}.jsonl`) };
      this.segments.push(seg);
    }
    this.file = await open(seg.path, 'a', PRIVATE_FILE_MODE);
    this.fileBytes = (await this.file.stat()).size;
  }

  publish(event: DomainEvent): Promise<void> {
    if (this.closed) return Promise.reject(new Error('event log is closed'));
    try {
      assertPublishable(event);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.sql !== null) return this.publishSqlite(event);
    const entry: Entry = { seq: this.nextSeq++, event };
    if (this.dir === null) {
      this.append([entry]);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ entry, line: JSON.stringify(entry) + '\n', resolve, reject });
      if (this.flushing === null) this.flushing = new Promise<void>((r) => setImmediate(r)).then(() => this.flush());
    });
  }

  /**
   * The event joins the database's open batch (and the caller's unit of work,
   * if any); consumers see it once that batch committed. Its seq is taken when
   * the insert runs, and a batch's commit callbacks run in the order its
   * writes ran, so entries become visible in seq order.
   */
  private publishSqlite(event: DomainEvent): Promise<void> {
    const db = this.sql!;
    return db
      .run(
        () => {
          const entry: Entry = { seq: this.nextSeq++, event };
          db.stmt('INSERT INTO events (seq, id, org, type, at, body) VALUES (?, ?, ?, ?, ?, ?)').run(
            entry.seq,
            event.id,
            event.organizationId,
            event.type,
            Date.now(),
            JSON.stringify(event),
          );
          // Sequence numbers are never reused, even after the rows holding the highest are discarded.
          db.apply([{ coll: 'meta:events', key: 'lastSeq', value: entry.seq }]);
          return entry;
        },
        (entry) => this.append([entry]),
      )
      .then(() => {});
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        const data = batch.map((p) => p.line).join('');
        await this.file!.appendFile(data);
        await this.file!.datasync();
        this.fileBytes += Buffer.byteLength(data);
        // Consumers only ever see events that are on disk.
        this.append(batch.map((p) => p.entry));
        for (const p of batch) p.resolve();
        if (this.fileBytes >= this.segmentBytes) await this.roll();
      } catch (e) {
        // The sequence numbers of a failed batch are never reused by a later
        // one being acknowledged before them; a gap is harmless.
        for (const p of batch) p.reject(e);
      }
    }
    this.flushing = null;
  }

  private async roll(): Promise<void> {
    await this.file!.close();
    this.file = null;
    this.segments.push({ firstSeq: this.nextSeq, path: join(this.dir!, SEGMENT_DIR, `${String(this.nextSeq).padStart(16, '0')}.jsonl`) });
    await this.openActiveSegment();
    this.deleteConsumedSegments();
  }

  private append(batch: Entry[]): void {
    for (const e of batch) this.entries.push(e);
    const last = batch.at(-1);
    if (last !== undefined) this.head = last.seq;
    for (const e of batch) for (const f of this.followers) f({ seq: e.seq, event: e.event });
    this.trimEntries(false);
    for (const c of this.consumers) c.pump();
  }

  /** Index of the entry with `seq`, or of the first one after it; `entries.length` past the end. */
  private indexAtOrAfter(seq: number): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The entry with `seq`, or the first one after it; undefined past the end. */
  entryAtOrAfter(seq: number): Entry | undefined {
    return this.entries[this.indexAtOrAfter(seq)];
  }

  /**
   * Drops from memory what no consumer needs and is older than the newest
   * `replayRetain` events; in batches unless `exact`.
   */
  private trimEntries(exact: boolean): void {
    const excess = this.entries.length - this.replayRetain;
    if (excess <= 0) return;
    const floor = this.minFloor();
    const drop = floor === undefined ? excess : Math.min(excess, this.indexAtOrAfter(floor + 1));
    if (drop > 0 && (exact || drop >= this.trimBatch)) this.entries.splice(0, drop);
  }

  /** Every seq at or below this may leave the disk: acknowledged by every consumer and older than the newest `replayRetain`. */
  private discardableThrough(): number {
    const keepFrom = this.entries.length - this.replayRetain;
    const replayFloor = keepFrom <= 0 ? this.firstRetainedSeq - 1 : this.entries[keepFrom]!.seq - 1;
    const floor = this.minFloor();
    return floor === undefined ? replayFloor : Math.min(floor, replayFloor);
  }

  get firstRetainedSeq(): number {
    return this.entries[0]?.seq ?? this.nextSeq;
  }

  async consume(name: string, handler: EventHandler, options: ConsumeOptions = {}): Promise<EventSubscription> {
    if (this.closed) throw new Error('event log is closed');
    for (const c of this.consumers) if (c.name === name) throw new Error(`consumer ${name} is already running in this process`);
    if (!this.cursors.has(name)) {
      this.cursors.set(name, this.firstRetainedSeq - 1);
      this.scheduleCursorWrite();
    }
    const c = new EmbeddedConsumer(this, name, this.cursors.get(name)!, handler, options, this.log);
    this.consumers.add(c);
    c.pump();
    return {
      stop: async () => {
        await c.stop();
        this.consumers.delete(c);
        await this.writeCursors();
      },
    };
  }

  /** Called by a consumer whose acknowledged floor moved. */
  advanced(name: string, floor: number): void {
    this.cursors.set(name, floor);
    this.scheduleCursorWrite();
    this.trimEntries(false);
  }

  private minFloor(): number | undefined {
    let min: number | undefined;
    for (const f of this.cursors.values()) min = min === undefined ? f : Math.min(min, f);
    return min;
  }

  private deleteConsumedSegments(): void {
    const min = this.discardableThrough();
    if (this.sql !== null) {
      const db = this.sql;
      if (min > this.sqlDiscarded && !db.isClosed) {
        this.sqlDiscarded = min;
        void db.run(() => db.stmt('DELETE FROM events WHERE seq <= ?').run(min)).catch((err: unknown) => this.log.warn('event log: discarding old events failed', { err }));
      }
      return;
    }
    // Never the active (last) segment; a segment is discardable when the next one starts at or below min + 1.
    while (this.segments.length > 1 && this.segments[1]!.firstSeq <= min + 1) {
      const seg = this.segments.shift()!;
      rmSync(seg.path, { force: true });
    }
  }

  private sqlDiscarded = 0;

  private scheduleCursorWrite(): void {
    if (this.cursorTimer !== null || (this.dir === null && this.sql === null)) return;
    this.cursorTimer = setTimeout(() => {
      this.cursorTimer = null;
      this.writeCursors().catch((err: unknown) => this.log.error('event log: writing cursors failed', { err }));
    }, 20);
  }

  /**
   * Writes the cursors file (temp file, fsync, rename). Asynchronous, so its
   * fsync does not stall the event loop (under load it runs every 20 ms);
   * writes never overlap, and callers arriving while one runs share the next
   * one, which reads the cursors when it starts.
   */
  private writeCursors(): Promise<void> {
    if (this.cursorWriteQueued !== null) return this.cursorWriteQueued;
    const queued = this.cursorWriteRunning
      .catch(() => {})
      .then(() => {
        this.cursorWriteQueued = null;
        this.cursorWriteRunning = this.writeCursorsNow();
        return this.cursorWriteRunning;
      });
    this.cursorWriteQueued = queued;
    return queued;
  }

  private async writeCursorsNow(): Promise<void> {
    if (this.sql !== null) {
      const db = this.sql;
      // The database closed first (a shutdown out of order): positions not saved only mean redeliveries.
      if (db.isClosed) return;
      const cursors = [...this.cursors];
      await db.run(() => {
        const put = db.stmt('INSERT INTO event_cursors (name, seq) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET seq = excluded.seq');
        for (const [name, seq] of cursors) put.run(name, seq);
      });
      this.deleteConsumedSegments();
      return;
    }
    if (this.dir === null) return;
    const tmp = join(this.dir, `${CURSORS}.tmp`);
    const fh = await open(tmp, 'w', PRIVATE_FILE_MODE);
    try {
      await fh.writeFile(JSON.stringify(Object.fromEntries(this.cursors)));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(this.dir, CURSORS));
    this.deleteConsumedSegments();
  }

  async headSeq(): Promise<number> {
    return this.head;
  }

  async follow(onEvent: (e: LoggedEvent) => void): Promise<EventFollower> {
    if (this.closed) throw new Error('event log is closed');
    const follower = (e: LoggedEvent): void => {
      try {
        onEvent(e);
      } catch (err) {
        this.log.error('event follower threw; it keeps following', { seq: e.seq, err });
      }
    };
    // Registered in the same tick as the head is read: nothing can be appended in between.
    this.followers.add(follower);
    return {
      startSeq: this.head,
      stop: async () => {
        this.followers.delete(follower);
      },
    };
  }

  async read(organizationId: string, afterSeq: number, opts: EventReadOptions = {}): Promise<EventReadResult> {
    if (this.closed) throw new Error('event log is closed');
    const headSeq = this.head;
    const { untilSeq, limit } = readBounds(organizationId, afterSeq, opts, headSeq);
    const oldestSeq = this.entries[0]?.seq ?? headSeq + 1;
    const events: LoggedEvent[] = [];
    let more = false;
    for (let i = this.indexAtOrAfter(afterSeq + 1); i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (e.seq > untilSeq) break;
      if (e.event.organizationId !== organizationId) continue;
      if (events.length === limit) {
        more = true;
        break;
      }
      events.push({ seq: e.seq, event: e.event });
    }
    return { events, oldestSeq, headSeq, truncated: isTruncated(afterSeq, oldestSeq), more };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.followers.clear();
    await Promise.all([...this.consumers].map((c) => c.stop()));
    this.consumers.clear();
    while (this.flushing !== null) await this.flushing;
    if (this.cursorTimer !== null) clearTimeout(this.cursorTimer);
    this.cursorTimer = null;
    await this.writeCursors();
    await this.file?.close();
    this.file = null;
  }
}

/** One running durable consumer of an `EmbeddedEventLog`. */
class EmbeddedConsumer {
  /** Every sequence at or below is acknowledged. */
  private floor: number;
  /** Next sequence not yet handed to the handler. */
  private next: number;
  private running = 0;
  private readonly unacked = new Map<number, number>(); // seq -> delivery count
  private readonly acked = new Set<number>();
  private readonly retries = new Map<number, NodeJS.Timeout>();
  private readonly ready: number[] = []; // retries whose delay has passed
  private readonly concurrency: number;
  private stopped = false;
  private idle: (() => void) | null = null;

  constructor(
    private readonly logFile: EmbeddedEventLog,
    readonly name: string,
    floor: number,
    private readonly handler: EventHandler,
    private readonly options: ConsumeOptions,
    private readonly log: Logger,
  ) {
    this.floor = floor;
    this.next = floor + 1;
    this.concurrency = Math.max(1, options.concurrency ?? 16);
  }

  pump(): void {
    while (!this.stopped && this.running < this.concurrency) {
      const retry = this.ready.shift();
      if (retry !== undefined) {
        const entry = this.logFile.entryAtOrAfter(retry);
        if (entry?.seq === retry) this.dispatch(entry.seq, entry.event);
        continue;
      }
      if (this.unacked.size >= this.logFile.maxAckPending) return;
      const entry = this.logFile.entryAtOrAfter(this.next);
      if (entry === undefined) return;
      // Gaps (failed batches) and other organizations' (or types') events count as acknowledged.
      for (let s = this.next; s < entry.seq; s++) this.acked.add(s);
      this.next = entry.seq + 1;
      if ((this.options.organizationId !== undefined && entry.event.organizationId !== this.options.organizationId) || (this.options.types !== undefined && this.options.types.length > 0 && !this.options.types.includes(entry.event.type))) {
        this.ack(entry.seq);
        continue;
      }
      this.unacked.set(entry.seq, 0);
      this.dispatch(entry.seq, entry.event);
    }
  }

  private dispatch(seq: number, event: DomainEvent): void {
    const count = (this.unacked.get(seq) ?? 0) + 1;
    this.unacked.set(seq, count);
    this.running++;
    let result: Promise<void>;
    try {
      result = this.handler(event, { seq, deliveryCount: count });
    } catch (e) {
      result = Promise.reject(e);
    }
    result.then(
      () => {
        this.unacked.delete(seq);
        this.ack(seq);
      },
      (err: unknown) => {
        if (this.stopped) return;
        const delay = redeliveryDelayMs(count);
        this.log.warn('event handler failed; redelivering', { consumer: this.name, seq, eventId: event.id, deliveryCount: count, delayMs: delay, err });
        this.retries.set(seq, setTimeout(() => {
          this.retries.delete(seq);
          this.ready.push(seq);
          this.pump();
        }, delay));
      },
    ).finally(() => {
      this.running--;
      if (this.running === 0 && this.idle !== null) this.idle();
      this.pump();
    });
  }

  private ack(seq: number): void {
    this.acked.add(seq);
    const before = this.floor;
    while (this.acked.has(this.floor + 1)) {
      this.acked.delete(this.floor + 1);
      this.floor++;
    }
    if (this.floor !== before) this.logFile.advanced(this.name, this.floor);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
    if (this.running > 0) await new Promise<void>((r) => { this.idle = r; });
  }
}
