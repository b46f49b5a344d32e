import { conflict } from '../errors.js';
import type { ApiKeyRecord, Contact, Organization, Ticket, User } from '../domain/types.js';
import { canonicalTicket, formatTicketId } from '../domain/ticket-rules.js';
import type { EmbeddedDb, WriteOp } from './embedded-db.js';
import type { DomainEvent } from '../events/types.js';
import type { NewTicket, OutboxEntry, Store, TicketEventStamp, TicketPage, TicketQuery } from './types.js';
import { systemClock, type Clock } from '../clock.js';
import { createEmbeddedAuthSessionRepo, createMemoryFailureCounter } from './auth/index.js';

const orgKey = (orgId: string, id: string) => `${orgId}/${id}`;

interface IdempotencyRecord {
  fingerprint: string;
  ticketId: string;
  expiresAt: number;
}

/** The outbox op written in the same batch as the ticket change it belongs to. */
function outboxOp(stamp: TicketEventStamp, ticket: Ticket) {
  const event: DomainEvent = { ...stamp, organizationId: ticket.organizationId, data: ticket };
  return { coll: 'outbox', key: orgKey(ticket.organizationId, stamp.id), value: event };
}

/**
 * The embedded store: everything in memory, every acknowledged write durable
 * in the EmbeddedDb log. Single process, so read-modify-write sequences run
 * without awaiting in between and need no locks.
 */
