import { FreshCache } from '../fresh-cache.js';
import type { PgDb } from '../postgres/db.js';
import type { TemplateRecord, TemplateRepo } from './port.js';

/** How long a template read stays good for sends (a change on another node shows within it). */
const FRESH_MS = 1_000;

const UPSERT = `
  INSERT INTO templates (org, channel_id, name, language, source, body)
  SELECT $1, $2, t->>'name', t->>'language', t->>'source', t FROM jsonb_array_elements($3::jsonb) AS t
  ON CONFLICT (org, channel_id, name, language) DO UPDATE SET source = excluded.source, body = excluded.body`;

const sorted = (ts: TemplateRecord[]) => ts.sort((a, b) => a.name.localeCompare(b.name) || a.language.localeCompare(b.language));

/** Templates in the `templates` table, one row per organization, channel, name and language. */
export function createPostgresTemplateRepo(db: PgDb): TemplateRepo {
  // Every send reads its template: one read in the last FRESH_MS is taken from memory. A change
  // through this node is seen at once (forgotten after the write); one on another node within
  // FRESH_MS. A missing template is never remembered, so a new one is found at once.
  const fresh = new FreshCache<TemplateRecord | null>(FRESH_MS);
  const channelOf = (org: string, ch: string) => `${org}\n${ch}\n`;
  const forgetChannel = (org: string, ch: string) => fresh.forget((k) => k.startsWith(channelOf(org, ch)));
  return {
    async get(org, ch, name, lang) {
      return fresh.get(
        `${channelOf(org, ch)}${name}\n${lang}`,
        async () => {
          const rows = await db.rows<{ body: TemplateRecord }>('SELECT body FROM templates WHERE org = $1 AND channel_id = $2 AND name = $3 AND language = $4', [org, ch, name, lang]);
          return rows[0]?.body ?? null;
        },
        (t) => t !== null,
      );
    },
    async list(org, ch) {
      return sorted((await db.rows<{ body: TemplateRecord }>('SELECT body FROM templates WHERE org = $1 AND channel_id = $2', [org, ch])).map((r) => r.body));
    },
    async put(t) {
      forgetChannel(t.organizationId, t.channelId);
      await db.query(UPSERT, [t.organizationId, t.channelId, JSON.stringify([t])]);
      forgetChannel(t.organizationId, t.channelId);
    },
    async delete(org, ch, name, lang) {
      forgetChannel(org, ch);
      const r = await db.query('DELETE FROM templates WHERE org = $1 AND channel_id = $2 AND name = $3 AND language = $4', [org, ch, name, lang]);
      forgetChannel(org, ch);
      return r.rowCount === 1;
    },
    async replaceFromNetwork(org, ch, synced) {
      // One row per name and language (a later duplicate wins, as it would written one by one).
      const rows = [...new Map(synced.map((t) => [`${t.name}\n${t.language}`, { ...t, organizationId: org, channelId: ch }])).values()];
      forgetChannel(org, ch);
      const removed = await db.tx(async (q) => {
        const gone = await q.query(
          `DELETE FROM templates WHERE org = $1 AND channel_id = $2 AND source = 'network'
             AND (name, language) NOT IN (SELECT * FROM unnest($3::text[], $4::text[]))`,
          [org, ch, rows.map((t) => t.name), rows.map((t) => t.language)],
        );
        if (rows.length > 0) await q.query(UPSERT, [org, ch, JSON.stringify(rows)]);
        return gone.rowCount ?? 0;
      });
      forgetChannel(org, ch);
      return { removed };
    },
    async deleteChannel(org, ch) {
      forgetChannel(org, ch);
      await db.query('DELETE FROM templates WHERE org = $1 AND channel_id = $2', [org, ch]);
      forgetChannel(org, ch);
    },
  };
}
