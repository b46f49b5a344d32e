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
// Ranked among the newest RECENT_HITS matches: ranking every match of a common word (a sixth of a
// million messages) takes seconds, and a support agent looks for what was said lately.
const RECENT_HITS = 500;
const MESSAGES = `
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
      return (await db.rows<{ body: SessionMessage }>(MESSAGES, [org, q, limit], { prepare: false })).map((r) => messageHit(r.body));
    },
  };
}

/** A ticket list's text condition (`ticketFilter`): its generated `search` column. */
export function postgresTicketTextMatch(_organizationId: string, text: string): { sql: string; args: unknown[] } | null {
  const q = tsQuery(searchTerms(text));
  if (q === null) return null;
  return { sql: "search @@ to_tsquery('simple', sb_fold(?))", args: [q] };
}
