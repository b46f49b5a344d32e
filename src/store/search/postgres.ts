import type { Contact } from '../../domain/types.js';
import type { SessionMessage } from '../../domain/messages.js';
import type { PgDb } from '../postgres/db.js';
import { messageHit } from './hits.js';
import type { SearchIndex } from './port.js';
import { searchTerms, tsQuery } from './query.js';

// The query is folded by sb_fold, as the indexed text was.
const CONTACTS = `
  WITH q AS (SELECT to_tsquery('simple', sb_fold($2)) AS q)
  SELECT body FROM contacts, q WHERE org = $1 AND search @@ q.q
  ORDER BY ts_rank(search, q.q) DESC, body->>'createdAt' DESC, id DESC LIMIT $3`;
// A word's matches, counted up to RECENT_HITS (the scan stops there, whichever index it walks).
// Fewer: all of them are ranked (found through the GIN index). More: a common word (a sixth of a
// million messages), whose matches are ranked among the newest RECENT_HITS, found walking the
// messages newest first; ranking every match of such a word takes seconds, and walking newest
// first for a rare word (an order number) reads the whole table. Both are planned for their
// values each time (`prepare: false`): the right plan depends on the word.
const RECENT_HITS = 500;
const MATCHES_UP_TO = `
  WITH q AS (SELECT to_tsquery('simple', sb_fold($2)) AS q)
  SELECT count(*) AS n FROM (SELECT 1 FROM session_messages, q WHERE org = $1 AND search @@ q.q LIMIT ${RECENT_HITS}) m`;
const MESSAGES_RANKED = `
  WITH q AS (SELECT to_tsquery('simple', sb_fold($2)) AS q)
  SELECT body FROM session_messages, q WHERE org = $1 AND search @@ q.q
  ORDER BY ts_rank(search, q.q) DESC, seq DESC LIMIT $3`;
const MESSAGES_RECENT_RANKED = `
  WITH q AS (SELECT to_tsquery('simple', sb_fold($2)) AS q),
       recent AS (SELECT seq, search, body FROM session_messages, q WHERE org = $1 AND search @@ q.q ORDER BY seq DESC LIMIT ${RECENT_HITS})
  SELECT body FROM recent, q ORDER BY ts_rank(recent.search, q.q) DESC, seq DESC LIMIT $3`;

/** Search over PostgreSQL's generated tsvector columns and their GIN indexes. */
export function createPostgresSearchIndex(db: PgDb): SearchIndex {
  return {
    async contacts(org, text, limit) {
      const q = tsQuery(searchTerms(text));
      if (q === null) return [];
      return (await db.rows<{ body: Contact }>(CONTACTS, [org, q, limit], { prepare: false })).map((r) => r.body);
    },
    async messages(org, text, limit) {
      const q = tsQuery(searchTerms(text));
      if (q === null) return [];
      const [{ n }] = (await db.rows<{ n: string }>(MATCHES_UP_TO, [org, q], { prepare: false })) as [{ n: string }];
      const sql = Number(n) < RECENT_HITS ? MESSAGES_RANKED : MESSAGES_RECENT_RANKED;
      return (await db.rows<{ body: SessionMessage }>(sql, [org, q, limit], { prepare: false })).map((r) => messageHit(r.body));
    },
  };
}

/** A ticket list's text condition (`ticketFilter`): its generated `search` column. */
export function postgresTicketTextMatch(_organizationId: string, text: string): { sql: string; args: unknown[] } | null {
  const q = tsQuery(searchTerms(text));
  if (q === null) return null;
  return { sql: "search @@ to_tsquery('simple', sb_fold(?))", args: [q] };
}
