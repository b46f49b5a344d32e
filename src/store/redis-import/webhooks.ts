import type { WebhookDelivery, WebhookRegistration } from '../webhooks/port.js';
import { dueAt } from '../webhooks/delivery-sql.js';
import { orgKeys } from '../redis/client.js';
import { scanKeys, scanValues, type RedisImportSource } from './source.js';
import type { ImportRow, ImportTable } from './table.js';

/*
 * Webhooks as their Redis store kept them (signing secrets sealed in the
 * record, as they stay):
 *
 *   <p>:{o:<org>}:wh:reg:<id>          registration JSON
 *   <p>:{o:<org>}:wh:dlv:<id>          delivery JSON (finished ones expire after the retention)
 *   <p>:{o:<org>}:wh:dlvs:<reg>        zset of the registration's delivery ids, score = createdAt ms
 *
 * The lane schedule (`<p>:wh:lanes`) and the lanes' leases stay in Redis as
 * they are; every node puts pending lanes back on it from PostgreSQL.
 */

const BATCH = 500;
const STATUS_SET = /:(pending|succeeded|failed)$/;

const registrations: ImportTable = {
  name: 'webhook_registrations',
  table: 'webhook_registrations',
  columns: [
    { name: 'org', type: 'text' },
    { name: 'id', type: 'text' },
    { name: 'url', type: 'text' },
    { name: 'created_at', type: 'text' },
    { name: 'body', type: 'jsonb' },
  ],
  key: ['org', 'id'],
  deletable: true,
  async *read(src) {
    for await (const found of scanValues(src, '{o:*}:wh:reg:*')) {
      yield found.map(({ parts: [org], value }) => {
        const r = JSON.parse(value) as WebhookRegistration;
        return { values: [org, r.id, r.url, r.createdAt, r], compare: r };
      });
    }
  },
};

/** Each registration's deliveries oldest first, so the table's serial order is their creation order (listings are newest first by it). */
const deliveries: ImportTable = {
  name: 'webhook_deliveries',
  table: 'webhook_deliveries',
  columns: [
    { name: 'org', type: 'text' },
    { name: 'id', type: 'text' },
    { name: 'registration_id', type: 'text' },
    { name: 'status', type: 'text' },
    { name: 'due_at', type: 'bigint' },
    { name: 'updated_at', type: 'text' },
    { name: 'body', type: 'jsonb' },
  ],
  key: ['org', 'id'],
  requires: 'EXISTS (SELECT 1 FROM webhook_registrations r WHERE r.org = d.org AND r.id = d.registration_id)',
  deletable: true,
  read: readDeliveries,
};

async function* readDeliveries(src: RedisImportSource): AsyncIterable<ImportRow[]> {
  for await (const found of scanKeys(src, '{o:*}:wh:dlvs:*')) {
    for (const { key, parts } of found) {
      if (STATUS_SET.test(parts[1]!)) continue;
      const k = orgKeys(src.prefix, parts[0]!);
      for (let from = 0; ; from += BATCH) {
        const ids = await src.client.zRange(key, from, from + BATCH - 1);
        // One organization's keys: one slot, so one MGET. Ids whose record expired are skipped.
        const raws = ids.length === 0 ? [] : await src.client.mGet(ids.map((id) => k('wh', 'dlv', id)));
        const rows = raws.flatMap((raw) => {
          if (raw === null) return [];
          const d = JSON.parse(raw) as WebhookDelivery;
          return [{ values: [parts[0], d.id, d.registrationId, d.status, dueAt(d, d.updatedAt), d.updatedAt, d], compare: d }];
        });
        if (rows.length > 0) yield rows;
        if (ids.length < BATCH) break;
      }
    }
  }
}

export const WEBHOOK_TABLES: ImportTable[] = [registrations, deliveries];
