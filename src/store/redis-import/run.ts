import type { PgDb } from '../postgres/db.js';
import { CORE_TABLES } from './core.js';
import { MESSAGING_TABLES } from './messaging.js';
import { RESOURCE_TABLES } from './resources.js';
import type { RedisImportSource } from './source.js';
import { canonicalJson, deleteKeys, rowKey, storedFor, storedKeys, upsertRows, type ImportRow, type ImportTable } from './table.js';
import { TOOL_TABLES } from './tools.js';
import { WEBHOOK_TABLES } from './webhooks.js';

/** Every table the import fills, parents before the rows that refer to them. */
export const IMPORT_TABLES: ImportTable[] = [...CORE_TABLES, ...WEBHOOK_TABLES, ...RESOURCE_TABLES, ...TOOL_TABLES, ...MESSAGING_TABLES];

export interface ImportCount {
  table: string;
  /** Records read from Redis. */
  read: number;
  /** Rows that were not in PostgreSQL. */
  inserted: number;
  /** Rows that were, with other content (the record changed in Redis since an earlier run). */
  updated: number;
  /** Rows that were, with the same content. */
  unchanged: number;
  /** Records not written: another row holds one of their unique values, or their parent row is missing. */
  refused: number;
  /** Rows whose record is gone from Redis, deleted (`removeMissing`). */
  removed: number;
}

export interface ImportOptions {
  /** Also delete the rows of deletable kinds (outbox entries, registrations, deliveries, resources, tools, return origins) whose record is gone from Redis. */
  removeMissing?: boolean;
  /** Only these tables (by report name). */
  tables?: ImportTable[];
  /** Progress, a line at a time. */
  log?: (line: string) => void;
}

const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';

/** Distinct keys only: a key SCAN returned twice, or a record read twice, is written once. */
function distinct(t: ImportTable, rows: ImportRow[]): ImportRow[] {
  const seen = new Map<string, ImportRow>();
  for (const r of rows) seen.set(rowKey(t, r), r);
  return seen.size === rows.length ? rows : [...seen.values()];
}

/**
 * Copies the records of the old layout (every record in Redis) into
 * PostgreSQL. Never writes to Redis.
 *
 * - Idempotent: rows keep the records' ids, sequences and timestamps; a row
 *   already stored with the same content is left, one whose record changed
 *   since is replaced, so a second run writes nothing and a run after more
 *   traffic writes only what is new or changed.
 * - Each batch of rows (at most a few hundred) commits in one transaction;
 *   a batch refused for a unique value another row holds is written row by
 *   row, and the rows refused are counted (the verification names them).
 * - Counters (ticket sequences, ticket counts) are derived from the copied
 *   rows at the end, in one transaction.
 *
 * PostgreSQL must not be taking writes from nodes of the new build meanwhile:
 * a changed record replaces the row, and `removeMissing` deletes rows.
 */
