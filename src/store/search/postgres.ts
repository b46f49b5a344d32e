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
// Messages are ranked among a word's newest RECENT_HITS matches, found the cheaper of two ways.
// First a walk of the organization's newest WALK messages: a common word (one message in twenty
// or more) has its RECENT_HITS there, and the walk stops at them. Otherwise the GIN index: its
// matches counted up to RECENT_HITS, then all of them ranked when fewer (a rare word, an order
// number), or the newest RECENT_HITS of them when more. Counting through the GIN index first
// would build the bitmap of every match (45 ms for a word in a sixth of a million messages);
// walking newest first without a bound reads the whole table for a word no message has. Planned
// for their values each time (`prepare: false`): the right plan depends on the word.
const RECENT_HITS = 500;
const WALK = 10_000;
const RECENT_WALKED = `
  WITH q AS (SELECT to_tsquery('simple', sb_fold($2)) AS q),
       walked AS (SELECT seq, search, body FROM session_messages WHERE org = $1 ORDER BY seq DESC LIMIT ${WALK}),
       recent AS (SELECT walked.* FROM walked, q WHERE walked.search @@ q.q ORDER BY seq DESC LIMIT ${RECENT_HITS})
  SELECT body, (SELECT count(*) FROM recent) AS n FROM recent, q
  ORDER BY ts_rank(recent.search, q.q) DESC, seq DESC LIMIT $3`;
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
      const walked = await db.rows<{ body: SessionMessage; n: string }>(RECENT_WALKED, [org, q, limit], { prepare: false });
      if (walked.length > 0 && Number(walked[0]!.n) >= RECENT_HITS) return walked.map((r) => messageHit(r.body));
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
