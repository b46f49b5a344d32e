import type { ConversationRecord, ReadMarker } from '../../domain/conversation.js';
import type { StoredChannel } from '../channels/port.js';
import { CREDIT_LEDGER_SIZE, CREDIT_RECORD_TTL_MS, type CreditEntry } from '../credits/port.js';
import { putArgs } from '../conversations/sql.js';
import type { SessionMessageRepo, SessionRef } from '../session-messages/port.js';
import type { TemplateRecord } from '../templates/port.js';
import { orgKeys } from '../redis/client.js';
import { scanKeys, scanValues } from './source.js';
import type { ImportRow, ImportTable } from './table.js';

/*
 * Messaging as its Redis stores kept it:
 *
 *   <p>:channel:<id>                         sealed channel JSON (copied sealed)
 *   <p>:{o:<org>}:templates:<channelId>      hash `<name>\0<language>` -> template JSON
 *   <p>:{o:<org>}:credits                    balance
 *   <p>:{o:<org>}:credit-ledger              list of change JSON, newest first
 *   <p>:{o:<org>}:credit-res:<id>            "reserved:<amount>" | "refunded:<amount>", expiring
 *   <p>:{o:<org>}:credit-topup:<id>          "1", expiring
 *   <p>:{o:<org>}:session:<sid>              session JSON
 *   <p>:{o:<org>}:session-msgs:<sid>         list of message ids, in recorded order
 *   <p>:{o:<org>}:smsg:<_id>                 message JSON
 *   <p>:{o:<org>}:conv:<aeid>                conversation index record JSON
 *   <p>:{o:<org>}:conv-seen:<userId>         hash aeid -> read marker JSON
 *
 * The indexes beside them (channel-phone claims, channel lists, smsg-net
 * entries, contact-sessions, conv-all/conv-s/conv-a) are what the tables'
 * columns and indexes replace.
 */

const BATCH = 500;
/** The message record, as the port takes it (its type lives with the messaging feature). */
type SessionMessage = Parameters<SessionMessageRepo['append']>[0];
const text = (name: string) => ({ name, type: 'text' as const });
const body = { name: 'body', type: 'jsonb' as const };

const channels: ImportTable = {
  name: 'channels',
  table: 'channels',
  columns: [text('id'), text('org'), text('phone_number_id'), text('kind'), text('created_at'), body],
  key: ['id'],
  deletable: true,
  async *read(src) {
    for await (const found of scanValues(src, 'channel:*')) {
      yield found.map(({ value }) => {
        const c = JSON.parse(value) as StoredChannel;
        return { values: [c.id, c.organizationId, c.kind === 'whatsapp_cloud' ? c.phoneNumberId : null, c.kind, c.createdAt, c], compare: c };
      });
    }
  },
};

const templates: ImportTable = {
  name: 'templates',
  table: 'templates',
  columns: [text('org'), text('channel_id'), text('name'), text('language'), text('source'), body],
  key: ['org', 'channel_id', 'name', 'language'],
  deletable: true,
  async *read(src) {
    for await (const found of scanKeys(src, '{o:*}:templates:*')) {
      for (const { key, parts } of found) {
        const all = Object.values(await src.client.hGetAll(key)).map((raw) => JSON.parse(raw) as TemplateRecord);
        if (all.length > 0) yield all.map((t) => ({ values: [parts[0], parts[1], t.name, t.language, t.source, t], compare: t }));
      }
    }
  },
};

/** When a record with this much time left to live was written (they all live CREDIT_RECORD_TTL_MS). */
const writtenAt = (now: number, ttl: number) => (ttl < 0 ? now : now + ttl - CREDIT_RECORD_TTL_MS);

const reservations: ImportTable = {
  name: 'credit_reservations',
  table: 'credit_reservations',
  columns: [text('org'), text('id'), { name: 'amount', type: 'bigint' }, text('state'), { name: 'at', type: 'bigint' }],
  key: ['org', 'id'],
  compare: (a) => `jsonb_build_object('amount', ${a}.amount, 'state', ${a}.state)`,
  async *read(src) {
    for await (const found of scanValues(src, '{o:*}:credit-res:*')) {
      const ttls = await Promise.all(found.map((f) => src.client.pTTL(orgKeys(src.prefix, f.parts[0]!)('credit-res', f.parts[1]!))));
      const now = Date.now();
      yield found.map((f, i) => {
        const [state, amount] = f.value.split(':') as [string, string];
        return { values: [f.parts[0], f.parts[1], Number(amount), state, writtenAt(now, ttls[i]!)], compare: { amount: Number(amount), state } };
      });
    }
  },
};

