import { randomUUID } from 'node:crypto';
import { placedAlready, placement } from './contact-placement.js';
import { conflict } from '../../errors.js';
import { postgresTicketTextMatch } from '../search/postgres.js';
import { changedContact, type ApiKeyRecord, type Contact, type Organization, type Ticket, type TicketActivity, type User } from '../../domain/types.js';
import { canonicalTicket, changeEntry, creationEntry, formatTicketId } from '../../domain/ticket-rules.js';
import type { DomainEvent } from '../../domain/events.js';
import type { NewTicket, Store, TicketCommentedData, TicketEventStamp, TicketPage } from './port.js';
import { countedFilter, pageTotal, ticketFilter, totalFilter, totalSql } from './ticket-query.js';
import { createRedisAuthSessionRepo, createRedisFailureCounter } from '../auth/index.js';
import { orgKeys, type RedisClient } from '../redis/client.js';
import { redisLease } from '../redis/lease.js';
import { numbered, type PgDb, type PgQueryable } from '../postgres/db.js';
import { TurnBatches } from '../turn-batches.js';

/*
 * New tickets of one organization, one element of the JSON array $2 each (`n`: its place from 1): the
 * organization's counter moved on by their number ($3, its row locked for the statement), each
 * ticket under `<prefix><sequence, at least 6 digits>` as formatTicketId writes it, the counts,
 * each one's event in the outbox and its `created` activity entry, the id set in every body.
 * Answers each one's sequence in the order asked.
 */
const INSERT_TICKETS = `
  WITH v AS (SELECT * FROM json_to_recordset($2::json)
               AS v(id_prefix text, status text, priority text, assignee_id text, audience_id text, body jsonb, event_id text, event jsonb, activity jsonb, n bigint)),
       s AS (INSERT INTO ticket_seqs (org, seq) VALUES ($1, $3::int) ON CONFLICT (org) DO UPDATE SET seq = ticket_seqs.seq + excluded.seq RETURNING seq),
       q AS (SELECT v.*, s.seq - $3::int + v.n AS seq FROM v, s),
       i AS (SELECT q.*, id_prefix || CASE WHEN length(seq::text) >= 6 THEN seq::text ELSE lpad(seq::text, 6, '0') END AS ticket_id FROM q),
       t AS (INSERT INTO tickets (org, seq, ticket_id, status, priority, assignee_id, audience_id, body)
             SELECT $1, seq, ticket_id, status, priority, assignee_id, audience_id, jsonb_set(body, '{ticketId}', to_jsonb(ticket_id)) FROM i ORDER BY n),
       c AS (INSERT INTO ticket_counts (org, name, n)
             SELECT $1, name, count(*) FROM (SELECT 'all' AS name FROM v UNION ALL SELECT 's:' || status FROM v) names GROUP BY name ORDER BY name
             ON CONFLICT (org, name) DO UPDATE SET n = ticket_counts.n + excluded.n),
       o AS (INSERT INTO outbox (org, event_id, event) SELECT $1, event_id, jsonb_set(event, '{data,ticketId}', to_jsonb(ticket_id)) FROM i ORDER BY n
             ON CONFLICT (org, event_id) DO UPDATE SET event = excluded.event),
       a AS (INSERT INTO ticket_activity (org, ticket_id, body) SELECT $1, ticket_id, jsonb_set(activity, '{ticketId}', to_jsonb(ticket_id)) FROM i ORDER BY n)
  SELECT seq FROM i ORDER BY n`;

/** Most tickets one statement creates. */
const MAX_CREATE_BATCH = 100;

/** A ticket to create with its event, as one row of INSERT_TICKETS. */
interface TicketInsert {
  ticket: NewTicket;
  event: TicketEventStamp;
}

export interface PostgresStoreOptions {
  /** Key prefix of what stays in Redis (sign-in sessions, failed-auth counters, the outbox relay's leases). */
  prefix: string;
}

/**
 * The clustered store: the organization's records in PostgreSQL, each
 * change in one transaction (a ticket, its counts and its outbox event
 * commit together); what is bounded or expires in Redis (sign-in sessions,
 * failed-authentication counters, the relay's lease per organization).
 */
