import { randomUUID } from 'node:crypto';
import { conflict } from '../../errors.js';
import { sqliteTicketTextMatch, textIndexCaughtUp } from '../search/sqlite.js';
import { changedContact, identifiedContact, type ApiKeyRecord, type Contact, type Organization, type Ticket, type TicketActivity, type User } from '../../domain/types.js';
import { canonicalTicket, changeEntry, creationEntry, formatTicketId } from '../../domain/ticket-rules.js';
import type { DomainEvent } from '../../domain/events.js';
import type { NewTicket, Store, TicketCommentedData, TicketEventStamp, TicketPage, TicketQuery } from './port.js';
import { placedAlready, placement } from './contact-placement.js';
import { countedFilter, pageTotal, ticketFilter, totalFilter, totalSql } from './ticket-query.js';
import { systemClock, type Clock } from '../../clock.js';
import { createMemoryFailureCounter, createSqliteAuthSessionRepo } from '../auth/index.js';
import type { SqliteDb } from '../sqlite/db.js';

const orgKey = (orgId: string, id: string) => `${orgId}/${id}`;

/**
 * The embedded store over the node's SQLite database: tickets, their outbox
 * and contacts in tables of their own; organizations, users, API keys and
 * meta in `records`. Each operation's reads and writes run in one
 * synchronous `db.run`, so check-then-write needs no locks, and a ticket and
 * its outbox event commit together.
 */
