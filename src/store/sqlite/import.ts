import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SqliteDb } from './db.js';

/**
 * The one-time import of the JSON store that embedded mode used before
 * SQLite: four directories (the data dir itself, `messaging/`, `webhooks/`,
 * `actors/`), each a `snapshot.json` of collections plus a `wal.jsonl` of
 * batches written after it. This module keeps the minimal reader of that
 * format; the old files are left where they are (delete them once the
 * import is checked).
 */

type Collections = Map<string, Map<string, unknown>>;

/** The old store's directories under the data dir, in the order they are imported. */
export const JSON_STORE_DIRS = ['.', 'messaging', 'webhooks', 'actors', 'tools'];
const MARKER = { coll: 'meta:import', key: 'json-store' };

/** Reads one old store directory: the snapshot, then every complete log line over it (a torn last line was never acknowledged). */
export function readJsonStore(dir: string): Collections | null {
  const snap = join(dir, 'snapshot.json');
  const wal = join(dir, 'wal.jsonl');
  if (!existsSync(snap) && !existsSync(wal)) return null;
  const colls: Collections = new Map();
  if (existsSync(snap)) {
    const data = JSON.parse(readFileSync(snap, 'utf8')) as Record<string, Record<string, unknown>>;
    for (const [coll, entries] of Object.entries(data)) colls.set(coll, new Map(Object.entries(entries)));
  }
  if (existsSync(wal)) {
    for (const line of readFileSync(wal, 'utf8').split('\n')) {
      if (line === '') continue;
      let ops: { coll: string; key: string; value?: unknown; delete?: true }[];
      try {
        ops = JSON.parse(line) as typeof ops;
      } catch {
        break;
      }
      for (const op of ops) {
        let c = colls.get(op.coll);
        if (c === undefined) colls.set(op.coll, (c = new Map()));
        if (op.delete) c.delete(op.key);
        else c.set(op.key, op.value);
      }
    }
  }
  return colls;
}

/** Collections that became tables, or that are derived from one and so not copied. */
const DERIVED = new Set(['contactIds', 'smsgNet']);

/**
 * Imports the old JSON store under `dataDir` into the node's database once
 * (a marker in `records` says it was done), in the current transaction
 * context: all of it or nothing.
 */
export function importJsonStore(db: SqliteDb, dataDir: string): { imported: boolean; records: number } {
  if (db.has(MARKER.coll, MARKER.key)) return { imported: false, records: 0 };
  const found = JSON_STORE_DIRS.map((d) => readJsonStore(join(dataDir, d))).filter((c): c is Collections => c !== null);
  let records = 0;
  db.raw.transaction(() => {
    for (const colls of found) records += importCollections(db, colls);
    db.apply([{ coll: MARKER.coll, key: MARKER.key, value: { at: new Date().toISOString(), records } }]);
  })();
  return { imported: found.length > 0, records };
}