export function createPostgresStore(db: PgDb, redis: RedisClient, opts: PostgresStoreOptions): Store {
  const { prefix } = opts;
  const q = (c: PgQueryable, sql: string, args: unknown[] = []) => c.query(numbered(sql), args);
  const bump = (c: PgQueryable, org: string, name: string, by: number) =>
    q(c, 'INSERT INTO ticket_counts (org, name, n) VALUES (?, ?, ?) ON CONFLICT (org, name) DO UPDATE SET n = ticket_counts.n + excluded.n', [org, name, by]);
  const record = (c: PgQueryable, event: DomainEvent) =>
    q(c, 'INSERT INTO outbox (org, event_id, event) VALUES (?, ?, ?) ON CONFLICT (org, event_id) DO UPDATE SET event = excluded.event', [event.organizationId, event.id, JSON.stringify(event)]);
  const outbox = (c: PgQueryable, stamp: TicketEventStamp, ticket: Ticket) => record(c, { ...stamp, organizationId: ticket.organizationId, data: ticket });
  const writeActivity = (c: PgQueryable, entry: TicketActivity) =>
    q(c, 'INSERT INTO ticket_activity (org, ticket_id, body) VALUES (?, ?, ?)', [entry.organizationId, entry.ticketId, JSON.stringify(entry)]);
  const writeTicket = (c: PgQueryable, seq: number, t: Ticket) =>
    q(
      c,
      `INSERT INTO tickets (org, seq, ticket_id, status, priority, assignee_id, audience_id, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (org, seq) DO UPDATE SET status = excluded.status, priority = excluded.priority, assignee_id = excluded.assignee_id, audience_id = excluded.audience_id, body = excluded.body`,
      [t.organizationId, seq, t.ticketId, t.status, t.priority, t.assigneeId, t.audienceId, JSON.stringify(t)],
    );
  /**
   * Inserts new tickets of one organization with its next sequences, their
   * counts and their events, in one statement (one round trip; atomic on its
   * own, or part of the caller's transaction). The counter's row lock orders
   * concurrent creates, and is held only for the statement.
   */
  const insertTickets = async (c: PgQueryable, org: string, items: readonly TicketInsert[]): Promise<Ticket[]> => {
    const drafts = items.map(({ ticket }) => canonicalTicket({ ...ticket, ticketId: '' }));
    const rows = items.map(({ ticket, event }, i) => {
      const d = drafts[i]!;
      return {
        n: i + 1,
        id_prefix: formatTicketId(new Date(ticket.createdAt), 0).slice(0, -6),
        status: d.status,
        priority: d.priority,
        assignee_id: d.assigneeId,
        audience_id: d.audienceId,
        body: d,
        event_id: event.id,
        event: { ...event, organizationId: org, data: d } satisfies DomainEvent,
        activity: creationEntry(d, randomUUID()),
      };
    });
    const r = await c.query<{ seq: string }>(INSERT_TICKETS, [org, JSON.stringify(rows), items.length]);
    return drafts.map((d, i) => ({ ...d, ticketId: formatTicketId(new Date(d.createdAt), Number(r.rows[i]!.seq)) }));
  };
  // Creates asked in one turn go in one statement per organization: one round trip and one commit
  // for them all, where each would have been its own.
  const creates = new TurnBatches<string, TicketInsert, Ticket>({
    key: (org) => org,
    send: (org, items) => insertTickets(db, org, items),
    maxSize: MAX_CREATE_BATCH,
  });
  const ticketOf = async (c: PgQueryable, org: string, ticketId: string, lock = false) => {
    const r = await q(c, `SELECT seq, body FROM tickets WHERE org = ? AND ticket_id = ?${lock ? ' FOR UPDATE' : ''}`, [org, ticketId]);
    const row = r.rows[0] as { seq: string; body: Ticket } | undefined;
    return row === undefined ? undefined : { seq: Number(row.seq), ticket: canonicalTicket(row.body) };
  };
  const contactOf = async (org: string, aeid: string) => {
    const rows = await db.rows<{ body: Contact }>('SELECT body FROM contacts WHERE org = $1 AND audience_external_id = $2', [org, aeid]);
    return rows[0]?.body ?? null;
  };
  const leaseKey = (org: string) => orgKeys(prefix, org)('outbox-lease');

  return {
    kind: 'postgres',
    organizations: {
      async create(org: Organization) {
        await db.query('INSERT INTO organizations (id, created_at, body) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET body = excluded.body', [org.id, org.createdAt, JSON.stringify(org)]);
      },
      async get(id) {
        return (await db.rows<{ body: Organization }>('SELECT body FROM organizations WHERE id = $1', [id]))[0]?.body ?? null;
      },
      async list() {
        return (await db.rows<{ body: Organization }>('SELECT body FROM organizations ORDER BY created_at, id')).map((r) => r.body);
      },
    },
    users: {
      async create(user: User) {
        const r = await db.query('INSERT INTO users (org, id, email, created_at, body) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING', [
          user.organizationId,
          user.id,
          user.email.toLowerCase(),
          user.createdAt,
          JSON.stringify(user),
        ]);
        if (r.rowCount !== 1) throw conflict('email_taken', 'a user with this email exists in the organization');
      },
      async get(organizationId, id) {
        return (await db.rows<{ body: User }>('SELECT body FROM users WHERE org = $1 AND id = $2', [organizationId, id]))[0]?.body ?? null;
      },
      async list(organizationId) {
        return (await db.rows<{ body: User }>('SELECT body FROM users WHERE org = $1 ORDER BY created_at, id', [organizationId])).map((r) => r.body);
      },
      async update(organizationId, id, change) {
        return db.tx(async (c) => {
          const r = await c.query<{ body: User }>('SELECT body FROM users WHERE org = $1 AND id = $2 FOR UPDATE', [organizationId, id]);
          const current = r.rows[0]?.body;
          if (current === undefined) return null;
          const next = { ...change(current), id: current.id, organizationId: current.organizationId, email: current.email };
          await c.query('UPDATE users SET body = $3 WHERE org = $1 AND id = $2', [organizationId, id, JSON.stringify(next)]);
          return next;
        });
      },
      async findByEmail(email) {
        return (await db.rows<{ body: User }>('SELECT body FROM users WHERE email = $1 ORDER BY created_at, org', [email.toLowerCase()])).map((r) => r.body);
      },
    },
    apiKeys: {
      async create(key: ApiKeyRecord) {
        await db.query('INSERT INTO api_keys (hash, org, id, created_at, body) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (hash) DO UPDATE SET body = excluded.body', [
          key.hash,
          key.organizationId,
          key.id,
          key.createdAt,
          JSON.stringify(key),
        ]);
      },
      async getByHash(hash) {
        return (await db.rows<{ body: ApiKeyRecord }>('SELECT body FROM api_keys WHERE hash = $1', [hash]))[0]?.body ?? null;
      },
      async list(organizationId) {
        return (await db.rows<{ body: ApiKeyRecord }>('SELECT body FROM api_keys WHERE org = $1 ORDER BY created_at, id', [organizationId])).map((r) => r.body);
      },
      async revoke(organizationId, id, at) {
        // The first revocation's time stays.
        const rows = await db.rows<{ body: ApiKeyRecord }>(
          `UPDATE api_keys SET body = CASE WHEN body->'revokedAt' IS NULL OR body->'revokedAt' = 'null'::jsonb THEN jsonb_set(body, '{revokedAt}', to_jsonb($3::text)) ELSE body END
           WHERE org = $1 AND id = $2 RETURNING body`,
          [organizationId, id, at],
        );
        return rows[0]?.body ?? null;
      },
      async touch(hash, at) {
        await db.query("UPDATE api_keys SET body = jsonb_set(body, '{lastUsedAt}', to_jsonb($2::text)) WHERE hash = $1", [hash, at]);
      },
    },
    contacts: {
      async upsert(contact: Contact) {
        const rows = await db.rows<{ body: Contact }>(
          `WITH ins AS (
             INSERT INTO contacts (org, audience_external_id, id, body) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING body
           )
           SELECT body FROM ins UNION ALL SELECT body FROM contacts WHERE org = $1 AND audience_external_id = $2 LIMIT 1`,
          [contact.organizationId, contact.audienceExternalId, contact.id, JSON.stringify(contact)],
        );
        // A concurrent insert of the same contact that this statement's snapshot did not see: read it now.
        return rows[0]?.body ?? (await contactOf(contact.organizationId, contact.audienceExternalId)) ?? contact;
      },
      async get(organizationId, audienceExternalId) {
        const rows = await db.rows<{ body: Contact }>(
          `SELECT body FROM contacts WHERE org = $1 AND audience_external_id = coalesce((SELECT canonical FROM contact_ids WHERE org = $1 AND id = $2), $2)`,
          [organizationId, audienceExternalId],
        );
        const found = rows[0]?.body ?? null;
        return found?.mergedInto === undefined ? found : contactOf(organizationId, found.mergedInto);
      },
      async resolve(organizationId, audienceExternalId) {
        const rows = await db.rows<{ canonical: string }>('SELECT canonical FROM contact_ids WHERE org = $1 AND id = $2', [organizationId, audienceExternalId]);
        return rows[0]?.canonical ?? audienceExternalId;
      },
      async identify(organizationId, ids) {
        const read = async (q: PgQueryable) => {
          const { rows } = await q.query<{ id: string; canonical: string }>('SELECT id, canonical FROM contact_ids WHERE org = $1 AND id = ANY($2::text[])', [organizationId, ids]);
          const by = new Map(rows.map((r) => [r.id, r.canonical]));
          return ids.map((id) => by.get(id));
        };
        const already = placedAlready(await read(db));
        if (already !== undefined) return { canonical: already, conflicting: [] };
        return db.tx(async (c) => {
          // One person's ids are linked one turn at a time on every node: each id's lock, in one order.
          for (const id of [...ids].sort()) await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7))', [`${organizationId}/${id}`]);
          const rows = await read(c);
          const unknown = ids.filter((_, i) => rows[i] === undefined);
          const { rows: legacy } =
            unknown.length === 0
              ? { rows: [] as { audience_external_id: string }[] }
              : await c.query<{ audience_external_id: string }>('SELECT audience_external_id FROM contacts WHERE org = $1 AND audience_external_id = ANY($2::text[])', [organizationId, unknown]);
          const contacts = new Set(legacy.map((r) => r.audience_external_id));
          const { canonical, conflicting, link } = placement(ids, rows, (id) => contacts.has(id));
          if (link.length > 0) {
            await c.query('INSERT INTO contact_ids (org, id, canonical) SELECT $1, unnest($2::text[]), $3 ON CONFLICT DO NOTHING', [organizationId, link, canonical]);
          }
          return { canonical, conflicting };
        });
      },
      async noteIdentity(organizationId, audienceExternalId, identity, name) {
        const patch: Record<string, string> = {};
        for (const k of ['phone', 'userId', 'parentUserId', 'username'] as const) if (identity[k] !== undefined) patch[k] = identity[k];
        // Written only when something differs: a customer's every message names them again.
        const rows = await db.rows<{ body: Contact }>(
          `UPDATE contacts SET body = CASE WHEN $4::text IS NOT NULL AND (body->'name' IS NULL OR body->'name' = 'null'::jsonb) THEN jsonb_set(body || $3::jsonb, '{name}', to_jsonb($4::text)) ELSE body || $3::jsonb END
           WHERE org = $1 AND audience_external_id = $2
             AND (NOT body @> $3::jsonb OR ($4::text IS NOT NULL AND (body->'name' IS NULL OR body->'name' = 'null'::jsonb)))
           RETURNING body`,
          [organizationId, audienceExternalId, JSON.stringify(patch), name],
        );
        return rows[0]?.body ?? contactOf(organizationId, audienceExternalId);
      },
      async merge(organizationId, winner, loser) {
        if (winner === loser) return false;
        return db.tx(async (c) => {
          for (const id of [winner, loser].sort()) await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7))', [`${organizationId}/${id}`]);
          const { rows } = await c.query<{ canonical: string }>('SELECT canonical FROM contact_ids WHERE org = $1 AND id = $2', [organizationId, loser]);
          if (rows[0]?.canonical === winner) return false;
          await c.query('UPDATE contact_ids SET canonical = $2 WHERE org = $1 AND canonical = $3', [organizationId, winner, loser]);
          await c.query('INSERT INTO contact_ids (org, id, canonical) VALUES ($1, $2, $3) ON CONFLICT (org, id) DO UPDATE SET canonical = excluded.canonical', [organizationId, loser, winner]);
          await c.query(`UPDATE contacts SET body = body || jsonb_build_object('mergedInto', $3::text) WHERE org = $1 AND audience_external_id = $2`, [organizationId, loser, winner]);
          return true;
        });
      },
      async aliasesOf(organizationId, canonical) {
        return (await db.rows<{ id: string }>('SELECT id FROM contact_ids WHERE org = $1 AND canonical = $2 ORDER BY id', [organizationId, canonical])).map((r) => r.id);
      },
      async setNameIfMissing(organizationId, audienceExternalId, name) {
        const rows = await db.rows<{ body: Contact }>(
          `UPDATE contacts SET body = jsonb_set(body, '{name}', to_jsonb($3::text))
           WHERE org = $1 AND audience_external_id = $2 AND (body->'name' IS NULL OR body->'name' = 'null'::jsonb) RETURNING body`,
          [organizationId, audienceExternalId, name],
        );
        return rows[0]?.body ?? contactOf(organizationId, audienceExternalId);
      },
      async getById(organizationId, id) {
        return (await db.rows<{ body: Contact }>('SELECT body FROM contacts WHERE org = $1 AND id = $2', [organizationId, id]))[0]?.body ?? null;
      },
      async update(organizationId, id, change) {
        return db.tx(async (c) => {
          const { rows } = await c.query<{ body: Contact }>('SELECT body FROM contacts WHERE org = $1 AND id = $2 FOR UPDATE', [organizationId, id]);
          if (rows[0] === undefined) return null;
          const next = changedContact(rows[0].body, change);
          await c.query('UPDATE contacts SET body = $3 WHERE org = $1 AND id = $2', [organizationId, id, JSON.stringify(next)]);
          return next;
        });
      },
      async list(organizationId) {
        return (await db.rows<{ body: Contact }>("SELECT body FROM contacts WHERE org = $1 AND body->'mergedInto' IS NULL", [organizationId])).map((r) => r.body);
      },
    },
    tickets: {
      async create(ticket: NewTicket, event) {
        return creates.add(ticket.organizationId, { ticket, event });
      },
      async createOnce(ticket: NewTicket, event, idem) {
        return db.tx(async (c) => {
          const now = Date.now();
          const org = ticket.organizationId;
          // The key's row is the lock: a racing create with the same key waits here, then sees this one's record.
          await q(c, 'DELETE FROM ticket_idempotency WHERE org = ? AND key = ? AND expires_at <= ?', [org, idem.key, now]);
          const claimed = await q(c, 'INSERT INTO ticket_idempotency (org, key, fingerprint, ticket_id, expires_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [
            org,
            idem.key,
            idem.fingerprint,
            '',
            now + idem.ttlMs,
          ]);
          if (claimed.rowCount !== 1) {
            const prev = (await q(c, 'SELECT fingerprint, ticket_id FROM ticket_idempotency WHERE org = ? AND key = ?', [org, idem.key])).rows[0] as
              | { fingerprint: string; ticket_id: string }
              | undefined;
            if (prev === undefined || prev.fingerprint !== idem.fingerprint) return { outcome: 'reused' as const };
            const found = await ticketOf(c, org, prev.ticket_id);
            return { outcome: 'replayed' as const, ticket: found!.ticket };
          }
          const full = (await insertTickets(c, ticket.organizationId, [{ ticket, event }]))[0]!;
          await q(c, 'UPDATE ticket_idempotency SET ticket_id = ? WHERE org = ? AND key = ?', [full.ticketId, org, idem.key]);
          // Expired records leave as new ones arrive, so the table stays bounded by the TTL.
          await q(c, 'DELETE FROM ticket_idempotency WHERE ctid IN (SELECT ctid FROM ticket_idempotency WHERE expires_at <= ? LIMIT 100)', [now]);
          return { outcome: 'created' as const, ticket: full };
        });
      },
      async get(organizationId, ticketId) {
        return (await ticketOf(db, organizationId, ticketId))?.ticket ?? null;
      },
      async update(organizationId, ticketId, change, event, actor = null) {
        return db.tx(async (c) => {
          const found = await ticketOf(c, organizationId, ticketId, true);
          if (found === undefined) return null;
          const next = change(found.ticket);
          if (next === null) return null;
          const stored = canonicalTicket(next);
          await writeTicket(c, found.seq, stored);
          if (stored.status !== found.ticket.status) {
            await bump(c, organizationId, `s:${found.ticket.status}`, -1);
            await bump(c, organizationId, `s:${stored.status}`, 1);
          }
          await outbox(c, event, stored);
          const entry = changeEntry(found.ticket, stored, actor, randomUUID());
          if (entry !== null) await writeActivity(c, entry);
          return next;
        });
      },
      async comment(organizationId, ticketId, cm, eventId, visible) {
        // The ticket's row lock orders its activity: entries commit in the order of their seq.
        return db.tx(async (c) => {
          const found = await ticketOf(c, organizationId, ticketId, true);
          if (found === undefined || !visible(found.ticket)) return null;
          const ticket = found.ticket;
          const entry: TicketActivity = { id: cm.id, ticketId: ticket.ticketId, organizationId, kind: 'comment', actor: cm.actor, at: cm.at, text: cm.text };
          await writeActivity(c, entry);
          await record(c, { id: eventId, type: 'ticket.commented', organizationId, createdAt: cm.at, data: { comment: entry, ticket } satisfies TicketCommentedData });
          return { ticket, entry };
        });
      },
      async activity(organizationId, ticketId, after, limit) {
        const rows = await db.rows<{ seq: string; body: TicketActivity }>('SELECT seq, body FROM ticket_activity WHERE org = $1 AND ticket_id = $2 AND seq > $3 ORDER BY seq LIMIT $4', [
          organizationId,
          ticketId,
          after,
          limit + 1,
        ]);
        const page = rows.slice(0, limit);
        return { entries: page.map((r) => r.body), next: rows.length > limit ? Number(page.at(-1)!.seq) : null };
      },
      async list(query): Promise<TicketPage> {
        const filter = ticketFilter(query, postgresTicketTextMatch);
        const all = totalFilter(query, postgresTicketTextMatch);
        if (filter === null || all === null) return { tickets: [], total: 0, totalRelation: 'eq', next: null };
        const { where, args } = filter;
        const [rows, total] = await Promise.all([
          q(db, `SELECT seq, body FROM tickets WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ? OFFSET ?`, [...args, query.limit, query.before === undefined ? query.offset : 0]),
          countedFilter(query, all.where)
            ? q(db, 'SELECT n FROM ticket_counts WHERE org = ? AND name = ?', [query.organizationId, query.status === undefined ? 'all' : `s:${query.status}`])
            : q(db, totalSql(query, all.where), all.args),
        ]);
        const last = rows.rows.at(-1) as { seq: string } | undefined;
        return {
          tickets: rows.rows.map((r) => canonicalTicket(r.body as Ticket)),
          ...pageTotal(query, Number((total.rows[0] as { n?: string } | undefined)?.n ?? 0)),
          next: rows.rows.length === query.limit && last !== undefined ? Number(last.seq) : null,
        };
      },
    },
    // Entries keep the order of the changes (the serial id).
    outbox: {
      async pendingOrganizations() {
        return (await db.rows<{ org: string }>('SELECT DISTINCT org FROM outbox')).map((r) => r.org);
      },
      async peek(organizationId, limit) {
        const rows = await db.rows<{ event: DomainEvent }>('SELECT event FROM outbox WHERE org = $1 ORDER BY id LIMIT $2', [organizationId, limit]);
        return rows.map((r) => ({ event: r.event, handle: r.event.id }));
      },
      async remove(organizationId, handles) {
        if (handles.length === 0) return;
        await db.query('DELETE FROM outbox WHERE org = $1 AND event_id = ANY($2::text[])', [organizationId, handles]);
      },
      async claim(organizationId, owner, ttlMs) {
        return redisLease.claim(redis, leaseKey(organizationId), owner, ttlMs);
      },
      async release(organizationId, owner) {
        await redisLease.release(redis, leaseKey(organizationId), owner);
      },
    },
    sessions: createRedisAuthSessionRepo(redis, prefix),
    authFailures: createRedisFailureCounter(redis, prefix),
    meta: {
      async get(key) {
        return (await db.get<string>('meta', key)) ?? null;
      },
      async setIfAbsent(key, value) {
        return db.putIfAbsent('meta', key, value);
      },
      async set(key, value) {
        await db.put('meta', key, value);
      },
    },
    async isEmpty() {
      const rows = await db.rows(
        "SELECT 1 FROM organizations UNION ALL SELECT 1 FROM records WHERE coll = 'meta' UNION ALL SELECT 1 FROM tickets LIMIT 1",
      );
      return rows.length === 0;
    },
    async ping() {
      await Promise.all([db.ping(), redis.ping()]);
    },
    // The pool and the Redis client are the node's: closed by whoever opened them.
    async close() {},
  };
}
