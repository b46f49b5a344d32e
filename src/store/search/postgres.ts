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
// Messages are ranked among a word's newest matches (up to `recentHits`), found the cheapest of
// three ways. First a walk of the organization's newest `walk` messages (the pages written last,
// read in order): a common word (one message in twenty or more) has its matches there, and the
// walk stops at them; an organization with fewer messages than that has had them all walked. A
// word the walk found less often tells how far back its matches should lie: up to `windowMax`
// messages back (in `seq`, which all organizations share, at the pace the walked messages took
// it), the GIN index's matches and the primary key's range from there are intersected as bitmaps,
// so only the matching rows of the range are read (a word in a hundredth of a million messages:
// about 1,000 pages, where walking the range read 5,800). When that range holds `recentHits`
// matches they are the newest; otherwise (the word was rarer further back), and for a word the
// walk did not find, the GIN index alone: its matches counted up to `recentHits`, then all of them
// ranked when fewer (an order number), or the newest when more. The GIN index alone reads every
// match of the word, each on a page of its own; a walk alone reads the whole table for a word no
// message has. Planned for their values each time (`prepare: false`): the plan depends on them.
export interface MessageSearchSizes {
  /** How many of a word's newest matches are ranked. */
  recentHits: number;
  /** The newest messages walked first. */
  walk: number;
  /** The furthest back (in messages) the index intersection reaches. */
  windowMax: number;
}

const SIZES: MessageSearchSizes = { recentHits: 500, walk: 10_000, windowMax: 200_000 };

function messageQueries({ recentHits, walk }: MessageSearchSizes) {
  const q = `q AS (SELECT to_tsquery('simple', sb_fold($2)) AS q)`;
  const ranked = (extra = '') => `SELECT body, (SELECT count(*) FROM recent) AS n${extra} FROM recent, q ORDER BY ts_rank(recent.search, q.q) DESC, seq DESC LIMIT $3`;
  return {
    // With where the walked messages begin (null: the organization has no more) and the newest one's seq.
    walked: `
      WITH ${q},
           walked AS (SELECT seq, search, body FROM session_messages WHERE org = $1 ORDER BY seq DESC LIMIT ${walk}),
           recent AS (SELECT walked.* FROM walked, q WHERE walked.search @@ q.q ORDER BY seq DESC LIMIT ${recentHits})
      ${ranked(`,
        (SELECT seq FROM session_messages WHERE org = $1 ORDER BY seq DESC OFFSET ${walk - 1} LIMIT 1) AS walk_start,
        (SELECT max(seq) FROM session_messages WHERE org = $1) AS newest`)}`,
    since: `
      WITH ${q},
           recent AS (SELECT seq, search, body FROM session_messages, q WHERE org = $1 AND seq >= $4 AND search @@ q.q ORDER BY seq DESC LIMIT ${recentHits})
      ${ranked()}`,
    matchesUpTo: `
      WITH ${q}
      SELECT count(*) AS n FROM (SELECT 1 FROM session_messages, q WHERE org = $1 AND search @@ q.q LIMIT ${recentHits}) m`,
    all: `
      WITH ${q}
      SELECT body FROM session_messages, q WHERE org = $1 AND search @@ q.q
      ORDER BY ts_rank(search, q.q) DESC, seq DESC LIMIT $3`,
    newest: `
      WITH ${q},
           recent AS (SELECT seq, search, body FROM session_messages, q WHERE org = $1 AND search @@ q.q ORDER BY seq DESC LIMIT ${recentHits})
      SELECT body FROM recent, q ORDER BY ts_rank(recent.search, q.q) DESC, seq DESC LIMIT $3`,
  };
}

/** Search over PostgreSQL's generated tsvector columns and their GIN indexes (`sizes`: for tests). */
export function createPostgresSearchIndex(db: PgDb, sizes: MessageSearchSizes = SIZES): SearchIndex {
  const sql = messageQueries(sizes);
  type Ranked = { body: SessionMessage; n: string };
  const matchesIn = (rows: Ranked[]) => (rows.length > 0 ? Number(rows[0]!.n) : 0);
  return {
    async contacts(org, text, limit) {
      const q = tsQuery(searchTerms(text));
      if (q === null) return [];
      return (await db.rows<{ body: Contact }>(CONTACTS, [org, q, limit], { prepare: false })).map((r) => r.body);
    },
    async messages(org, text, limit) {
      const q = tsQuery(searchTerms(text));
      if (q === null) return [];
      const walked = await db.rows<Ranked & { walk_start: string | null; newest: string }>(sql.walked, [org, q, limit], { prepare: false });
      const found = matchesIn(walked);
      // Every match, or the organization's every message, was walked: nothing older to find.
      if (found >= sizes.recentHits || (found > 0 && walked[0]!.walk_start === null)) return walked.map((r) => messageHit(r.body));
      if (found > 0) {
        // As far back as should hold the matches wanted at the rate the walk found them, with a margin, in
        // seq (which every organization's messages share) at the rate the walked ones took it.
        const window = Math.ceil((sizes.walk * sizes.recentHits * 1.5) / found);
        if (window <= sizes.windowMax) {
          const newest = Number(walked[0]!.newest);
          const start = newest - Math.ceil(((newest - Number(walked[0]!.walk_start)) * window) / sizes.walk);
          const since = await db.rows<Ranked>(sql.since, [org, q, limit, Math.max(0, start)], { prepare: false });
          if (matchesIn(since) >= sizes.recentHits) return since.map((r) => messageHit(r.body));
        }
      }
      const [{ n }] = (await db.rows<{ n: string }>(sql.matchesUpTo, [org, q], { prepare: false })) as [{ n: string }];
      const rows = await db.rows<{ body: SessionMessage }>(Number(n) < sizes.recentHits ? sql.all : sql.newest, [org, q, limit], { prepare: false });
      return rows.map((r) => messageHit(r.body));
    },
  };
}

/** A ticket list's text condition (`ticketFilter`): its generated `search` column. */
export function postgresTicketTextMatch(_organizationId: string, text: string): { sql: string; args: unknown[] } | null {
  const q = tsQuery(searchTerms(text));
  if (q === null) return null;
  return { sql: "search @@ to_tsquery('simple', sb_fold(?))", args: [q] };
}
