import { conflict } from '../../errors.js';
import { FreshCache } from '../fresh-cache.js';
import { numbered, type PgDb } from '../postgres/db.js';
import type { RedisClient } from '../redis/client.js';
import type { LaneRef, WebhookDelivery, WebhookRegistration, WebhookStore } from './port.js';
import { DELIVERY_SQL, deliveryPage, dueAt } from './delivery-sql.js';
import { createRedisLaneSchedule } from './redis-lanes.js';

export interface PostgresWebhookStoreOptions {
  /** Key prefix of the lane schedule and its leases in Redis. */
  prefix: string;
  /** Finished deliveries older than this are dropped (default 30 days). */
  retentionMs?: number;
  now?: () => number;
}

/** How long an organization's registration list stays good for fan-out (a change on another node shows within it). */
const FRESH_MS = 1_000;
/** How often a node puts every lane with pending deliveries back on the schedule (repairing one Redis lost). */
const RESCHEDULE_MS = 5 * 60_000;

/**
 * The clustered webhook store: registrations and deliveries (each with its
 * attempts) in PostgreSQL, the lane schedule and its leases in Redis
 * (`redis-lanes.ts`).
 *
 * Guarantees, beside the port's:
 * - A delivery is stored only while its registration exists: the enqueue
 *   holds the registration's row, and deleting a registration deletes its
 *   deliveries in the same statement (ON DELETE CASCADE).
 * - Every pending delivery's lane is on the schedule: a wake-up follows each
 *   write that schedules one, a redelivered fan-out repeats it, and each node
 *   puts every pending lane back on the schedule at its first claim and then
 *   every few minutes, so a schedule lost with Redis (or a wake-up lost to a
 *   crash) only delays deliveries.
 */
