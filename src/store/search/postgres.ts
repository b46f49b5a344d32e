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
// Messages are ranked among a word's newest matches (up to RECENT_HITS), found the cheaper of two
// ways. First a walk of the organization's newest WALK messages (the pages written last, read in
// order): a common word (one message in twenty or more) has its RECENT_HITS there, and the walk
// stops at them. A word that had fewer there but not few (at least ENOUGH) is walked again over as
// many of the newest messages as should hold RECENT_HITS of its matches, at most WALK_MAX, and
// ranked among what that finds. A rarer word goes to the GIN index: its matches counted up to
// RECENT_HITS, then all of them ranked when fewer (an order number), or the newest RECENT_HITS
// when more. The GIN index alone reads every match of the word, each on a page of its own (45 ms
// for a word in a sixth of a million messages); a walk alone reads the whole table for a word no
// message has. Planned for their values each time (`prepare: false`): the plan depends on the word.
const RECENT_HITS = 500;
const WALK = 10_000;
const WALK_MAX = 100_000;
const ENOUGH = 50;
const RECENT_WALKED = `
  WITH q AS (SELECT to_tsquery('simple', sb_fold($2)) AS q),
       walked AS (SELECT seq, search, body FROM session_messages WHERE org = $1 ORDER BY seq DESC LIMIT $4),
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
      const walk = (rows: number) => db.rows<{ body: SessionMessage; n: string }>(RECENT_WALKED, [org, q, limit, rows], { prepare: false });
      const walked = await walk(WALK);
      const found = walked.length > 0 ? Number(walked[0]!.n) : 0;
      if (found >= RECENT_HITS) return walked.map((r) => messageHit(r.body));
      if (found >= ENOUGH) return (await walk(Math.min(WALK_MAX, Math.ceil((WALK * RECENT_HITS * 1.5) / found)))).map((r) => messageHit(r.body));
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