const topUps: ImportTable = {
  name: 'credit_top_ups',
  table: 'credit_top_ups',
  columns: [text('org'), text('id'), { name: 'at', type: 'bigint' }],
  key: ['org', 'id'],
  compare: (a) => `to_jsonb(${a}.id)`,
  changed: 'false',
  async *read(src) {
    for await (const found of scanValues(src, '{o:*}:credit-topup:*')) {
      const ttls = await Promise.all(found.map((f) => src.client.pTTL(orgKeys(src.prefix, f.parts[0]!)('credit-topup', f.parts[1]!))));
      const now = Date.now();
      yield found.map((f, i) => ({ values: [f.parts[0], f.parts[1], writtenAt(now, ttls[i]!)], compare: f.parts[1] }));
    }
  },
};

type RedisLedgerEntry = { ms: number; kind: CreditEntry['kind']; amount: number; balance: number; reference?: string | null };
const entryOf = (e: RedisLedgerEntry) => ({ at: new Date(e.ms).toISOString(), kind: e.kind, amount: e.amount, balance: e.balance, reference: e.reference ?? null });
const sameEntry = (a: ReturnType<typeof entryOf>, b: { at: string; kind: string; amount: string | number; balance: string | number; reference: string | null }) =>
  a.at === b.at && a.kind === b.kind && a.amount === Number(b.amount) && a.balance === Number(b.balance) && a.reference === b.reference;

/**
 * Each organization's balance with its ledger. Ledger entries have no id in
 * Redis: the entries newer than the newest one already stored are appended
 * after it, in their order (all of them, up to the ledger's size, on a first
 * run), and the balance is set to Redis's.
 */
const credits: ImportTable = {
  name: 'credit_balances + credit_ledger',
  table: 'credit_balances',
  columns: [text('org'), { name: 'balance', type: 'bigint' }, { name: 'seq', type: 'bigint' }],
  key: ['org'],
  compare: (a) => `jsonb_build_object('balance', ${a}.balance)`,
  same: (expected, actual) => Number((actual as { balance: number }).balance) === (expected as { balance: number }).balance,
  async *read(src) {
    for await (const found of scanValues(src, '{o:*}:credits')) yield found.map((f) => ({ values: [f.parts[0], Number(f.value), 0], compare: { balance: Number(f.value) } }));
  },
  async importAll(src, db) {
    const c = { read: 0, inserted: 0, updated: 0, unchanged: 0 };
    for await (const found of scanValues(src, '{o:*}:credits')) {
      for (const { parts, value } of found) {
        const org = parts[0]!;
        c.read++;
        const raws = await src.client.lRange(orgKeys(src.prefix, org)('credit-ledger'), 0, CREDIT_LEDGER_SIZE - 1);
        const entries = raws.map((r) => entryOf(JSON.parse(r) as RedisLedgerEntry));
        const done = await db.tx(async (q) => {
          const cur = (await q.query<{ balance: string; seq: string }>('SELECT balance, seq FROM credit_balances WHERE org = $1 FOR UPDATE', [org])).rows[0];
          const last = (await q.query<{ at: string; kind: string; amount: string; balance: string; reference: string | null }>('SELECT at, kind, amount, balance, reference FROM credit_ledger WHERE org = $1 ORDER BY seq DESC LIMIT 1', [org])).rows[0];
          const known = last === undefined ? -1 : entries.findIndex((e) => sameEntry(e, last));
          const fresh = (known === -1 ? entries : entries.slice(0, known)).reverse();
          let seq = Number(cur?.seq ?? 0);
          for (const e of fresh) {
            seq++;
            await q.query('INSERT INTO credit_ledger (org, seq, at, kind, amount, balance, reference) VALUES ($1, $2, $3, $4, $5, $6, $7)', [org, seq, e.at, e.kind, e.amount, e.balance, e.reference]);
          }
          if (fresh.length > 0) await q.query('DELETE FROM credit_ledger WHERE org = $1 AND seq <= $2', [org, seq - CREDIT_LEDGER_SIZE]);
          const balance = Number(value);
          if (cur === undefined) await q.query('INSERT INTO credit_balances (org, balance, seq) VALUES ($1, $2, $3)', [org, balance, seq]);
          else if (Number(cur.balance) !== balance || Number(cur.seq) !== seq) await q.query('UPDATE credit_balances SET balance = $2, seq = $3 WHERE org = $1', [org, balance, seq]);
          return cur === undefined ? 'inserted' : Number(cur.balance) !== balance || fresh.length > 0 ? 'updated' : 'unchanged';
        });
        c[done]++;
      }
    }
    return c;
  },
};

