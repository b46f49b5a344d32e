import { conflict } from '../errors.js';
import type { ApiKeyRecord, Contact, Organization, Ticket, User } from '../domain/types.js';
import { canonicalTicket, formatTicketId } from '../domain/ticket-rules.js';
import type { EmbeddedDb } from './embedded-db.js';
import type { NewTicket, Store, TicketPage, TicketQuery } from './types.js';

const orgKey = (orgId: string, id: string) => `${orgId}/${id}`;

/**
 * The embedded store: everything in memory, every acknowledged write durable
 * in the EmbeddedDb log. Single process, so read-modify-write sequences run
 * without awaiting in between and need no locks.
 */
export function createEmbeddedStore(db: EmbeddedDb): Store {
  // Tickets per organization in creation order, rebuilt from the db at start.
  const ticketOrder = new Map<string, string[]>();
  for (const t of db.values<Ticket & { seq: number }>('tickets')) {
    const list = ticketOrder.get(t.organizationId) ?? [];
    list.push(t.ticketId);
    ticketOrder.set(t.organizationId, list);
  }
  for (const [org, list] of ticketOrder) {
    list.sort((a, b) => seqOf(db, org, a) - seqOf(db, org, b));
  }

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
        return [...db.values<Organization>('orgs')].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      },
    },
    users: {
      async create(user: User) {
        const emailKey = orgKey(user.organizationId, user.email.toLowerCase());
        if (db.has('userEmails', emailKey)) throw conflict('email_taken', 'a user with this email exists in the organization');
        await db.write([
          { coll: 'users', key: orgKey(user.organizationId, user.id), value: user },
          { coll: 'userEmails', key: emailKey, value: user.id },
        ]);
      },
      async get(organizationId, id) {
        return db.get<User>('users', orgKey(organizationId, id)) ?? null;
      },
      async list(organizationId) {
        return [...db.values<User>('users')].filter((u) => u.organizationId === organizationId);
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
        return [...db.values<ApiKeyRecord>('apiKeys')]
          .filter((k) => k.organizationId === organizationId)
          .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      },
      async revoke(organizationId, id, at) {
        const hash = db.get<string>('apiKeyIds', orgKey(organizationId, id));
        const rec = hash === undefined ? undefined : db.get<ApiKeyRecord>('apiKeys', hash);
        if (hash === undefined || rec === undefined) return null;
        const next = { ...rec, revokedAt: rec.revokedAt ?? at };
        await db.put('apiKeys', hash, next);
        return next;
      },
      async touch(hash, at) {
        const rec = db.get<ApiKeyRecord>('apiKeys', hash);
        if (rec) await db.put('apiKeys', hash, { ...rec, lastUsedAt: at });
      },
    },
    contacts: {
      async upsert(contact: Contact) {
        const key = orgKey(contact.organizationId, contact.audienceExternalId);
        const existing = db.get<Contact>('contacts', key);
        if (existing) return existing;
        await db.write([
          { coll: 'contacts', key, value: contact },
          { coll: 'contactIds', key: orgKey(contact.organizationId, contact.id), value: contact.audienceExternalId },
        ]);
        return contact;
      },
      async get(organizationId, audienceExternalId) {
        return db.get<Contact>('contacts', orgKey(organizationId, audienceExternalId)) ?? null;
      },
      async getById(organizationId, id) {
        const aeid = db.get<string>('contactIds', orgKey(organizationId, id));
        return aeid === undefined ? null : (db.get<Contact>('contacts', orgKey(organizationId, aeid)) ?? null);
      },
      async list(organizationId) {
        return [...db.values<Contact>('contacts')].filter((c) => c.organizationId === organizationId);
      },
    },
    tickets: {
      async create(ticket: NewTicket) {
        const seq = (db.get<number>('ticketSeq', ticket.organizationId) ?? 0) + 1;
        const full = canonicalTicket({ ...ticket, ticketId: formatTicketId(new Date(ticket.createdAt), seq) });
        const list = ticketOrder.get(ticket.organizationId) ?? [];
        list.push(full.ticketId);
        ticketOrder.set(ticket.organizationId, list);
        await db.write([
          { coll: 'ticketSeq', key: ticket.organizationId, value: seq },
          { coll: 'tickets', key: orgKey(ticket.organizationId, full.ticketId), value: { ...full, seq } },
        ]);
        return full;
      },
      async get(organizationId, ticketId) {
        const t = db.get<Ticket & { seq: number }>('tickets', orgKey(organizationId, ticketId));
        return t ? stripSeq(t) : null;
      },
      async update(organizationId, ticketId, change) {
        const key = orgKey(organizationId, ticketId);
        const current = db.get<Ticket & { seq: number }>('tickets', key);
        if (!current) return null;
        const next = change(stripSeq(current));
        if (next === null) return null;
        await db.put('tickets', key, { ...next, seq: current.seq });
        return next;
      },
      async list(q: TicketQuery): Promise<TicketPage> {
        const ids = ticketOrder.get(q.organizationId) ?? [];
        const matches: Ticket[] = [];
        for (let i = ids.length - 1; i >= 0; i--) {
          const t = db.get<Ticket & { seq: number }>('tickets', orgKey(q.organizationId, ids[i]!));
          if (!t) continue;
          if (q.status !== undefined && t.status !== q.status) continue;
          if (q.audienceId !== undefined && t.audienceId !== q.audienceId) continue;
          if (q.visibleToAgent !== undefined && t.assigneeId !== null && t.assigneeId !== q.visibleToAgent) continue;
          matches.push(t);
        }
        return { tickets: matches.slice(q.offset, q.offset + q.limit).map(stripSeq), total: matches.length };
      },
    },
    meta: {
      async get(key) {
        return db.get<string>('meta', key) ?? null;
      },
      async setIfAbsent(key, value) {
        if (db.has('meta', key)) return false;
        await db.put('meta', key, value);
        return true;
      },
    },
    async isEmpty() {
      return db.isEmpty();
    },
    async ping() {
      // In-process: reachable while the process runs.
    },
    async close() {
      await db.close();
    },
  };
}

function seqOf(db: EmbeddedDb, org: string, ticketId: string): number {
  return db.get<{ seq: number }>('tickets', orgKey(org, ticketId))?.seq ?? 0;
}

function stripSeq(t: Ticket & { seq?: number }): Ticket {
  return canonicalTicket(t);
}