export function createPostgresWebhookStore(db: PgDb, redis: RedisClient, opts: PostgresWebhookStoreOptions): WebhookStore {
  const now = opts.now ?? Date.now;
  const retentionMs = opts.retentionMs ?? 30 * 86_400_000;
  const lanes = createRedisLaneSchedule(redis, opts.prefix);
  const q = <R extends object>(sql: string, args: unknown[]) => db.rows<R & Record<string, unknown>>(numbered(sql), args);
  // Every event is fanned out after a read of its organization's registrations: a list
  // read in the last FRESH_MS is taken from memory. Changes through this store are seen
  // at once; a delivery for a registration deleted on another node meanwhile is not
  // stored (the enqueue checks the registration).
  const fresh = new FreshCache<WebhookRegistration[]>(FRESH_MS);

  const firstDue = async (l: LaneRef) => {
    const at = (await q<{ at: string | null }>(DELIVERY_SQL.firstDue, [l.organizationId, l.registrationId]))[0]?.at;
    return at === null || at === undefined ? undefined : Number(at);
  };
  const listRegistrations = async (org: string) =>
    (await db.rows<{ body: WebhookRegistration }>('SELECT body FROM webhook_registrations WHERE org = $1 ORDER BY created_at, id', [org])).map((r) => r.body);

  let rescheduledAt: number | null = null;
  const reschedule = async () => {
    if (rescheduledAt !== null && now() - rescheduledAt < RESCHEDULE_MS) return;
    rescheduledAt = now();
    const pending = await q<{ org: string; reg: string; at: string }>(DELIVERY_SQL.pendingLanes, []);
    await Promise.all(pending.map((r) => lanes.wake({ organizationId: r.org, registrationId: r.reg }, Number(r.at))));
  };

  let prunedAt = now();
  const prune = async () => {
    if (now() - prunedAt < 60_000) return;
    prunedAt = now();
    await db.query(numbered(DELIVERY_SQL.prune), [new Date(now() - retentionMs).toISOString()]);
  };

  return {
    async createRegistration(reg) {
      const r = await db.query('INSERT INTO webhook_registrations (org, id, url, created_at, body) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org, url) DO NOTHING', [
        reg.organizationId,
        reg.id,
        reg.url,
        reg.createdAt,
        JSON.stringify(reg),
      ]);
      fresh.forget((o) => o === reg.organizationId);
      if (r.rowCount !== 1) throw conflict('webhook_url_taken', 'this URL is already registered in the organization', { url: reg.url });
    },
    async getRegistration(org, id) {
      return (await db.rows<{ body: WebhookRegistration }>('SELECT body FROM webhook_registrations WHERE org = $1 AND id = $2', [org, id]))[0]?.body ?? null;
    },
    listRegistrations,
    fanOutRegistrations: (org) => fresh.get(org, () => listRegistrations(org)),
    async updateRegistration(reg) {
      // The URL never changes: the stored one stays in the body.
      const r = await db.query("UPDATE webhook_registrations SET body = jsonb_set($3::jsonb, '{url}', to_jsonb(url)) WHERE org = $1 AND id = $2", [
        reg.organizationId,
        reg.id,
        JSON.stringify(reg),
      ]);
      fresh.forget((o) => o === reg.organizationId);
      return r.rowCount === 1;
    },
    async deleteRegistration(org, id) {
      const r = await db.query('DELETE FROM webhook_registrations WHERE org = $1 AND id = $2', [org, id]);
      fresh.forget((o) => o === org);
      await lanes.forget({ organizationId: org, registrationId: id });
      return r.rowCount === 1;
    },

    async enqueueDeliveries(deliveries) {
      if (deliveries.length === 0) return;
      const byOrg = new Map<string, WebhookDelivery[]>();
      for (const d of deliveries) byOrg.set(d.organizationId, [...(byOrg.get(d.organizationId) ?? []), d]);
      for (const [org, ds] of byOrg) {
        // One statement: the registrations' rows are held (a concurrent delete waits, or
        // went first and then they are gone), and deliveries already stored stay as they are.
        await db.query(
          `WITH regs AS (
             SELECT id FROM webhook_registrations WHERE org = $1 AND id = ANY($2::text[]) FOR KEY SHARE
           )
           INSERT INTO webhook_deliveries (org, id, registration_id, status, due_at, updated_at, body)
           SELECT $1, d.id, d.reg, d.status, d.due_at, d.updated_at, d.body
           FROM unnest($3::text[], $2::text[], $4::text[], $5::bigint[], $6::text[], $7::jsonb[]) WITH ORDINALITY AS d(id, reg, status, due_at, updated_at, body, n)
           WHERE d.reg IN (SELECT id FROM regs)
           ORDER BY d.n
           ON CONFLICT (org, id) DO NOTHING`,
          [
            org,
            ds.map((d) => d.registrationId),
            ds.map((d) => d.id),
            ds.map((d) => d.status),
            ds.map((d) => dueAt(d, d.createdAt)),
            ds.map((d) => d.updatedAt),
            ds.map((d) => JSON.stringify(d)),
          ],
        );
      }
      // Woken whether or not the delivery was new: a redelivered fan-out
      // repairs a wake-up lost to a crash between the two steps.
      const earliest = new Map<string, { lane: LaneRef; at: number }>();
      for (const d of deliveries) {
        const at = dueAt(d, d.createdAt);
        if (at === null) continue;
        const lane = { organizationId: d.organizationId, registrationId: d.registrationId };
        const lk = `${lane.organizationId}/${lane.registrationId}`;
        const cur = earliest.get(lk);
        if (cur === undefined || at < cur.at) earliest.set(lk, { lane, at });
      }
      await Promise.all([...earliest.values()].map((e) => lanes.wake(e.lane, e.at)));
      await prune();
    },
    async getDelivery(org, id) {
      return (await q<{ body: WebhookDelivery }>(DELIVERY_SQL.get, [org, id]))[0]?.body ?? null;
    },
    async listDeliveries(org, registrationId, query) {
      const page = deliveryPage(org, registrationId, query);
      const [rows, count] = await Promise.all([q<{ body: WebhookDelivery }>(page.list, page.listArgs), q<{ n: string }>(page.count, page.countArgs)]);
      return { deliveries: rows.map((r) => r.body), total: Number(count[0]?.n ?? 0) };
    },
    async saveDelivery(d) {
      const at = dueAt(d, d.updatedAt);
      const r = await db.query(numbered(DELIVERY_SQL.save), [d.status, at, d.updatedAt, JSON.stringify(d), d.organizationId, d.id]);
      if (r.rowCount !== 1) return false;
      if (at !== null) await lanes.wake({ organizationId: d.organizationId, registrationId: d.registrationId }, at);
      return true;
    },

    async dueDeliveries(lane, at, limit) {
      return (await q<{ id: string }>(DELIVERY_SQL.due, [lane.organizationId, lane.registrationId, at, limit])).map((r) => r.id);
    },
    async claimLanes(at, max, owner, leaseMs) {
      await reschedule();
      return lanes.claim(at, max, owner, leaseMs);
    },
    renewLane: (lane, owner, leaseMs) => lanes.renew(lane, owner, leaseMs),
    releaseLane: (lane, owner) => lanes.release(lane, owner, () => firstDue(lane)),
  };
}
