import type { Contact } from '../../domain/types.js';
import type { SessionMessage } from '../../domain/messages.js';
import type { SqliteDb } from '../sqlite/db.js';
import { messageHit } from './hits.js';
import type { SearchIndex } from './port.js';
import { fts5Query, prefixesLast, searchTerms } from './query.js';
import { rankByWords } from './rank.js';

// FTS5's rank is bm25 (lower is better). The indexes hold every organization's text, so the join to
// the table (and its `org`) scopes the hits.
const CONTACTS = `
  SELECT c.body FROM contacts_fts f
    JOIN contacts_search_ids i ON i.id = f.rowid
    JOIN contacts c ON c.org = i.org AND c.audience_external_id = i.audience_external_id
  WHERE contacts_fts MATCH ? AND i.org = ?
  ORDER BY f.rank, json_extract(c.body, '$.createdAt') DESC, i.id DESC LIMIT ?`;
// A word's matches, newest first, the newest RECENT_HITS of them: FTS5 walks a word's list of
// matches in rowid order and stops there, so a word said in a twelfth of a million messages costs
// what 500 matches cost. They are ranked here (rank.ts), not by FTS5's bm25: bm25 first counts
// every match of each word in the whole index, which for a common word is most of the time.
const RECENT_HITS = 500;
const MESSAGES = `
  SELECT f.text, m.body FROM session_messages_fts f JOIN session_messages m ON m.seq = f.rowid
  WHERE session_messages_fts MATCH ? AND m.org = ?
  ORDER BY f.rowid DESC LIMIT ${RECENT_HITS}`;

/** Noted rows past which a commit folds them into the indexes. */
const FOLD_AT = 256;

/**
 * Folds the rows noted in `search_pending` (schema step 14) into the ticket
 * and message FTS5 indexes, when there are at least `atLeast`: a rewritten
 * ticket's entry is replaced, a row gone since it was noted is skipped.
 * Inside a batch (`SqliteDb.run` or a commit hook).
 */
export function foldPendingText(db: SqliteDb, atLeast = 1): void {
  const { lo, hi } = db.stmt('SELECT min(id) AS lo, max(id) AS hi FROM search_pending').get() as { lo: number | null; hi: number | null };
  if (lo === null || hi === null || hi - lo + 1 < atLeast) return;
  const tickets = "SELECT DISTINCT ref FROM search_pending WHERE kind = 'ticket' AND id <= ?";
  db.stmt(`DELETE FROM tickets_fts WHERE rowid IN (${tickets})`).run(hi);
  db.stmt(
    `INSERT INTO tickets_fts (rowid, subject, description)
     SELECT i.id, coalesce(json_extract(t.body, '$.title'), ''), coalesce(json_extract(t.body, '$.description'), '')
     FROM (${tickets}) p JOIN tickets_search_ids i ON i.id = p.ref JOIN tickets t ON t.org = i.org AND t.seq = i.seq`,
  ).run(hi);
  db.stmt(
    `INSERT INTO session_messages_fts (rowid, text)
     SELECT m.seq, coalesce(json_extract(m.body, '$.content.text'), json_extract(m.body, '$.content.caption'), '')
     FROM (SELECT DISTINCT ref FROM search_pending WHERE kind = 'message' AND id <= ?) p JOIN session_messages m ON m.seq = p.ref`,
  ).run(hi);
  db.stmt('DELETE FROM search_pending WHERE id <= ?').run(hi);
}

/** Has every commit of the node database fold the noted rows once FOLD_AT have gathered. */
export function foldTextOnCommit(db: SqliteDb): void {
  db.beforeCommit(() => foldPendingText(db, FOLD_AT));
}

/** Before a search reads the ticket or message index: everything noted so far is folded in (and committed). */
export async function textIndexCaughtUp(db: SqliteDb): Promise<void> {
  if (db.stmt('SELECT 1 FROM search_pending LIMIT 1').get() === undefined) return;
  await db.run(() => foldPendingText(db));
}

/** Search over the node database's FTS5 tables (schema steps 3 and 14). */
export function createSqliteSearchIndex(db: SqliteDb): SearchIndex {
  return {
    async contacts(org, text, limit) {
      const terms = searchTerms(text);
      const q = fts5Query(terms);
      if (q === null) return [];
      // A phone number matches the phone columns only: its digits from the start (the id's, or a number shared later).
      const rows = db.stmt(CONTACTS).all(terms.phone ? `{phone ids} : ${q}` : q, org, limit) as { body: string }[];
      return rows.map((r) => JSON.parse(r.body) as Contact);
    },
    async messages(org, text, limit) {
      const terms = searchTerms(text);
      const q = fts5Query(terms);
      if (q === null) return [];
      await textIndexCaughtUp(db);
      // Ranked by the indexed text; only the bodies shown are parsed.
      const rows = db.stmt(MESSAGES).all(q, org) as { text: string; body: string }[];
      return rankByWords(rows.map((r) => r.text), terms.words, prefixesLast(terms)).slice(0, limit).map((i) => messageHit(JSON.parse(rows[i]!.body) as SessionMessage));
    },
  };
}

/** A ticket list's text condition (`ticketFilter`): its subject or description in the FTS5 index. */
export function sqliteTicketTextMatch(organizationId: string, text: string): { sql: string; args: unknown[] } | null {
  const q = fts5Query(searchTerms(text));
  if (q === null) return null;
  return { sql: 'seq IN (SELECT i.seq FROM tickets_fts f JOIN tickets_search_ids i ON i.id = f.rowid WHERE tickets_fts MATCH ? AND i.org = ?)', args: [q, organizationId] };
}
