import type { PgDb, PgQueryable } from '../postgres/db.js';
import type { RedisImportSource } from './source.js';

export type ColumnType = 'text' | 'bigint' | 'integer' | 'jsonb' | 'timestamptz';

/** One row for a PostgreSQL table, made from a Redis record. */
export interface ImportRow {
  /** One value per column of the table, in its order (jsonb as a JS value). */
  values: unknown[];
  /** What the verification compares with the stored row's `compare` expression (canonical JSON on both sides). */
  compare: unknown;
}

/**
 * How the records of one PostgreSQL table are found in the old Redis layout
 * and written: `read` yields rows in batches (each batch written in one
 * transaction), in the order the table's serial column should follow.
 */
export interface ImportTable {
  /** The PostgreSQL table (and, for `records`, its collection) as the report names it. */
  name: string;
  table: string;
  columns: { name: string; type: ColumnType }[];
  /** The columns a row is identified by (a unique constraint: the ON CONFLICT target). */
  key: string[];
  /** SQL (jsonb) of what verification compares, over the table's alias; default `<alias>.body`. */
  compare?: (alias: string) => string;
  /** Columns written from SQL over the incoming row (alias `d`), not read from Redis (a message's search text). */
  computed?: Record<string, string>;
  /** SQL over the incoming row (alias `d`) that must hold for it to be written (its parent exists). */
  requires?: string;
  /** SQL over the stored row (`t`) and the incoming one (`excluded`) that says the stored one is to be replaced; default: what verification compares differs. */
  changed?: string;
  /** Whether the stored value `actual` stands for the Redis record's `expected` (default: canonical JSON equal). */
  same?: (expected: unknown, actual: unknown) => boolean;
  /** SQL restricting the table to this import's rows (a `records` collection). */
  scope?: string;
  /** Records of this kind are deleted in Redis (relayed, expired, removed): rows whose record is gone are reported, and removed on request. */
  deletable?: boolean;
  read(src: RedisImportSource): AsyncIterable<ImportRow[]>;
  /** Writes the whole table itself instead of row batches (a table whose rows have no key in Redis); answers its counts. */
  importAll?: (src: RedisImportSource, db: PgDb) => Promise<{ read: number; inserted: number; updated: number; unchanged: number }>;
  /** Runs after every row of every table is written, in one transaction: tables kept from others (counters). */
  derive?: (q: PgQueryable) => Promise<{ inserted: number; updated: number }>;
  /** Rows are only read (for the counts and the verification), `derive` writes the table. */
  derivedOnly?: boolean;
}

/** JSON with object keys sorted at every depth: equal for equal content whatever the key order (jsonb reorders keys). */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(sortKeys(v));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

const compareSql = (t: ImportTable, alias: string) => (t.compare ?? ((a: string) => `${a}.body`))(alias);
const param = (v: unknown, type: ColumnType) => (v === null || v === undefined ? null : type === 'jsonb' ? JSON.stringify(v) : type === 'text' ? String(v) : v);

/** The key of a row as one string (for sets of keys). */
export function rowKey(t: ImportTable, row: ImportRow): string {
  return JSON.stringify(t.key.map((k) => String(row.values[t.columns.findIndex((c) => c.name === k)])));
}

function unnestOf(cols: { name: string; type: ColumnType }[], first = 1): string {
  return `unnest(${cols.map((c, i) => `$${first + i}::${c.type}[]`).join(', ')})`;
}

/**
 * Writes rows that are new, replaces those whose content changed, leaves the
 * rest: one statement, in the caller's transaction. Rows keep their order
 * (serial columns follow it).
 */
export async function upsertRows(q: PgQueryable, t: ImportTable, rows: ImportRow[]): Promise<{ inserted: number; updated: number }> {
  if (rows.length === 0) return { inserted: 0, updated: 0 };
  const cols = t.columns.map((c) => c.name);
  const computed = Object.entries(t.computed ?? {});
  const written = [...cols, ...computed.map(([c]) => c)];
  const rest = written.filter((c) => !t.key.includes(c));
  const changed = t.changed ?? `${compareSql(t, 't')} IS DISTINCT FROM ${compareSql(t, 'excluded')}`;
  const sql = `INSERT INTO ${t.table} AS t (${written.join(', ')})
    SELECT ${[...cols.map((c) => `d.${c}`), ...computed.map(([, expr]) => expr)].join(', ')} FROM ${unnestOf(t.columns)} WITH ORDINALITY AS d(${cols.join(', ')}, n)
    ${t.requires === undefined ? '' : `WHERE ${t.requires}`}
    ORDER BY d.n
    ON CONFLICT (${t.key.join(', ')}) DO ${rest.length === 0 ? 'NOTHING' : `UPDATE SET ${rest.map((c) => `${c} = excluded.${c}`).join(', ')} WHERE ${changed}`}
    RETURNING (xmax = 0) AS inserted`;
  const params = t.columns.map((c, i) => rows.map((r) => param(r.values[i], c.type)));
  const r = await q.query<{ inserted: boolean }>(sql, params);
  const inserted = r.rows.filter((x) => x.inserted).length;
  return { inserted, updated: r.rows.length - inserted };
}

/** What is stored for the rows' keys: key → the compared value. */
export async function storedFor(q: PgQueryable, t: ImportTable, rows: ImportRow[]): Promise<Map<string, unknown>> {
  const keyCols = t.key.map((k) => t.columns.find((c) => c.name === k)!);
  const idx = keyCols.map((c) => t.columns.indexOf(c));
  const r = await q.query<Record<string, unknown>>(
    `SELECT ${t.key.map((k) => `t.${k}`).join(', ')}, ${compareSql(t, 't')} AS c FROM ${t.table} t JOIN ${unnestOf(keyCols)} AS k(${t.key.join(', ')}) USING (${t.key.join(', ')})`,
    keyCols.map((c, i) => rows.map((row) => param(row.values[idx[i]!], c.type))),
  );
  return new Map(r.rows.map((row) => [JSON.stringify(t.key.map((k) => String(row[k]))), row.c]));
}

/** Every key of the table (within its scope). */
export async function storedKeys(q: PgQueryable, t: ImportTable): Promise<string[]> {
  const r = await q.query<Record<string, unknown>>(`SELECT ${t.key.join(', ')} FROM ${t.table}${t.scope === undefined ? '' : ` WHERE ${t.scope}`}`);
  return r.rows.map((row) => JSON.stringify(t.key.map((k) => String(row[k]))));
}

/** Deletes the rows of these keys (each a `rowKey`). */
export async function deleteKeys(q: PgQueryable, t: ImportTable, keys: string[]): Promise<number> {
  if (keys.length === 0) return 0;
  const keyCols = t.key.map((k) => t.columns.find((c) => c.name === k)!);
  const parsed = keys.map((k) => JSON.parse(k) as string[]);
  const r = await q.query(
    `DELETE FROM ${t.table} t USING ${unnestOf(keyCols)} AS k(${t.key.join(', ')}) WHERE ${t.key.map((k) => `t.${k} = k.${k}`).join(' AND ')}`,
    keyCols.map((c, i) => parsed.map((p) => (c.type === 'text' ? p[i] : Number(p[i])))),
  );
  return r.rowCount ?? 0;
}
