import type { ApiKeyRecord, Contact, Organization, Ticket, User } from '../../domain/types.js';
import type { DomainEvent } from '../../domain/events.js';
import { canonicalTicket } from '../../domain/ticket-rules.js';
import { orgKeys } from '../redis/client.js';
import { scanKeys, scanValues, type RedisImportSource } from './source.js';
import type { ImportRow, ImportTable } from './table.js';

/*
 * The organization's own records as the core store kept them in Redis:
 *
 *   <p>:org:<id>                      organization JSON
 *   <p>:apikey:<sha256>               API key JSON
 *   <p>:meta:<key>                    service metadata (string)
 *   <p>:{o:<org>}:user:<id>           user JSON
 *   <p>:{o:<org>}:contact:<aeid>      contact JSON
 *   <p>:{o:<org>}:ticket:<ticketId>   ticket JSON with its seq and version
 *   <p>:{o:<org>}:ticket-seq          counter behind ticketId
 *   <p>:{o:<org>}:tix, tix:s:<status> zsets of ticketIds (all, per status): the counts
 *   <p>:{o:<org>}:ticket-idem:<key>   {f: fingerprint, t: ticketId}, expiring
 *   <p>:{o:<org>}:outbox              list of event JSON, oldest first
 *
 * The indexes (users and contact-ids hashes, the other zsets, the email
 * index) are what PostgreSQL's own indexes replace. Sign-in sessions,
 * failed-auth counters and the relay's lease stay in Redis where they are.
 */

const BATCH = 500;

/** Rows of the JSON records of one key shape, `toRow` making each (null: skipped). */
async function* jsonRows<T>(src: RedisImportSource, shape: string, toRow: (parts: string[], record: T) => ImportRow | null): AsyncIterable<ImportRow[]> {
  for await (const found of scanValues(src, shape)) {
    const rows = found.flatMap((f) => {
      const row = toRow(f.parts, JSON.parse(f.value) as T);
      return row === null ? [] : [row];
    });
    if (rows.length > 0) yield rows;
  }
}

const text = (name: string) => ({ name, type: 'text' as const });

const organizations: ImportTable = {
  name: 'organizations',
  table: 'organizations',
  columns: [text('id'), text('created_at'), { name: 'body', type: 'jsonb' }],
  key: ['id'],
  read: (src) => jsonRows<Organization>(src, 'org:*', (_, o) => ({ values: [o.id, o.createdAt, o], compare: o })),
};

const users: ImportTable = {
  name: 'users',
  table: 'users',
  columns: [text('org'), text('id'), text('email'), text('created_at'), { name: 'body', type: 'jsonb' }],
  key: ['org', 'id'],
  read: (src) =>
    jsonRows<User>(src, '{o:*}:user:*', ([org], u) => ({ values: [org, u.id, u.email.toLowerCase(), u.createdAt, u], compare: u })),
};

const apiKeys: ImportTable = {
  name: 'api_keys',
  table: 'api_keys',
  columns: [text('hash'), text('org'), text('id'), text('created_at'), { name: 'body', type: 'jsonb' }],
  key: ['hash'],
  read: (src) => jsonRows<ApiKeyRecord>(src, 'apikey:*', ([hash], k) => ({ values: [hash, k.organizationId, k.id, k.createdAt, k], compare: k })),
};

const contacts: ImportTable = {
  name: 'contacts',
  table: 'contacts',
  columns: [text('org'), text('audience_external_id'), text('id'), { name: 'body', type: 'jsonb' }],
  key: ['org', 'audience_external_id'],
  read: (src) => jsonRows<Contact>(src, '{o:*}:contact:*', ([org, aeid], c) => ({ values: [org, aeid, c.id, c], compare: c })),
};

const tickets: ImportTable = {
  name: 'tickets',
  table: 'tickets',
  columns: [
    text('org'),
    { name: 'seq', type: 'bigint' },
    text('ticket_id'),
    text('status'),
    text('priority'),
    text('assignee_id'),
    text('audience_id'),
    { name: 'body', type: 'jsonb' },
  ],
  key: ['org', 'seq'],
  // Redis kept the sequence and a version in the record; the table keeps the sequence in a column and the ticket as the API shows it.
  read: (src) =>
    jsonRows<Ticket & { seq: number }>(src, '{o:*}:ticket:*', ([org], stored) => {
      const t = canonicalTicket(stored);
      return { values: [org, stored.seq, t.ticketId, t.status, t.priority, t.assigneeId, t.audienceId, t], compare: t };
    }),
};

/** Each organization's sequence ends at least at Redis's counter and at its highest copied ticket: no new ticket reuses a number. */
const ticketSeqs: ImportTable = {
  name: 'ticket_seqs',
  table: 'ticket_seqs',
  columns: [text('org'), { name: 'seq', type: 'bigint' }],
  key: ['org'],
  compare: (a) => `jsonb_build_object('seq', ${a}.seq)`,
  changed: 't.seq < excluded.seq',
  same: (expected, actual) => Number((actual as { seq: number }).seq) >= (expected as { seq: number }).seq,
  read: (src) => jsonRows<number>(src, '{o:*}:ticket-seq', ([org], n) => ({ values: [org, n], compare: { seq: n } })),
  async derive(q) {
    const r = await q.query<{ inserted: boolean }>(
      `INSERT INTO ticket_seqs AS t (org, seq) SELECT org, max(seq) FROM tickets GROUP BY org
       ON CONFLICT (org) DO UPDATE SET seq = excluded.seq WHERE t.seq < excluded.seq RETURNING (xmax = 0) AS inserted`,
    );
    const inserted = r.rows.filter((x) => x.inserted).length;
    return { inserted, updated: r.rows.length - inserted };
  },
};