export function createEmbeddedStore(db: EmbeddedDb, clock: Clock = systemClock): Store {
  const index = new TicketIndex();
  for (const t of db.values<StoredTicket>('tickets')) index.add(t);

  // Idempotency records by expiry (the TTL is one setting, so appending keeps the order).
  const idemExpiry = [...db.entries<IdempotencyRecord>('ticketIdem')].map(([key, r]) => ({ key, expiresAt: r.expiresAt })).sort((a, b) => a.expiresAt - b.expiresAt);

  /** The ops of a new ticket: sequence, ticket and its event, one batch. Updates the index now (no await before the write). */
  const createOps = (ticket: NewTicket, event: TicketEventStamp) => {
    const seq = (db.get<number>('ticketSeq', ticket.organizationId) ?? 0) + 1;
    const full = canonicalTicket({ ...ticket, ticketId: formatTicketId(new Date(ticket.createdAt), seq) });
    index.add({ ...full, seq });
    const ops: WriteOp[] = [
      { coll: 'ticketSeq', key: ticket.organizationId, value: seq },
      { coll: 'tickets', key: orgKey(ticket.organizationId, full.ticketId), value: { ...full, seq } },
      outboxOp(event, full),
    ];
    return { ops, full };
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
      async update(organizationId, id, change) {
        const key = orgKey(organizationId, id);
        const current = db.get<User>('users', key);
        if (!current) return null;
        const next = { ...change(current), id: current.id, organizationId: current.organizationId, email: current.email };
        await db.put('users', key, next);
        return next;
      },
      async findByEmail(email) {
        const wanted = email.toLowerCase();
        return [...db.values<User>('users')].filter((u) => u.email === wanted);
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
      async setNameIfMissing(organizationId, audienceExternalId, name) {
        const key = orgKey(organizationId, audienceExternalId);
        const existing = db.get<Contact>('contacts', key);
        if (!existing || (existing.name !== null && existing.name !== undefined)) return existing ?? null;
        const named = { ...existing, name };
        await db.write([{ coll: 'contacts', key, value: named }]);
        return named;
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
      async create(ticket: NewTicket, event) {
        const { ops, full } = createOps(ticket, event);
        await db.write(ops);
        return full;
      },
      async createOnce(ticket: NewTicket, event, idem) {
        const now = Date.now();
        const idemKey = orgKey(ticket.organizationId, idem.key);
        const prev = db.get<IdempotencyRecord>('ticketIdem', idemKey);
        if (prev !== undefined && prev.expiresAt > now) {
          if (prev.fingerprint !== idem.fingerprint) return { outcome: 'reused' };
          const t = db.get<StoredTicket>('tickets', orgKey(ticket.organizationId, prev.ticketId))!;
          return { outcome: 'replayed', ticket: stripSeq(t) };
        }
        const { ops, full } = createOps(ticket, event);
        const record: IdempotencyRecord = { fingerprint: idem.fingerprint, ticketId: full.ticketId, expiresAt: now + idem.ttlMs };
        // Expired records leave in the same batch as new ones arrive, so the collection stays bounded by the TTL.
        const expired: WriteOp[] = [];
        while (idemExpiry.length > 0 && idemExpiry[0]!.expiresAt <= now && expired.length < 100) {
          const { key } = idemExpiry.shift()!;
          if ((db.get<IdempotencyRecord>('ticketIdem', key)?.expiresAt ?? Infinity) <= now) expired.push({ coll: 'ticketIdem', key, delete: true });
        }
        idemExpiry.push({ key: idemKey, expiresAt: record.expiresAt });
        await db.write([...ops, { coll: 'ticketIdem', key: idemKey, value: record }, ...expired]);
        return { outcome: 'created', ticket: full };
      },
      async get(organizationId, ticketId) {
        const t = db.get<Ticket & { seq: number }>('tickets', orgKey(organizationId, ticketId));
        return t ? stripSeq(t) : null;
      },
      async update(organizationId, ticketId, change, event) {
        const key = orgKey(organizationId, ticketId);
        const current = db.get<StoredTicket>('tickets', key);
        if (!current) return null;
        const next = change(stripSeq(current));
        if (next === null) return null;
        const stored = { ...next, seq: current.seq };
        index.move(current, stored);
        await db.write([{ coll: 'tickets', key, value: stored }, outboxOp(event, canonicalTicket(next))]);
        return next;
      },
      async list(q: TicketQuery): Promise<TicketPage> {
        const get = (seqId: SeqId) => db.get<StoredTicket>('tickets', orgKey(q.organizationId, seqId.id))!;
        // An assignee filter decides visibility by itself: unassigned and the agent's own are visible, others' are not.
        let visibleToAgent = q.visibleToAgent;
        if (q.assigneeId !== undefined && visibleToAgent !== undefined) {
          if (q.assigneeId !== null && q.assigneeId !== visibleToAgent) return { tickets: [], total: 0 };
          visibleToAgent = undefined;
        }
        const keep = (t: StoredTicket) =>
          (q.status === undefined || t.status === q.status) &&
          (q.priority === undefined || t.priority === q.priority) &&
          (q.audienceId === undefined || t.audienceId === q.audienceId) &&
          (q.assigneeId === undefined || t.assigneeId === q.assigneeId) &&
          (visibleToAgent === undefined || t.assigneeId === null || t.assigneeId === visibleToAgent);
        const candidates = [index.get(q.organizationId, 'all')];
        if (q.status !== undefined) candidates.push(index.get(q.organizationId, `s:${q.status}`));
        if (q.priority !== undefined) candidates.push(index.get(q.organizationId, `p:${q.priority}`));
        if (q.audienceId !== undefined) candidates.push(index.get(q.organizationId, `c:${q.audienceId}`));
        if (q.assigneeId !== undefined) candidates.push(index.get(q.organizationId, `a:${q.assigneeId ?? '-'}`));
        if (candidates.length <= 2 && visibleToAgent === undefined) {
          // One index is exactly the answer: slice the page out of it.
          const exact = candidates[candidates.length - 1]!;
          const end = exact.length - q.offset;
          const page = exact.slice(Math.max(0, end - q.limit), Math.max(0, end)).reverse();
          return { tickets: page.map((x) => stripSeq(get(x))), total: exact.length };
        }
        // Otherwise walk the smallest index that applies, newest first.
        const list = candidates.reduce((a, b) => (b.length < a.length ? b : a));
        let total = 0;
        const tickets: Ticket[] = [];
        for (let i = list.length - 1; i >= 0; i--) {
          const t = get(list[i]!);
          if (!keep(t)) continue;
          if (total >= q.offset && tickets.length < q.limit) tickets.push(stripSeq(t));
          total++;
        }
        return { tickets, total };
      },
    },
    // Entries are keyed `<org>/<eventId>`; the collection keeps insertion
    // order (also across a restart), which is the order of the changes.
    outbox: {
      async pendingOrganizations() {
        return [...new Set([...db.values<DomainEvent>('outbox')].map((e) => e.organizationId))];
      },
      async peek(organizationId, limit) {
        const out: OutboxEntry[] = [];
        for (const event of db.values<DomainEvent>('outbox')) {
          if (out.length >= limit) break;
          if (event.organizationId === organizationId) out.push({ event, handle: event.id });
        }
        return out;
      },
      async remove(organizationId, handles) {
        const ops = handles.filter((h) => db.has('outbox', orgKey(organizationId, h))).map((h) => ({ coll: 'outbox', key: orgKey(organizationId, h), delete: true as const }));
        if (ops.length > 0) await db.write(ops);
      },
      // One process owns the embedded database: its relay is the only one.
      async claim() {
        return true;
      },
      async release() {},
    },
    sessions: createEmbeddedAuthSessionRepo(db, clock),
    authFailures: createMemoryFailureCounter(clock),
    meta: {
      async get(key) {
        return db.get<string>('meta', key) ?? null;
      },
      async setIfAbsent(key, value) {
        if (db.has('meta', key)) return false;
        await db.put('meta', key, value);
        return true;
      },
      async set(key, value) {
        await db.put('meta', key, value);
      },
    },
    async isEmpty() {
      return db.isEmpty();
    },
    async ping() {
      // In-process, so always reachable; but not healthy after a failed log write.
      db.assertHealthy();
    },
    async close() {
      await db.close();
    },
  };
}

function stripSeq(t: Ticket & { seq?: number }): Ticket {
  return canonicalTicket(t);
}

type StoredTicket = Ticket & { seq: number };
interface SeqId {
  seq: number;
  id: string;
}

/**
 * Per-organization ticket indexes (all, by status, priority, contact and
 * assignee), each an array sorted by sequence, so listing walks only the
 * tickets that can match.
 */
class TicketIndex {
  private readonly lists = new Map<string, SeqId[]>();

  private keys(t: StoredTicket): string[] {
    const org = t.organizationId;
    const keys = [`${org}|all`, `${org}|s:${t.status}`, `${org}|p:${t.priority}`, `${org}|a:${t.assigneeId ?? '-'}`];
    if (t.audienceId !== null) keys.push(`${org}|c:${t.audienceId}`);
    return keys;
  }

  get(org: string, name: string): SeqId[] {
    return this.lists.get(`${org}|${name}`) ?? [];
  }

  add(t: StoredTicket): void {
    for (const k of this.keys(t)) {
      let list = this.lists.get(k);
      if (!list) this.lists.set(k, (list = []));
      const at = lowerBound(list, t.seq);
      if (list[at]?.seq !== t.seq) list.splice(at, 0, { seq: t.seq, id: t.ticketId });
    }
  }

  move(from: StoredTicket, to: StoredTicket): void {
    const before = this.keys(from);
    const after = this.keys(to);
    for (const k of before) {
      if (after.includes(k)) continue;
      const list = this.lists.get(k);
      if (!list) continue;
      const at = lowerBound(list, from.seq);
      if (list[at]?.seq === from.seq) list.splice(at, 1);
    }
    this.add(to);
  }
}

function lowerBound(list: SeqId[], seq: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.seq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