const sessions: ImportTable = {
  name: 'chat_sessions',
  table: 'chat_sessions',
  columns: [text('org'), text('session_id'), text('audience_external_id'), text('opened_at')],
  key: ['org', 'session_id'],
  compare: (a) => `jsonb_build_object('audienceExternalId', ${a}.audience_external_id, 'openedAt', ${a}.opened_at)`,
  async *read(src) {
    for await (const found of scanValues(src, '{o:*}:session:*')) {
      yield found.map(({ parts: [org], value }) => {
        const s = JSON.parse(value) as SessionRef;
        return { values: [org, s.sessionId, s.audienceExternalId, s.openedAt], compare: { audienceExternalId: s.audienceExternalId, openedAt: s.openedAt } };
      });
    }
  },
};

/** Each session's messages in their recorded order (the table's serial order), with the time they were sent as the row's age (retention). */
const messages: ImportTable = {
  name: 'session_messages',
  table: 'session_messages',
  columns: [text('org'), text('id'), text('session_id'), text('network_id'), text('status'), { name: 'created_at', type: 'timestamptz' }, body],
  computed: { search: 'sb_message_search(d.body)' },
  key: ['org', 'id'],
  async *read(src) {
    for await (const found of scanKeys(src, '{o:*}:session-msgs:*')) {
      for (const { key, parts } of found) {
        const k = orgKeys(src.prefix, parts[0]!);
        for (let from = 0; ; from += BATCH) {
          const ids = await src.client.lRange(key, from, from + BATCH - 1);
          const raws = ids.length === 0 ? [] : await src.client.mGet(ids.map((id) => k('smsg', id)));
          const rows: ImportRow[] = raws.flatMap((raw) => {
            if (raw === null) return [];
            const m = JSON.parse(raw) as SessionMessage;
            return [{ values: [parts[0], m._id, m.sessionId, m.messageId, m.status ?? null, m.sentAt, m], compare: m }];
          });
          if (rows.length > 0) yield rows;
          if (ids.length < BATCH) break;
        }
      }
    }
  },
};

const conversations: ImportTable = {
  name: 'conversations',
  table: 'conversations',
  columns: [text('org'), text('audience_external_id'), text('status'), text('assignee_id'), text('updated_at'), text('queued_at'), { name: 'version', type: 'bigint' }, body],
  key: ['org', 'audience_external_id'],
  async *read(src) {
    for await (const found of scanValues(src, '{o:*}:conv:*')) {
      yield found.map(({ value }) => {
        const r = JSON.parse(value) as ConversationRecord;
        const args = putArgs(r);
        return { values: [...args.slice(0, 7), r], compare: r };
      });
    }
  },
};

const markers: ImportTable = {
  name: 'conversation_markers',
  table: 'conversation_markers',
  columns: [text('org'), text('user_id'), text('audience_external_id'), body],
  key: ['org', 'user_id', 'audience_external_id'],
  async *read(src) {
    for await (const found of scanKeys(src, '{o:*}:conv-seen:*')) {
      for (const { key, parts } of found) {
        const all = Object.entries(await src.client.hGetAll(key));
        if (all.length > 0) yield all.map(([aeid, raw]) => ({ values: [parts[0], parts[1], aeid, JSON.parse(raw) as ReadMarker], compare: JSON.parse(raw) as unknown }));
      }
    }
  },
};

export const MESSAGING_TABLES: ImportTable[] = [channels, templates, credits, reservations, topUps, sessions, messages, conversations, markers];
