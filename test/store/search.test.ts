import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SessionMessage } from '../../src/domain/messages.js';
import { NODE_PG_MIGRATIONS, PgDb, createPostgresSearchIndex, createPostgresStore, createSqliteSearchIndex, createSqliteStore, openNodeDbIn } from '../../src/store/index.js';
import { createPostgresSessionMessageRepo } from '../../src/store/session-messages/postgres.js';
import { createSqliteSessionMessageRepo } from '../../src/store/session-messages/sqlite.js';
import { usePostgres } from '../harness/use-postgres.js';
import { useRedisClients } from '../harness/use-servers.js';
import { runSearchContract } from './search.contract.js';

runSearchContract('embedded (FTS5)', async () => {
  const db = openNodeDbIn(null);
  return { search: createSqliteSearchIndex(db), contacts: createSqliteStore(db).contacts, messages: createSqliteSessionMessageRepo(db), close: () => db.close() };
});

const redis = useRedisClients();
const postgres = usePostgres();
runSearchContract('PostgreSQL (tsvector)', async () => {
  const db = await postgres.open();
  const store = createPostgresStore(db, await redis.client(), { prefix: 'search' });
  return { search: createPostgresSearchIndex(db), contacts: store.contacts, messages: createPostgresSessionMessageRepo(db), close: async () => {} };
});

describe('PostgreSQL message search: the newest matches, whichever way they are found', () => {
  // Small sizes so each way is taken: rank the newest 5 matches, look at the newest 4 messages, walk 10, reach back at most 100.
  const sizes = { recentHits: 5, probe: 4, walk: 10, windowMax: 100 };
  const seen = (db: PgDb) => {
    const queries: string[] = [];
    const spy = Object.create(db) as PgDb;
    spy.rows = (sql: string, ...rest: unknown[]) => {
      queries.push(sql.includes('seq >= $4') ? 'range' : sql.includes('count(*) AS n FROM (') ? 'gin' : sql.includes('walked AS') ? 'walk' : 'other');
      return (db.rows as (...a: unknown[]) => never)(sql, ...rest);
    };
    return { spy, queries };
  };
  /** Messages oldest first; each says its words once (so every match ranks alike) and its number. */
  const write = async (messages: ReturnType<typeof createPostgresSessionMessageRepo>, org: string, words: (i: number) => string[], count: number, between?: string) => {
    const sessionId = randomUUID();
    await messages.registerSession({ sessionId, organizationId: org, audienceExternalId: '4915100000077:9', openedAt: new Date().toISOString() });
    if (between !== undefined) await messages.registerSession({ sessionId: `${sessionId}-b`, organizationId: between, audienceExternalId: '4915100000078:9', openedAt: new Date().toISOString() });
    const ids: { id: string; words: string[] }[] = [];
    for (let i = 0; i < count; i++) {
      const m: SessionMessage = {
        _id: `m${i}-${randomUUID().slice(0, 6)}`, sessionId, organizationId: org, channelId: 'ch', audienceExternalId: '4915100000077:9', direction: 'inbound', sender: 'contact',
        content: { type: 'text', text: `${words(i).join(' ')} n${i}` }, sentAt: new Date(Date.UTC(2026, 10, 26, 0, 0, i)).toISOString(), messageId: null,
      };
      await messages.append(m);
      // Another organization's message after each (it says every word): the organizations share seq.
      if (between !== undefined) await messages.append({ ...m, _id: `${m._id}-b`, sessionId: `${sessionId}-b`, organizationId: between, audienceExternalId: '4915100000078:9', content: { type: 'text', text: 'alpha beta filler' } });
      ids.push({ id: m._id, words: words(i) });
    }
    return (word: string, n: number) => ids.filter((m) => m.words.includes(word)).map((m) => m.id).reverse().slice(0, n);
  };

  it('a word in a few of the newest messages: the index range as far back as should hold its matches', async () => {
    const db = await postgres.open();
    const messages = createPostgresSessionMessageRepo(db);
    const org = randomUUID();
    const other = randomUUID();
    // alpha: every fourth message (the walk finds 2 or 3 of 5); beta: 3 of the newest 10, then none for 100 messages, then 20;
    // gamma: every tenth from the 150th (one in the probe, so its first range is too short).
    const words = (i: number) => [...(i % 4 === 0 ? ['alpha'] : []), ...((i < 20) || (i >= 220 && i % 3 === 0) ? ['beta'] : []), ...(i >= 150 && i % 10 === 8 ? ['gamma'] : []), 'filler'];
    const newest = await write(messages, org, words, 230, other);
    const { spy, queries } = seen(db);
    const search = createPostgresSearchIndex(spy, sizes);

    expect((await search.messages(org, 'alpha', 5)).map((h) => h.messageId)).toEqual(newest('alpha', 5));
    expect(queries).toEqual(['walk', 'range']);

    // The ranges guessed from the walk hold too few (the word stopped for a while): the GIN index finds the older ones.
    queries.length = 0;
    expect((await search.messages(org, 'beta', 5)).map((h) => h.messageId)).toEqual(newest('beta', 5));
    expect(queries).toEqual(['walk', 'range', 'range', 'gin', 'other']);

    // The first range holds too few (3 of 5): a second, as far back as its rate says, holds them.
    queries.length = 0;
    expect((await search.messages(org, 'gamma', 5)).map((h) => h.messageId)).toEqual(newest('gamma', 5));
    expect(queries).toEqual(['walk', 'range', 'range']);

    // Said in every message: the walk has them all.
    queries.length = 0;
    expect((await search.messages(org, 'filler', 5)).map((h) => h.messageId)).toEqual(newest('filler', 5));
    expect(queries).toEqual(['walk', 'walk']);

    // An organization with fewer messages than the first look: every match was read.
    queries.length = 0;
    const small = randomUUID();
    const few = await write(messages, small, (i) => (i % 3 === 0 ? ['alpha'] : ['filler']), 3);
    expect((await search.messages(small, 'alpha', 5)).map((h) => h.messageId)).toEqual(few('alpha', 5));
    expect(queries).toEqual(['walk']);
  });
});