/**
 * The counts behind a ticket page's total, counted again from the copied
 * tickets (so they match them whatever changed in Redis between the reads);
 * verification compares them with the sizes of Redis's sets.
 */
const ticketCounts: ImportTable = {
  name: 'ticket_counts',
  table: 'ticket_counts',
  columns: [text('org'), text('name'), { name: 'n', type: 'bigint' }],
  key: ['org', 'name'],
  compare: (a) => `jsonb_build_object('n', ${a}.n)`,
  same: (expected, actual) => Number((actual as { n: number }).n) === (expected as { n: number }).n,
  derivedOnly: true,
  async *read(src) {
    for (const shape of ['{o:*}:tix', '{o:*}:tix:s:*']) {
      for await (const found of scanKeys(src, shape)) {
        const sizes = await Promise.all(found.map((f) => src.client.zCard(f.key)));
        yield found.map((f, i) => {
          const name = f.parts.length === 1 ? 'all' : `s:${f.parts[1]}`;
          return { values: [f.parts[0], name, sizes[i]], compare: { n: sizes[i] } };
        });
      }
    }
  },
  async derive(q) {
    const r = await q.query<{ inserted: string; updated: string }>(
      `WITH want AS (
         SELECT org, 'all' AS name, count(*) AS n FROM tickets GROUP BY org
         UNION ALL SELECT org, 's:' || status, count(*) FROM tickets GROUP BY org, status
       ), up AS (
         INSERT INTO ticket_counts AS t (org, name, n) SELECT org, name, n FROM want
         ON CONFLICT (org, name) DO UPDATE SET n = excluded.n WHERE t.n <> excluded.n
         RETURNING (xmax = 0) AS inserted
       ), emptied AS (
         UPDATE ticket_counts t SET n = 0 WHERE n <> 0 AND NOT EXISTS (SELECT 1 FROM want w WHERE w.org = t.org AND w.name = t.name) RETURNING 1
       )
       SELECT (SELECT count(*) FROM up WHERE inserted) AS inserted, (SELECT count(*) FROM up WHERE NOT inserted) + (SELECT count(*) FROM emptied) AS updated`,
    );
    return { inserted: Number(r.rows[0]!.inserted), updated: Number(r.rows[0]!.updated) };
  },
};

const ticketIdempotency: ImportTable = {
  name: 'ticket_idempotency',
  table: 'ticket_idempotency',
  columns: [text('org'), text('key'), text('fingerprint'), text('ticket_id'), { name: 'expires_at', type: 'bigint' }],
  key: ['org', 'key'],
  compare: (a) => `jsonb_build_object('fingerprint', ${a}.fingerprint, 'ticketId', ${a}.ticket_id)`,
  async *read(src) {
    for await (const found of scanValues(src, '{o:*}:ticket-idem:*')) {
      // The record keeps the rest of its time to live.
      const ttls = await Promise.all(found.map((f) => src.client.pTTL(orgKeys(src.prefix, f.parts[0]!)('ticket-idem', f.parts[1]!))));
      const now = Date.now();
      const rows = found.flatMap((f, i) => {
        const ttl = ttls[i]!;
        if (ttl === -2) return [];
        const r = JSON.parse(f.value) as { f: string; t: string };
        return [{ values: [f.parts[0], f.parts[1], r.f, r.t, now + (ttl < 0 ? 86_400_000 : ttl)], compare: { fingerprint: r.f, ticketId: r.t } }];
      });
      if (rows.length > 0) yield rows;
    }
  },
};

/** Entries the relay had not published yet, in their order; the relay removes them from Redis as it publishes them. */
const outbox: ImportTable = {
  name: 'outbox',
  table: 'outbox',
  columns: [text('org'), text('event_id'), { name: 'event', type: 'jsonb' }],
  key: ['org', 'event_id'],
  compare: (a) => `${a}.event`,
  deletable: true,
  async *read(src) {
    for await (const found of scanKeys(src, '{o:*}:outbox')) {
      for (const f of found) {
        for (let from = 0; ; from += BATCH) {
          const raws = await src.client.lRange(f.key, from, from + BATCH - 1);
          if (raws.length > 0) {
            yield raws.map((raw) => {
              const e = JSON.parse(raw) as DomainEvent;
              return { values: [f.parts[0], e.id, e], compare: e };
            });
          }
          if (raws.length < BATCH) break;
        }
      }
    }
  },
};

const meta: ImportTable = {
  name: 'records (meta)',
  table: 'records',
  columns: [text('coll'), text('key'), { name: 'value', type: 'jsonb' }],
  key: ['coll', 'key'],
  compare: (a) => `${a}.value`,
  scope: "coll = 'meta'",
  read: async function* (src) {
    for await (const found of scanValues(src, 'meta:*')) yield found.map((f) => ({ values: ['meta', f.parts[0], f.value], compare: f.value }));
  },
};

/** The core store's tables, parents first. */
export const CORE_TABLES: ImportTable[] = [organizations, users, apiKeys, contacts, tickets, ticketSeqs, ticketCounts, ticketIdempotency, outbox, meta];
