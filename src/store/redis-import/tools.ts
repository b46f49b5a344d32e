import type { PaymentEvent, ToolRecord } from '../../domain/tools.js';
import type { SealedSecret } from '../secret-box.js';
import { scanKeys, scanValues } from './source.js';
import type { ImportTable } from './table.js';

/*
 * Connected tools as their Redis store kept them (credentials sealed, and
 * copied sealed: the same SECRETS_KEY opens them):
 *
 *   <p>:{t:<id>}:tool          record JSON
 *   <p>:{t:<id>}:tool-cred     sealed credentials JSON
 *   <p>:{t:<id>}:tool-pay      hash: provider event id -> payment event JSON
 *   <p>:tool-return-origins    set of allowed return-URL origins
 *
 * OAuth states in flight (`tool-state:*`) and refresh locks (`tool-lock:*`)
 * expire: they stay in Redis.
 */

const tools: ImportTable = {
  name: 'tools',
  table: 'tools',
  columns: [
    { name: 'id', type: 'text' },
    { name: 'org', type: 'text' },
    { name: 'created_at', type: 'text' },
    { name: 'body', type: 'jsonb' },
  ],
  key: ['id'],
  deletable: true,
  async *read(src) {
    for await (const found of scanValues(src, '{t:*}:tool')) {
      yield found.map(({ value }) => {
        const t = JSON.parse(value) as ToolRecord;
        return { values: [t.id, t.organizationId, t.createdAt, t], compare: t };
      });
    }
  },
};

const credentials: ImportTable = {
  name: 'tool_credentials',
  table: 'tool_credentials',
  columns: [
    { name: 'tool_id', type: 'text' },
    { name: 'sealed', type: 'jsonb' },
  ],
  key: ['tool_id'],
  compare: (a) => `${a}.sealed`,
  requires: 'EXISTS (SELECT 1 FROM tools x WHERE x.id = d.tool_id)',
  async *read(src) {
    for await (const found of scanValues(src, '{t:*}:tool-cred')) {
      yield found.map(({ parts: [id], value }) => {
        const s = JSON.parse(value) as SealedSecret;
        return { values: [id, s], compare: s };
      });
    }
  },
};

const paymentEvents: ImportTable = {
  name: 'tool_payment_events',
  table: 'tool_payment_events',
  columns: [
    { name: 'tool_id', type: 'text' },
    { name: 'event_id', type: 'text' },
    { name: 'payment_id', type: 'text' },
    { name: 'body', type: 'jsonb' },
  ],
  key: ['tool_id', 'event_id'],
  requires: 'EXISTS (SELECT 1 FROM tools x WHERE x.id = d.tool_id)',
  async *read(src) {
    for await (const found of scanKeys(src, '{t:*}:tool-pay')) {
      for (const { key, parts } of found) {
        const events = Object.values(await src.client.hGetAll(key)).map((raw) => JSON.parse(raw) as PaymentEvent);
        if (events.length > 0) yield events.map((e) => ({ values: [parts[0], e.eventId, e.paymentId, e], compare: e }));
      }
    }
  },
};

const returnOrigins: ImportTable = {
  name: 'records (toolReturnOrigins)',
  table: 'records',
  columns: [
    { name: 'coll', type: 'text' },
    { name: 'key', type: 'text' },
    { name: 'value', type: 'jsonb' },
  ],
  key: ['coll', 'key'],
  compare: (a) => `${a}.value`,
  scope: "coll = 'toolReturnOrigins'",
  deletable: true,
  async *read(src) {
    const origins = await src.client.sMembers(`${src.prefix}:tool-return-origins`);
    if (origins.length > 0) yield origins.map((o) => ({ values: ['toolReturnOrigins', o, true], compare: true }));
  },
};

export const TOOL_TABLES: ImportTable[] = [tools, credentials, paymentEvents, returnOrigins];
