import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger, type Logger } from '../log.js';
import type { ConsumeOptions, DomainEvent, EventHandler, EventLog, EventSubscription } from './types.js';
import { assertPublishable, redeliveryDelayMs } from './validate.js';

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
 * Events stay in memory from the lowest position of all known consumers on;
 * segments entirely below it are deleted.
 */
export class EmbeddedEventLog implements EventLog {
  private entries: Entry[] = [];
  private nextSeq = 1;
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
  readonly maxAckPending: number;

  private constructor(private readonly dir: string | null, opts: EmbeddedEventLogOptions) {
    this.log = opts.log ?? silentLogger;
    this.segmentBytes = opts.segmentBytes ?? 16 * 1024 * 1024;
    this.maxAckPending = opts.maxAckPending ?? 1000;
  }

  /** Opens (or creates) the log in `dir`; `null` keeps it in memory only (tests). */
  static async open(dir: string | null, opts: EmbeddedEventLogOptions = {}): Promise<EmbeddedEventLog> {
    const l = new EmbeddedEventLog(dir, opts);
    if (dir !== null) await l.load(dir);
    return l;
  }

  private async load(dir: string): Promise<void> {
    const segDir = join(dir, SEGMENT_DIR);
    mkdirSync(segDir, { recursive: true });
    const cursorPath = join(dir, CURSORS);
    if (existsSync(cursorPath)) {
      const saved = JSON.parse(readFileSync(cursorPath, 'utf8')) as Record<string, number>;
      for (const [name, floor] of Object.entries(saved)) this.cursors.set(name, floor);
    }
    const floor = this.minFloor();
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
        if (floor === undefined || entry.seq > floor) this.entries.push(entry);
      }
      // A torn tail is a write that never completed, so it was never
      // acknowledged: cut it off so the next append starts on a clean line.
      if (torn) {
        this.log.warn('event log: dropping torn tail', { path, bytes: Buffer.byteLength(text) - good });
        truncateSync(path, good);
      }
    }
    this.nextSeq = lastSeq + 1;
    const cursorMax = Math.max(0, ...this.cursors.values());
    if (cursorMax >= this.nextSeq) this.nextSeq = cursorMax + 1;
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
    this.file = await open(seg.path, 'a');
    this.fileBytes = (await this.file.stat()).size;
  }

  publish(event: DomainEvent): Promise<void> {
    if (this.closed) return Promise.reject(new Error('event log is closed'));
    try {
      assertPublishable(event);
    } catch (e) {
      return Promise.reject(e);
    }
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
    for (const c of this.consumers) c.pump();
  }

  /** The entry with `seq`, or the first one after it; undefined past the end. */
  entryAtOrAfter(seq: number): Entry | undefined {
    const first = this.entries[0];
    if (first === undefined) return undefined;
    // Sequences are dense except for failed batches, so the index is a good first guess.
    let i = Math.max(0, Math.min(this.entries.length - 1, seq - first.seq));
    while (i > 0 && this.entries[i]!.seq > seq) i--;
    while (i < this.entries.length && this.entries[i]!.seq < seq) i++;
    return this.entries[i];
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
    const min = this.minFloor();
    if (min === undefined) return;
    let drop = 0;
    while (drop < this.entries.length && this.entries[drop]!.seq <= min) drop++;
    if (drop > 1024 || drop === this.entries.length) this.entries.splice(0, drop);
  }

  private minFloor(): number | undefined {
    let min: number | undefined;
    for (const f of this.cursors.values()) min = min === undefined ? f : Math.min(min, f);
    return min;
  }

  private deleteConsumedSegments(): void {
    const min = this.minFloor();
    if (min === undefined) return;
    // Never the active (last) segment; a segment is consumed when the next one starts at or below min + 1.
    while (this.segments.length > 1 && this.segments[1]!.firstSeq <= min + 1) {
      const seg = this.segments.shift()!;
      rmSync(seg.path, { force: true });
    }
  }

  private scheduleCursorWrite(): void {
    if (this.cursorTimer !== null || this.dir === null) return;
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
    if (this.dir === null) return;
    const tmp = join(this.dir, `${CURSORS}.tmp`);
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(Object.fromEntries(this.cursors)));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(this.dir, CURSORS));
    this.deleteConsumedSegments();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
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
      // Gaps (failed batches) and other organizations' events count as acknowledged.
      for (let s = this.next; s < entry.seq; s++) this.acked.add(s);
      this.next = entry.seq + 1;
      if (this.options.organizationId !== undefined && entry.event.organizationId !== this.options.organizationId) {
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