describe('PostgreSQL message search across the schema step that computes it on append', () => {
  it("keeps the search text of messages and contacts written before the step, computes a message's on append, and a contact's attribute text as before", async () => {
    const schema = `t_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const org = randomUUID();
    const before = await PgDb.open(postgres.server.url, { migrations: NODE_PG_MIGRATIONS.filter((m) => m.version < 13), schema, poolSize: 2 });
    // As the code before the step wrote a message: the column generated from the row.
    await before.query("INSERT INTO session_messages (org, id, session_id, network_id, status, body) VALUES ($1, 'm-old', 's1', NULL, NULL, $2)", [
      org,
      JSON.stringify({ _id: 'm-old', sessionId: 's1', organizationId: org, audienceExternalId: '4915100000088:9', content: { type: 'text', text: 'Rückruf erbeten' }, sentAt: '2026-11-20T10:00:00.000Z' }),
    ]);
    await before.query('INSERT INTO contacts (org, audience_external_id, id, body) VALUES ($1, $2, $3, $4)', [
      org,
      '4915100000088:9',
      'c-old',
      JSON.stringify({ id: 'c-old', organizationId: org, audienceExternalId: '4915100000088:9', name: 'Jana Roth', attributes: { plan: 'Platin' }, createdAt: '2026-11-20T10:00:00.000Z' }),
    ]);
    await before.close();
    const db = await PgDb.open(postgres.server.url, { migrations: NODE_PG_MIGRATIONS, schema, poolSize: 2 });
    try {
      expect(await db.version()).toBe(NODE_PG_MIGRATIONS.at(-1)!.version);
      const messages = createPostgresSessionMessageRepo(db);
      const m: SessionMessage = {
        _id: 'm-new', sessionId: 's1', organizationId: org, channelId: 'ch', audienceExternalId: '4915100000088:9', direction: 'inbound', sender: 'contact',
        content: { type: 'text', text: 'Rückruf bitte heute' }, sentAt: '2026-11-21T10:00:00.000Z', messageId: 'wamid.new',
      };
      await messages.append(m);
      // A node of the previous release, still running during a rolling upgrade, appends without the column.
      await db.query("INSERT INTO session_messages (org, id, session_id, network_id, status, body) VALUES ($1, 'm-late', 's1', NULL, NULL, $2)", [
        org,
        JSON.stringify({ _id: 'm-late', sessionId: 's1', organizationId: org, audienceExternalId: '4915100000088:9', content: { type: 'image', mediaId: 'x', caption: 'Rückruf Foto' }, sentAt: '2026-11-22T10:00:00.000Z' }),
      ]);
      const search = createPostgresSearchIndex(db);
      expect((await search.messages(org, 'ruckruf', 10)).map((h) => h.messageId)).toEqual(['m-late', 'm-new', 'm-old']);
      expect((await search.messages(org, 'foto', 10)).map((h) => h.messageId)).toEqual(['m-late']);
      expect((await search.messages(org, 'erbeten', 10)).map((h) => h.messageId)).toEqual(['m-old']);
      // A contact's attribute text, its function made again in PL/pgSQL: the same words, before and after.
      await db.query('INSERT INTO contacts (org, audience_external_id, id, body) VALUES ($1, $2, $3, $4)', [
        org,
        '4915100000089:9',
        'c-new',
        JSON.stringify({ id: 'c-new', organizationId: org, audienceExternalId: '4915100000089:9', name: 'Jan Roth', attributes: { plan: 'Platin', tier: 2 }, createdAt: '2026-11-21T10:00:00.000Z' }),
      ]);
      expect((await search.contacts(org, 'platin', 10)).map((c) => c.id).sort()).toEqual(['c-new', 'c-old']);
      expect((await search.contacts(org, 'roth 2', 10)).map((c) => c.id)).toEqual(['c-new']);
      // The function gives what the SQL one gave, for every shape an attribute value can have.
      const shapes = ['{"a": "x", "b": [1, {"c": "ü"}], "d": null, "e": true}', '{}', '[1, 2]', '"text"', 'null'];
      const same = await db.rows<{ same: boolean }>(
        `SELECT sb_attribute_text(j) IS NOT DISTINCT FROM (CASE WHEN jsonb_typeof(j) = 'object' THEN coalesce((SELECT string_agg(value, ' ') FROM jsonb_each_text(j)), '') ELSE '' END) AS same
         FROM unnest($1::jsonb[]) AS j UNION ALL SELECT sb_attribute_text(NULL) = '' AS same`,
        [shapes],
      );
      expect(same).toEqual(Array.from({ length: shapes.length + 1 }, () => ({ same: true })));
      // The message column is a plain one now: the database no longer computes it on write.
      const generated = await db.rows<{ g: string }>("SELECT is_generated AS g FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'session_messages' AND column_name = 'search'", [schema]);
      expect(generated).toEqual([{ g: 'NEVER' }]);
    } finally {
      await db.close();
    }
  });
});