export async function importRedisRecords(src: RedisImportSource, db: PgDb, opts: ImportOptions = {}): Promise<ImportCount[]> {
  const tables = opts.tables ?? IMPORT_TABLES;
  const out: ImportCount[] = [];
  for (const t of tables) {
    const c: ImportCount = { table: t.name, read: 0, inserted: 0, updated: 0, unchanged: 0, refused: 0, removed: 0 };
    const seen = t.deletable ? new Set<string>() : null;
    if (t.importAll !== undefined) {
      Object.assign(c, await t.importAll(src, db));
      out.push(c);
      continue;
    }
    for await (const batch of t.read(src)) {
      const rows = distinct(t, batch);
      c.read += rows.length;
      for (const r of rows) seen?.add(rowKey(t, r));
      if (t.derivedOnly) continue;
      let done = { inserted: 0, updated: 0 };
      let refused = 0;
      try {
        done = await db.tx((q) => upsertRows(q, t, rows));
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        for (const row of rows) {
          try {
            const one = await db.tx((q) => upsertRows(q, t, [row]));
            done.inserted += one.inserted;
            done.updated += one.updated;
          } catch (e2) {
            if (!isUniqueViolation(e2)) throw e2;
            refused++;
          }
        }
      }
      // Rows with a parent to hold may also have been skipped for want of it: what is stored tells.
      const present = t.requires === undefined ? rows.length - refused : (await storedFor(db, t, rows)).size;
      c.inserted += done.inserted;
      c.updated += done.updated;
      c.unchanged += present - done.inserted - done.updated;
      c.refused += rows.length - present;
    }
    if (seen !== null && opts.removeMissing) {
      const gone = (await storedKeys(db, t)).filter((k) => !seen.has(k));
      for (let i = 0; i < gone.length; i += 500) c.removed += await db.tx((q) => deleteKeys(q, t, gone.slice(i, i + 500)));
    }
    out.push(c);
    opts.log?.(`${t.name}: ${c.read} read, ${c.inserted} inserted, ${c.updated} updated`);
  }
  // Counters last, from the rows as they now are.
  const derived = tables.filter((t) => t.derive !== undefined);
  if (derived.length > 0) {
    await db.tx(async (q) => {
      for (const t of derived) {
        const d = await t.derive!(q);
        const c = out.find((x) => x.table === t.name)!;
        c.inserted += d.inserted;
        c.updated += d.updated;
        if (t.derivedOnly) c.unchanged = Math.max(0, c.read - d.inserted - d.updated);
      }
    });
  }
  return out;
}

export interface VerifyCount {
  table: string;
  /** Records read from Redis again. */
  checked: number;
  /** Records with no row. */
  missing: number;
  /** Records whose row holds other content. */
  different: number;
  /** Rows of a deletable kind whose record is gone from Redis (0 for kinds that never leave). */
  extra: number;
}

export interface Mismatch {
  table: string;
  /** The row's key columns. */
  key: string[];
  problem: 'missing' | 'different' | 'extra';
}

export interface VerifyReport {
  tables: VerifyCount[];
  /** The first mismatches found (at most `limit`), to look at. */
  mismatches: Mismatch[];
  /** Every mismatch counted. */
  total: number;
}

/**
 * Reads every record from Redis again and checks that PostgreSQL holds it
 * with the same content (canonical JSON of what the table stores for it; a
 * ticket sequence at least Redis's counter), and that deletable kinds hold
 * no row whose record is gone. Reads only.
 */
export async function verifyRedisImport(src: RedisImportSource, db: PgDb, opts: { tables?: ImportTable[]; limit?: number } = {}): Promise<VerifyReport> {
  const limit = opts.limit ?? 20;
  const report: VerifyReport = { tables: [], mismatches: [], total: 0 };
  const note = (m: Mismatch) => {
    report.total++;
    if (report.mismatches.length < limit) report.mismatches.push(m);
  };
  for (const t of opts.tables ?? IMPORT_TABLES) {
    const c: VerifyCount = { table: t.name, checked: 0, missing: 0, different: 0, extra: 0 };
    const seen = t.deletable ? new Set<string>() : null;
    const same = t.same ?? ((a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b));
    for await (const batch of t.read(src)) {
      const rows = distinct(t, batch);
      const stored = await storedFor(db, t, rows);
      for (const r of rows) {
        const k = rowKey(t, r);
        seen?.add(k);
        c.checked++;
        if (!stored.has(k)) {
          c.missing++;
          note({ table: t.name, key: JSON.parse(k) as string[], problem: 'missing' });
        } else if (!same(r.compare, stored.get(k))) {
          c.different++;
          note({ table: t.name, key: JSON.parse(k) as string[], problem: 'different' });
        }
      }
    }
    if (seen !== null) {
      for (const k of await storedKeys(db, t)) {
        if (seen.has(k)) continue;
        c.extra++;
        note({ table: t.name, key: JSON.parse(k) as string[], problem: 'extra' });
      }
    }
    report.tables.push(c);
  }
  return report;
}
