import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPostgresStore, createSqliteStore, openNodeDbIn, type Store } from '../../src/store/index.js';
import type { Ticket } from '../../src/domain/types.js';
import { textIndexCaughtUp } from '../../src/store/search/sqlite.js';
import { useRedisClients } from '../harness/use-servers.js';
import { usePostgres } from '../harness/use-postgres.js';

/*
 * The text the workspace searches is indexed in both layouts: FTS5 in the
 * embedded database, tsvector in PostgreSQL. Contacts by name and phone
 * digits, tickets by subject and description, as they are written and changed.
 */

const at = new Date().toISOString();
const ticket = (org: string, title: string, description: string): Omit<Ticket, 'ticketId'> => ({
  _id: randomUUID(), title, description, status: 'open', priority: 'medium', assigneeId: null, audienceId: null, audienceExternalId: null,
  organizationId: org, resolutionDate: null, createdBy: null, createdAt: at, updatedAt: at,
});
const stamp = () => ({ id: randomUUID(), type: 'ticket.created' as const, createdAt: at });

async function fill(store: Store): Promise<string> {
  const t = await store.tickets.create(ticket('o1', 'Drucker brennt', 'Der Drucker im zweiten Stock qualmt'), stamp());
  await store.tickets.create(ticket('o1', 'Login', 'cannot sign in'), stamp());
  await store.tickets.update('o1', t.ticketId, (x) => ({ ...x, title: 'Printer on fire' }), { ...stamp(), type: 'ticket.updated' });
  await store.contacts.upsert({ id: randomUUID(), organizationId: 'o1', audienceExternalId: '4915112345678:100200', name: null, createdAt: at });
  await store.contacts.setNameIfMissing('o1', '4915112345678:100200', 'José Núñez');
  return t.ticketId;
}

describe('search indexes, embedded (FTS5)', () => {
  it('finds tickets by subject and description as changed, and contacts by name (accents folded) and phone digits', async () => {
    const db = openNodeDbIn(null);
    const store = createSqliteStore(db);
    const id = await fill(store);
    await db.sync();
    await textIndexCaughtUp(db);
    const tickets = (q: string) =>
      (db.stmt('SELECT t.ticket_id AS id FROM tickets_fts f JOIN tickets_search_ids i ON i.id = f.rowid JOIN tickets t ON t.org = i.org AND t.seq = i.seq WHERE tickets_fts MATCH ?').all(q) as { id: string }[]).map((r) => r.id);
    expect(tickets('printer')).toEqual([id]);
    expect(tickets('qualmt')).toEqual([id]);
    expect(tickets('brennt')).toEqual([]);
    const contacts = (q: string) => (db.stmt('SELECT i.audience_external_id AS a FROM contacts_fts f JOIN contacts_search_ids i ON i.id = f.rowid WHERE contacts_fts MATCH ?').all(q) as { a: string }[]).map((r) => r.a);
    expect(contacts('jose')).toEqual(['4915112345678:100200']);
    expect(contacts('"4915112345678"')).toEqual(['4915112345678:100200']);
    await db.close();
  });
});

describe('the embedded text index, written in bulk', () => {
  const count = (db: ReturnType<typeof openNodeDbIn>, sql: string) => (db.stmt(sql).get() as { n: number }).n;

  it('finds what was just written, before anything folded it in, and folds on commit once enough has gathered', async () => {
    const db = openNodeDbIn(null);
    const store = createSqliteStore(db);
    const first = await store.tickets.create(ticket('o1', 'Drucker brennt', 'zweiter Stock'), stamp());
    expect(count(db, 'SELECT count(*) AS n FROM search_pending')).toBe(1);
    expect(count(db, 'SELECT count(*) AS n FROM tickets_fts')).toBe(0);
    // The list's text filter folds the noted rows in first.
    const found = await store.tickets.list({ organizationId: 'o1', text: 'drucker', limit: 10, offset: 0 });
    expect(found.tickets.map((t) => t.ticketId)).toEqual([first.ticketId]);
    expect(count(db, 'SELECT count(*) AS n FROM search_pending')).toBe(0);
    // A rewrite replaces the entry: the old words no longer find it.
    await store.tickets.update('o1', first.ticketId, (x) => ({ ...x, title: 'Printer on fire' }), { ...stamp(), type: 'ticket.updated' });
    expect((await store.tickets.list({ organizationId: 'o1', text: 'brennt', limit: 10, offset: 0 })).tickets).toEqual([]);
    expect((await store.tickets.list({ organizationId: 'o1', text: 'printer', limit: 10, offset: 0 })).tickets.map((t) => t.ticketId)).toEqual([first.ticketId]);
    // Without a search, a commit folds them once 256 have gathered.
    for (let i = 0; i < 300; i++) await store.tickets.create(ticket('o1', `Case ${i}`, 'bulk'), stamp());
    expect(count(db, 'SELECT count(*) AS n FROM search_pending')).toBeLessThan(256);
    expect(count(db, "SELECT count(*) AS n FROM tickets_fts WHERE tickets_fts MATCH 'bulk'")).toBeGreaterThanOrEqual(256 - 10);
    expect((await store.tickets.list({ organizationId: 'o1', text: 'bulk', limit: 1, offset: 0 })).total).toBe(300);
    await db.close();
  });
});

describe('search indexes, PostgreSQL (tsvector)', () => {
  const redis = useRedisClients();
  const postgres = usePostgres();
  it('finds tickets by subject and description as changed, and contacts by name (accents folded) and phone digits', async () => {
    const db = await postgres.open();
    const id = await fill(createPostgresStore(db, await redis.client(), { prefix: 'search' }));
    const tickets = async (q: string) => (await db.rows<{ ticket_id: string }>("SELECT ticket_id FROM tickets WHERE search @@ plainto_tsquery('simple', $1)", [q])).map((r) => r.ticket_id);
    expect(await tickets('printer')).toEqual([id]);
    expect(await tickets('qualmt')).toEqual([id]);
    expect(await tickets('brennt')).toEqual([]);
    const contacts = async (q: string) => (await db.rows<{ a: string }>("SELECT audience_external_id AS a FROM contacts WHERE search @@ plainto_tsquery('simple', sb_fold($1))", [q])).map((r) => r.a);
    expect(await contacts('josé')).toEqual(['4915112345678:100200']);
    expect(await contacts('NUNEZ')).toEqual(['4915112345678:100200']);
    expect(await contacts('4915112345678')).toEqual(['4915112345678:100200']);
  });
});