function importCollections(db: SqliteDb, colls: Collections): number {
  const s = (sql: string) => db.raw.prepare(sql);
  let n = 0;
  const putRecord = s('INSERT OR REPLACE INTO records (coll, key, value) VALUES (?, ?, ?)');
  for (const [coll, entries] of colls) {
    if (DERIVED.has(coll)) continue;
    const values = [...entries.entries()];
    n += values.length;
    switch (coll) {
      case 'tickets': {
        const ins = s('INSERT OR REPLACE INTO tickets (org, seq, ticket_id, status, priority, assignee_id, audience_id, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
        const bump = s('INSERT INTO ticket_counts (org, name, n) VALUES (?, ?, 1) ON CONFLICT (org, name) DO UPDATE SET n = n + 1');
        for (const [, v] of values) {
          const { seq, ...t } = v as { seq: number; organizationId: string; ticketId: string; status: string; priority: string; assigneeId: string | null; audienceId: string | null };
          ins.run(t.organizationId, seq, t.ticketId, t.status, t.priority, t.assigneeId ?? null, t.audienceId ?? null, JSON.stringify(t));
          bump.run(t.organizationId, 'all');
          bump.run(t.organizationId, `s:${t.status}`);
        }
        break;
      }
      case 'ticketIdem': {
        const ins = s('INSERT OR REPLACE INTO ticket_idempotency (org, key, fingerprint, ticket_id, expires_at) VALUES (?, ?, ?, ?, ?)');
        for (const [k, v] of values) {
          const r = v as { fingerprint: string; ticketId: string; expiresAt: number };
          const slash = k.indexOf('/');
          ins.run(k.slice(0, slash), k.slice(slash + 1), r.fingerprint, r.ticketId, r.expiresAt);
        }
        break;
      }
      case 'outbox': {
        // The collection kept insertion order, which is the order of the changes.
        const ins = s('INSERT OR IGNORE INTO outbox (org, event_id, event) VALUES (?, ?, ?)');
        for (const [, v] of values) {
          const e = v as { id: string; organizationId: string };
          ins.run(e.organizationId, e.id, JSON.stringify(e));
        }
        break;
      }
      case 'contacts': {
        const ins = s('INSERT OR REPLACE INTO contacts (org, audience_external_id, id, body) VALUES (?, ?, ?, ?)');
        for (const [, v] of values) {
          const c = v as { organizationId: string; audienceExternalId: string; id: string };
          ins.run(c.organizationId, c.audienceExternalId, c.id, JSON.stringify(c));
        }
        break;
      }
      case 'smsg': {
        const ins = s('INSERT OR IGNORE INTO session_messages (org, id, session_id, network_id, status, body) VALUES (?, ?, ?, ?, ?, ?)');
        const sorted = values.map(([, v]) => v as { seq: number; organizationId: string; _id: string; sessionId: string; messageId: string | null; status?: string }).sort((a, b) => a.seq - b.seq);
        for (const { seq: _seq, ...m } of sorted) ins.run(m.organizationId, m._id, m.sessionId, m.messageId ?? null, m.status ?? null, JSON.stringify(m));
        break;
      }
      case 'ssessions': {
        const ins = s('INSERT OR IGNORE INTO chat_sessions (org, session_id, audience_external_id, opened_at) VALUES (?, ?, ?, ?)');
        for (const [, v] of values) {
          const r = v as { organizationId: string; sessionId: string; audienceExternalId: string; openedAt: string };
          ins.run(r.organizationId, r.sessionId, r.audienceExternalId, r.openedAt);
        }
        break;
      }
      case 'conversations': {
        const ins = s('INSERT OR REPLACE INTO conversations (org, audience_external_id, status, assignee_id, updated_at, queued_at, version, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
        for (const [, v] of values) {
          const r = v as { organizationId: string; audienceExternalId: string; status: string; assigneeId: string | null; updatedAt: string; queuedAt: string | null; version: number };
          ins.run(r.organizationId, r.audienceExternalId, r.status, r.assigneeId ?? null, r.updatedAt, r.queuedAt ?? null, r.version, JSON.stringify(r));
        }
        break;
      }
      case 'webhookDeliveries': {
        const ins = s('INSERT OR IGNORE INTO webhook_deliveries (org, id, registration_id, status, due_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)');
        const sorted = values.map(([, v]) => v as { organizationId: string; id: string; registrationId: string; status: string; nextAttemptAt: string | null; createdAt: string; updatedAt: string }).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
        for (const d of sorted) {
          const due = d.status === 'pending' ? Date.parse(d.nextAttemptAt ?? d.createdAt) : null;
          ins.run(d.organizationId, d.id, d.registrationId, d.status, due, d.updatedAt, JSON.stringify(d));
        }
        break;
      }
      default:
        for (const [k, v] of values) putRecord.run(coll, k, JSON.stringify(v));
    }
  }
  return n;
}

/** The sandbox network's old store (`DATA_DIR/sandbox-network`): accounts, templates and windows, all key-value. */
export function importSandboxJsonStore(db: SqliteDb, dataDir: string): void {
  importKeyValueJsonStore(db, join(dataDir, 'sandbox-network'));
}

/** An old store whose collections are all key-value (the sandbox network's, the sandbox providers'), into `records`, once. */
export function importKeyValueJsonStore(db: SqliteDb, dir: string): void {
  if (db.has(MARKER.coll, MARKER.key)) return;
  const colls = readJsonStore(dir);
  db.raw.transaction(() => {
    const put = db.raw.prepare('INSERT OR REPLACE INTO records (coll, key, value) VALUES (?, ?, ?)');
    for (const [coll, entries] of colls ?? []) for (const [k, v] of entries) put.run(coll, k, JSON.stringify(v));
    db.apply([{ coll: MARKER.coll, key: MARKER.key, value: { at: new Date().toISOString() } }]);
  })();
}