export function createSqliteStore(db: SqliteDb, clock: Clock = systemClock): Store {
  const s = (sql: string) => db.stmt(sql);
  const bump = (org: string, name: string, by: number) =>
    s('INSERT INTO ticket_counts (org, name, n) VALUES (?, ?, ?) ON CONFLICT (org, name) DO UPDATE SET n = n + excluded.n').run(org, name, by);
  const count = (org: string, name: string) => (s('SELECT n FROM ticket_counts WHERE org = ? AND name = ?').get(org, name) as { n: number } | undefined)?.n ?? 0;
  const record = (event: DomainEvent) =>
    s('INSERT INTO outbox (org, event_id, event) VALUES (?, ?, ?) ON CONFLICT (org, event_id) DO UPDATE SET event = excluded.event').run(event.organizationId, event.id, JSON.stringify(event));
  const outbox = (stamp: TicketEventStamp, ticket: Ticket) => record({ ...stamp, organizationId: ticket.organizationId, data: ticket });
  const writeActivity = (entry: TicketActivity) =>
    s('INSERT INTO ticket_activity (org, ticket_id, body) VALUES (?, ?, ?)').run(entry.organizationId, entry.ticketId, JSON.stringify(entry));
  const ticketRow = (org: string, ticketId: string) =>
    s('SELECT seq, body FROM tickets WHERE org = ? AND ticket_id = ?').get(org, ticketId) as { seq: number; body: string } | undefined;
  const writeTicket = (seq: number, t: Ticket) =>
    s('INSERT OR REPLACE INTO tickets (org, seq, ticket_id, status, priority, assignee_id, audience_id, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      t.organizationId,
      seq,
      t.ticketId,
      t.status,
      t.priority,
      t.assigneeId,
      t.audienceId,
      JSON.stringify(t),
    );
  /** Inserts a new ticket with the next sequence of its organization, and its event. Inside a `run`. */
  const insertTicket = (ticket: NewTicket, event: TicketEventStamp): Ticket => {
    const last = s('SELECT MAX(seq) AS seq FROM tickets WHERE org = ?').get(ticket.organizationId) as { seq: number | null };
    // The sequence never goes back, even if the newest ticket were removed: a meta record keeps the high mark.
    const mark = Number(db.get<number>('ticketSeq', ticket.organizationId) ?? 0);
    const seq = Math.max(last.seq ?? 0, mark) + 1;
    const full = canonicalTicket({ ...ticket, ticketId: formatTicketId(new Date(ticket.createdAt), seq) });
    writeTicket(seq, full);
    db.apply([{ coll: 'ticketSeq', key: ticket.organizationId, value: seq }]);
    bump(full.organizationId, 'all', 1);
    bump(full.organizationId, `s:${full.status}`, 1);
    outbox(event, full);
    writeActivity(creationEntry(full, randomUUID()));
    return full;
  };
  const contactOf = (org: string, aeid: string) => {
    const row = s('SELECT body FROM contacts WHERE org = ? AND audience_external_id = ?').get(org, aeid) as { body: string } | undefined;
    return row === undefined ? null : (JSON.parse(row.body) as Contact);
  };

  const canonicalOf = (org: string, id: string) => (s('SELECT canonical FROM contact_ids WHERE org = ? AND id = ?').get(org, id) as { canonical: string } | undefined)?.canonical;
  /** The canonical ids of the given ids (or undefined where unknown), in one read. */
  const canonicalsOf = (org: string, ids: readonly string[]) => {
    const rows = s(`SELECT id, canonical FROM contact_ids WHERE org = ? AND id IN (${ids.map(() => '?').join(', ')})`).all(org, ...ids) as { id: string; canonical: string }[];
    const by = new Map(rows.map((r) => [r.id, r.canonical]));
    return ids.map((id) => by.get(id));
  };

  return {
    kind: 'embedded',
    organizations: {
      async create(org: Organization) {
        await db.put('orgs', org.id, org);
      },
      async get(id) {
        return db.get<Organization>('orgs', id) ?? null;
      },
      async list() {
        return db.values<Organization>('orgs').sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      },
    },
    users: {
      async create(user: User) {
        const emailKey = orgKey(user.organizationId, user.email.toLowerCase());
        await db.run(() => {
          if (db.has('userEmails', emailKey)) throw conflict('email_taken', 'a user with this email exists in the organization');
          db.apply([
            { coll: 'users', key: orgKey(user.organizationId, user.id), value: user },
            { coll: 'userEmails', key: emailKey, value: user.id },
          ]);
        });
      },
      async get(organizationId, id) {
        return db.get<User>('users', orgKey(organizationId, id)) ?? null;
      },
      async list(organizationId) {
        return db.valuesWithPrefix<User>('users', `${organizationId}/`).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
      },
      async update(organizationId, id, change) {
        const key = orgKey(organizationId, id);
        return db.run(() => {
          const current = db.get<User>('users', key);
          if (!current) return null;
          const next = { ...change(current), id: current.id, organizationId: current.organizationId, email: current.email };
          db.apply([{ coll: 'users', key, value: next }]);
          return next;
        });
      },
      async findByEmail(email) {
        const wanted = email.toLowerCase();
        return db.values<User>('users').filter((u) => u.email === wanted);
      },
    },
    apiKeys: {
      async create(key: ApiKeyRecord) {
        await db.write([
          { coll: 'apiKeys', key: key.hash, value: key },
          { coll: 'apiKeyIds', key: orgKey(key.organizationId, key.id), value: key.hash },
        ]);
      },
      async getByHash(hash) {
        return db.get<ApiKeyRecord>('apiKeys', hash) ?? null;
      },
      async list(organizationId) {
        const hashes = db.valuesWithPrefix<string>('apiKeyIds', `${organizationId}/`);
        return hashes
          .map((h) => db.get<ApiKeyRecord>('apiKeys', h))
          .filter((k): k is ApiKeyRecord => k !== undefined)
          .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      },
      async revoke(organizationId, id, at) {
        return db.run(() => {
          const hash = db.get<string>('apiKeyIds', orgKey(organizationId, id));
          const rec = hash === undefined ? undefined : db.get<ApiKeyRecord>('apiKeys', hash);
          if (hash === undefined || rec === undefined) return null;
          const next = { ...rec, revokedAt: rec.revokedAt ?? at };
          db.apply([{ coll: 'apiKeys', key: hash, value: next }]);
          return next;
        });
      },
      async touch(hash, at) {
        await db.run(() => {
          const rec = db.get<ApiKeyRecord>('apiKeys', hash);
          if (rec) db.apply([{ coll: 'apiKeys', key: hash, value: { ...rec, lastUsedAt: at } }]);
        });
      },
    },
    contacts: {
      async upsert(contact: Contact) {
        const existing = contactOf(contact.organizationId, contact.audienceExternalId);
        if (existing) return existing;
        return db.run(() => {
          const again = contactOf(contact.organizationId, contact.audienceExternalId);
          if (again) return again;
          s('INSERT INTO contacts (org, audience_external_id, id, body) VALUES (?, ?, ?, ?)').run(contact.organizationId, contact.audienceExternalId, contact.id, JSON.stringify(contact));
          return contact;
        });
      },
      async get(organizationId, audienceExternalId) {
        const found = contactOf(organizationId, audienceExternalId);
        if (found !== null) return found.mergedInto === undefined ? found : contactOf(organizationId, found.mergedInto);
        const canonical = canonicalOf(organizationId, audienceExternalId);
        return canonical === undefined || canonical === audienceExternalId ? null : contactOf(organizationId, canonical);
      },
      async resolve(organizationId, audienceExternalId) {
        return canonicalOf(organizationId, audienceExternalId) ?? audienceExternalId;
      },
      async identify(organizationId, ids) {
        const already = placedAlready(canonicalsOf(organizationId, ids));
        if (already !== undefined) return { canonical: already, conflicting: [] };
        return db.run(() => {
          // Again inside the write: what another turn linked meanwhile counts. A contact from before ids
          // were linked is known by its own id.
          const { canonical, conflicting, link } = placement(ids, canonicalsOf(organizationId, ids), (id) => contactOf(organizationId, id) !== null);
          for (const id of link) s('INSERT INTO contact_ids (org, id, canonical) VALUES (?, ?, ?)').run(organizationId, id, canonical);
          return { canonical, conflicting };
        });
      },
      async noteIdentity(organizationId, audienceExternalId, identity, name) {
        return db.run(() => {
          const existing = contactOf(organizationId, audienceExternalId);
          if (!existing) return null;
          let next = identifiedContact(existing, identity);
          if (name !== null && (existing.name === null || existing.name === undefined)) next = { ...next, name };
          const body = JSON.stringify(next);
          if (body !== JSON.stringify(existing)) s('UPDATE contacts SET body = ? WHERE org = ? AND audience_external_id = ?').run(body, organizationId, audienceExternalId);
          return next;
        });
      },
      async merge(organizationId, winner, loser) {
        if (winner === loser) return false;
        return db.run(() => {
          const loserRow = canonicalOf(organizationId, loser);
          if (loserRow === winner) return false;
          s('UPDATE contact_ids SET canonical = ? WHERE org = ? AND canonical = ?').run(winner, organizationId, loser);
          s('INSERT INTO contact_ids (org, id, canonical) VALUES (?, ?, ?) ON CONFLICT (org, id) DO UPDATE SET canonical = excluded.canonical').run(organizationId, loser, winner);
          const c = contactOf(organizationId, loser);
          if (c !== null) s('UPDATE contacts SET body = ? WHERE org = ? AND audience_external_id = ?').run(JSON.stringify({ ...c, mergedInto: winner }), organizationId, loser);
          return true;
        });
      },
      async aliasesOf(organizationId, canonical) {
        return (s('SELECT id FROM contact_ids WHERE org = ? AND canonical = ? ORDER BY id').all(organizationId, canonical) as { id: string }[]).map((r) => r.id);
      },
      async setNameIfMissing(organizationId, audienceExternalId, name) {
        return db.run(() => {
          const existing = contactOf(organizationId, audienceExternalId);
          if (!existing || (existing.name !== null && existing.name !== undefined)) return existing;
          const named = { ...existing, name };
          s('UPDATE contacts SET body = ? WHERE org = ? AND audience_external_id = ?').run(JSON.stringify(named), organizationId, audienceExternalId);
          return named;
        });
      },
      async getById(organizationId, id) {
        const row = s('SELECT body FROM contacts WHERE org = ? AND id = ?').get(organizationId, id) as { body: string } | undefined;
        return row === undefined ? null : (JSON.parse(row.body) as Contact);
      },
      async update(organizationId, id, change) {
        return db.run(() => {
          const row = s('SELECT body FROM contacts WHERE org = ? AND id = ?').get(organizationId, id) as { body: string } | undefined;
          if (row === undefined) return null;
          const next = changedContact(JSON.parse(row.body) as Contact, change);
          s('UPDATE contacts SET body = ? WHERE org = ? AND id = ?').run(JSON.stringify(next), organizationId, id);
          return next;
        });
      },
      async list(organizationId) {
        return (s('SELECT body FROM contacts WHERE org = ?').all(organizationId) as { body: string }[]).map((r) => JSON.parse(r.body) as Contact).filter((c) => c.mergedInto === undefined);
      },
    },
    tickets: {
      async create(ticket: NewTicket, event) {
        return db.run(() => insertTicket(ticket, event));
      },
      async createOnce(ticket: NewTicket, event, idem) {
        return db.run(() => {
          const now = Date.now();
          const org = ticket.organizationId;
          const prev = s('SELECT fingerprint, ticket_id AS ticketId, expires_at AS expiresAt FROM ticket_idempotency WHERE org = ? AND key = ?').get(org, idem.key) as
            | { fingerprint: string; ticketId: string; expiresAt: number }
            | undefined;
          if (prev !== undefined && prev.expiresAt > now) {
            if (prev.fingerprint !== idem.fingerprint) return { outcome: 'reused' as const };
            const row = ticketRow(org, prev.ticketId)!;
            return { outcome: 'replayed' as const, ticket: canonicalTicket(JSON.parse(row.body) as Ticket) };
          }
          const full = insertTicket(ticket, event);
          s('INSERT OR REPLACE INTO ticket_idempotency (org, key, fingerprint, ticket_id, expires_at) VALUES (?, ?, ?, ?, ?)').run(org, idem.key, idem.fingerprint, full.ticketId, now + idem.ttlMs);
          // Expired records leave as new ones arrive, so the table stays bounded by the TTL.
          s('DELETE FROM ticket_idempotency WHERE (org, key) IN (SELECT org, key FROM ticket_idempotency WHERE expires_at <= ? LIMIT 100)').run(now);
          return { outcome: 'created' as const, ticket: full };
        });
      },
      async get(organizationId, ticketId) {
        const row = ticketRow(organizationId, ticketId);
        return row ? canonicalTicket(JSON.parse(row.body) as Ticket) : null;
      },
      async update(organizationId, ticketId, change, event, actor = null) {
        return db.run(() => {
          const row = ticketRow(organizationId, ticketId);
          if (!row) return null;
          const current = canonicalTicket(JSON.parse(row.body) as Ticket);
          const next = change(current);
          if (next === null) return null;
          const stored = canonicalTicket(next);
          writeTicket(row.seq, stored);
          if (stored.status !== current.status) {
            bump(organizationId, `s:${current.status}`, -1);
            bump(organizationId, `s:${stored.status}`, 1);
          }
          outbox(event, stored);
          const entry = changeEntry(current, stored, actor, randomUUID());
          if (entry !== null) writeActivity(entry);
          return next;
        });
      },
      async comment(organizationId, ticketId, c, eventId, visible) {
        return db.run(() => {
          const row = ticketRow(organizationId, ticketId);
          if (!row) return null;
          const ticket = canonicalTicket(JSON.parse(row.body) as Ticket);
          if (!visible(ticket)) return null;
          const entry: TicketActivity = { id: c.id, ticketId: ticket.ticketId, organizationId, kind: 'comment', actor: c.actor, at: c.at, text: c.text };
          writeActivity(entry);
          record({ id: eventId, type: 'ticket.commented', organizationId, createdAt: c.at, data: { comment: entry, ticket } satisfies TicketCommentedData });
          return { ticket, entry };
        });
      },
      async activity(organizationId, ticketId, after, limit) {
        const rows = s('SELECT seq, body FROM ticket_activity WHERE org = ? AND ticket_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(organizationId, ticketId, after, limit + 1) as {
          seq: number;
          body: string;
        }[];
        const page = rows.slice(0, limit);
        return { entries: page.map((r) => JSON.parse(r.body) as TicketActivity), next: rows.length > limit ? page.at(-1)!.seq : null };
      },
      async list(q: TicketQuery): Promise<TicketPage> {
        if (q.text !== undefined) await textIndexCaughtUp(db);
        const filter = ticketFilter(q, sqliteTicketTextMatch);
        const all = totalFilter(q, sqliteTicketTextMatch);
        if (filter === null || all === null) return { tickets: [], total: 0, totalRelation: 'eq', next: null };
        const { where, args } = filter;
        const rows = s(`SELECT seq, body FROM tickets WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ? OFFSET ?`).all(...args, q.limit, q.before === undefined ? q.offset : 0) as {
          seq: number;
          body: string;
        }[];
        const n = countedFilter(q, all.where) ? count(q.organizationId, q.status === undefined ? 'all' : `s:${q.status}`) : (s(totalSql(q, all.where)).get(...all.args) as { n: number }).n;
        return { tickets: rows.map((r) => canonicalTicket(JSON.parse(r.body) as Ticket)), ...pageTotal(q, n), next: rows.length === q.limit ? rows.at(-1)!.seq : null };
      },
    },
    // Entries keep the order of the changes (the autoincrement id).
    outbox: {
      async pendingOrganizations() {
        return (s('SELECT DISTINCT org FROM outbox').all() as { org: string }[]).map((r) => r.org);
      },
      async peek(organizationId, limit) {
        const rows = s('SELECT event FROM outbox WHERE org = ? ORDER BY id LIMIT ?').all(organizationId, limit) as { event: string }[];
        return rows.map((r) => {
          const event = JSON.parse(r.event) as DomainEvent;
          return { event, handle: event.id };
        });
      },
      async remove(organizationId, handles) {
        if (handles.length === 0) return;
        await db.run(() => {
          const del = s('DELETE FROM outbox WHERE org = ? AND event_id = ?');
          for (const h of handles) del.run(organizationId, h);
        });
      },
      // One process owns the embedded database: its relay is the only one.
      async claim() {
        return true;
      },
      async release() {},
    },
    sessions: createSqliteAuthSessionRepo(db, clock),
    authFailures: createMemoryFailureCounter(clock),
    meta: {
      async get(key) {
        return db.get<string>('meta', key) ?? null;
      },
      async setIfAbsent(key, value) {
        return db.run(() => {
          if (db.has('meta', key)) return false;
          db.apply([{ coll: 'meta', key, value }]);
          return true;
        });
      },
      async set(key, value) {
        await db.put('meta', key, value);
      },
    },
    async isEmpty() {
      return s("SELECT 1 FROM records WHERE coll IN ('orgs', 'meta') LIMIT 1").get() === undefined && s('SELECT 1 FROM tickets LIMIT 1').get() === undefined;
    },
    async ping() {
      db.assertHealthy();
    },
    async close() {
      await db.close();
    },
  };
}
