import type { SqliteDb, WriteOp } from '../sqlite/db.js';
import type { TemplateRecord, TemplateRepo } from './port.js';

/** Templates in the node's SQLite database, one entry per `<org>/<channel>/<name>/<language>`. */
export function createSqliteTemplateRepo(db: SqliteDb): TemplateRepo {
  const key = (org: string, ch: string, name: string, lang: string) => `${org}/${ch}/${name}/${lang}`;
  const ofChannel = (org: string, ch: string) =>
    db.valuesWithPrefix<TemplateRecord>('templates', `${org}/${ch}/`).filter((t) => t.organizationId === org && t.channelId === ch);
  const sorted = (ts: TemplateRecord[]) => ts.sort((a, b) => a.name.localeCompare(b.name) || a.language.localeCompare(b.language));
  return {
    async get(org, ch, name, lang) {
      return db.get<TemplateRecord>('templates', key(org, ch, name, lang)) ?? null;
    },
    async list(org, ch) {
      return sorted(ofChannel(org, ch));
    },
    async put(t) {
      await db.put('templates', key(t.organizationId, t.channelId, t.name, t.language), t);
    },
    async delete(org, ch, name, lang) {
      const k = key(org, ch, name, lang);
      if (!db.has('templates', k)) return false;
      await db.delete('templates', k);
      return true;
    },
    async replaceFromNetwork(org, ch, synced) {
      const keep = new Set(synced.map((t) => key(org, ch, t.name, t.language)));
      const ops: WriteOp[] = [];
      let removed = 0;
      for (const t of ofChannel(org, ch)) {
        const k = key(org, ch, t.name, t.language);
        if (t.source === 'network' && !keep.has(k)) {
          ops.push({ coll: 'templates', key: k, delete: true });
          removed++;
        }
      }
      for (const t of synced) ops.push({ coll: 'templates', key: key(org, ch, t.name, t.language), value: { ...t, organizationId: org, channelId: ch } });
      await db.write(ops);
      return { removed };
    },
    async deleteChannel(org, ch) {
      await db.write(ofChannel(org, ch).map((t) => ({ coll: 'templates', key: key(org, ch, t.name, t.language), delete: true })));
    },
  };
}
