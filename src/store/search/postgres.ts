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
// three ways, told apart by a first look at the organization's newest `probe` messages (an
// organization with fewer has had them all read). A word common there (one message in
// thirteen or more) has its matches among the newest `walk` messages: those are walked, newest first
// (the pages written last, read in order), stopping at them. A word found less often tells how far
// back its matches should lie: up to `windowMax` messages back (in `seq`, which all organizations
// share, at the pace the probed messages took it), the GIN index's matches and the primary key's
// range from there are intersected as bitmaps, so only the matching rows of the range are read (a
// word in a hundredth of a million messages: about 1,000 pages, where walking the range read
// 5,800). When that range holds `recentHits` matches they are the newest; when it holds fewer, a
// range as far back as its own rate says is tried once (the probe's rate, from a few matches, can
// be high by chance: several contacts saying the word at one busy moment); otherwise (the word was
// rarer further back), and for a word the probe did not find, the GIN index alone: its matches
// counted up to `recentHits`, then all of them ranked when fewer (an order number), or the newest
// when more. The GIN index alone reads every match of the word, each on a page of its own; a walk
// alone reads the whole table for a word no message has. Planned for their values each time
// (`prepare: false`): the plan depends on them.
export interface MessageSearchSizes {
  /** How many of a word's newest matches are ranked. */
  recentHits: number;
  /** The newest messages looked at first. */
  probe: number;
  /** The newest messages walked for a common word. */
  walk: number;
  /** The furthest back (in messages) the index intersection reaches. */
  windowMax: number;
}

const SIZES: MessageSearchSizes = { recentHits: 500, probe: 2_000, walk: 10_000, windowMax: 200_000 };

function messageQueries({ recentHits, probe, walk }: MessageSearchSizes) {
  const q = `q AS (SELECT to_tsquery('simple', sb_fold($2)) AS q)`;
  const ranked = (extra = '') => `SELECT body, (SELECT count(*) FROM recent) AS n${extra} FROM recent, q ORDER BY ts_rank(recent.search, q.q) DESC, seq DESC LIMIT $3`;
  const walked = (rows: number, extra = '') => `
      WITH ${q},
           walked AS (SELECT seq, search, body FROM session_messages WHERE org = $1 ORDER BY seq DESC LIMIT ${rows}),
           recent AS (SELECT walked.* FROM walked, q WHERE walked.search @@ q.q ORDER BY seq DESC LIMIT ${recentHits})
      ${ranked(extra)}`;
  return {
    // With where the probed messages begin (null: the organization has no more) and the newest one's seq.
    probe: walked(
      probe,
      `,
        (SELECT seq FROM session_messages WHERE org = $1 ORDER BY seq DESC OFFSET ${probe - 1} LIMIT 1) AS probe_start,
        (SELECT max(seq) FROM session_messages WHERE org = $1) AS newest`,
    ),
    walk: walked(walk),
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
      const probed = await db.rows<Ranked & { probe_start: string | null; newest: string }>(sql.probe, [org, q, limit], { prepare: false });
      const found = matchesIn(probed);
      // Every match, or the organization's every message, was read: nothing older to find.
      if (found >= sizes.recentHits || (found > 0 && probed[0]!.probe_start === null)) return probed.map((r) => messageHit(r.body));
      // As many messages back as should hold the matches wanted, at the rate `found` in `read`, with a margin.
      const reach = (read: number, found: number) => Math.ceil((read * sizes.recentHits * 1.5) / found);
      if (found > 0) {
        const window = reach(sizes.probe, found);
        if (window <= sizes.walk) {
          const walked = await db.rows<Ranked>(sql.walk, [org, q, limit], { prepare: false });
          if (matchesIn(walked) >= sizes.recentHits) return walked.map((r) => messageHit(r.body));
        } else if (window <= sizes.windowMax) {
          // In seq (which every organization's messages share) at the pace the probed ones took it.
          const newest = Number(probed[0]!.newest);
          const pace = (newest - Number(probed[0]!.probe_start)) / sizes.probe;
          const inRange = (messages: number) => db.rows<Ranked>(sql.since, [org, q, limit, Math.max(0, newest - Math.ceil(pace * messages))], { prepare: false });
          let since = await inRange(window);
          let inIt = matchesIn(since);
          // Too few there (the probe caught the word at a busy moment): once more, as far back as the
          // range's own rate says, before the GIN index alone (which reads every match).
          if (inIt > 0 && inIt < sizes.recentHits && window < sizes.windowMax) {
            since = await inRange(Math.min(sizes.windowMax, reach(window, inIt)));
            inIt = matchesIn(since);
          }
          if (inIt >= sizes.recentHits) return since.map((r) => messageHit(r.body));
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
