import { conflict } from '../../errors.js';
import type { SqliteDb } from '../sqlite/db.js';
import type { DeliveryQuery, LaneRef, WebhookDelivery, WebhookRegistration, WebhookStore } from './port.js';
import { DELIVERY_SQL, deliveryPage, dueAt } from './delivery-sql.js';

const REGS = 'webhooks';
const URLS = 'webhookUrls';
const key = (org: string, id: string) => `${org}/${id}`;

export interface SqliteWebhookStoreOptions {
  /** Finished deliveries older than this are dropped (default 30 days). */
  retentionMs?: number;
  now?: () => number;
}

/**
 * The webhook store over the node's SQLite database: registrations in
 * `records`, deliveries (each with its attempts) in `webhook_deliveries`,
 * indexed by registration and state and, for pending ones, by due time. The
 * lanes (which registration has something due when) and their leases are in
 * memory, rebuilt from the pending deliveries at start: one process, so
 * leases only keep the dispatcher's own lane runners apart.
 */
export function createSqliteWebhookStore(db: SqliteDb, opts: SqliteWebhookStoreOptions = {}): WebhookStore {
  const now = opts.now ?? Date.now;
  const retentionMs = opts.retentionMs ?? 30 * 86_400_000;
  const s = (sql: string) => db.stmt(sql);
  /** Lane key -> when the lane should next be looked at. */
  const lanes = new Map<string, number>();
  const leases = new Map<string, { owner: string; expires: number }>();

  const laneKey = (l: LaneRef) => key(l.organizationId, l.registrationId);
  const wake = (lk: string, at: number) => {
    const cur = lanes.get(lk);
    if (cur === undefined || at < cur) lanes.set(lk, at);
  };
  const firstDue = (org: string, reg: string) => (s(DELIVERY_SQL.firstDue).get(org, reg) as { at: number | null }).at ?? undefined;
  const parse = (row: { body: string } | undefined) => (row === undefined ? null : (JSON.parse(row.body) as WebhookDelivery));

  for (const r of s(DELIVERY_SQL.pendingLanes).all() as {
    org: string;
    reg: string;
    at: number;
  }[])
    wake(key(r.org, r.reg), r.at);

  let lastPrune = now();
  const prune = async () => {
    if (now() - lastPrune < 60_000) return;
    lastPrune = now();
    const cutoff = new Date(now() - retentionMs).toISOString();
    await db.run(() => s(DELIVERY_SQL.prune).run(cutoff));
  };

  return {
    async createRegistration(reg) {
      const uk = key(reg.organizationId, reg.url);
      if (db.has(URLS, uk)) throw conflict('webhook_url_taken', 'this URL is already registered in the organization', { url: reg.url });
      await db.write([
        { coll: REGS, key: key(reg.organizationId, reg.id), value: reg },
        { coll: URLS, key: uk, value: reg.id },
      ]);
    },
    async getRegistration(org, id) {
      return db.get<WebhookRegistration>(REGS, key(org, id)) ?? null;
    },
    async listRegistrations(org) {
      return [...db.values<WebhookRegistration>(REGS)]
        .filter((r) => r.organizationId === org)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    },
    fanOutRegistrations(org) {
      // In-process reads cost nothing worth remembering.
      return this.listRegistrations(org);
    },
    async updateRegistration(reg) {
      const k = key(reg.organizationId, reg.id);
      const cur = db.get<WebhookRegistration>(REGS, k);
      if (cur === undefined) return false;
      await db.put(REGS, k, { ...reg, url: cur.url });
      return true;
    },
    async deleteRegistration(org, id) {
      const k = key(org, id);
      lanes.delete(k);
      leases.delete(k);
      return db.run(() => {
        const cur = db.get<WebhookRegistration>(REGS, k);
        if (cur === undefined) return false;
        db.apply([
          { coll: REGS, key: k, delete: true },
          { coll: URLS, key: key(org, cur.url), delete: true },
        ]);
        s('DELETE FROM webhook_deliveries WHERE org = ? AND registration_id = ?').run(org, id);
        return true;
      });
    },

    async enqueueDeliveries(deliveries) {
      if (deliveries.length === 0) return;
      const added = await db.run(() => {
        const insert = s('INSERT OR IGNORE INTO webhook_deliveries (org, id, registration_id, status, due_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)');
        const fresh: WebhookDelivery[] = [];
        for (const d of deliveries) {
          if (!db.has(REGS, key(d.organizationId, d.registrationId))) continue;
          if (insert.run(d.organizationId, d.id, d.registrationId, d.status, dueAt(d, d.createdAt), d.updatedAt, JSON.stringify(d)).changes > 0) fresh.push(d);
        }
        return fresh;
      });
      for (const d of added) {
        const at = dueAt(d, d.createdAt);
        if (at !== null) wake(key(d.organizationId, d.registrationId), at);
      }
      await prune();
    },
    async getDelivery(org, id) {
      return parse(s(DELIVERY_SQL.get).get(org, id) as { body: string } | undefined);
    },
    async listDeliveries(org, registrationId, q: DeliveryQuery) {
      const page = deliveryPage(org, registrationId, q);
      const rows = s(page.list).all(...page.listArgs) as { body: string }[];
      const total = (s(page.count).get(...page.countArgs) as { n: number }).n;
      return { deliveries: rows.map((r) => JSON.parse(r.body) as WebhookDelivery), total };
    },
    async saveDelivery(d) {
      const at = dueAt(d, d.updatedAt);
      const saved = await db.run(
        () =>
          s(DELIVERY_SQL.save).run(d.status, at, d.updatedAt, JSON.stringify(d), d.organizationId, d.id).changes > 0,
      );
      if (saved && at !== null) wake(key(d.organizationId, d.registrationId), at);
      return saved;
    },

    async dueDeliveries(lane, at, limit) {
      const rows = s(DELIVERY_SQL.due).all(
        lane.organizationId,
        lane.registrationId,
        at,
        limit,
      ) as { id: string }[];
      return rows.map((r) => r.id);
    },
    async claimLanes(at, max, owner, leaseMs) {
      const out: LaneRef[] = [];
      const ready = [...lanes].filter(([, score]) => score <= at).sort((a, b) => a[1] - b[1]);
      for (const [lk] of ready) {
        if (out.length >= max) break;
        const lease = leases.get(lk);
        if (lease !== undefined && lease.expires > at) {
          lanes.set(lk, lease.expires);
          continue;
        }
        leases.set(lk, { owner, expires: at + leaseMs });
        lanes.set(lk, at + leaseMs);
        const slash = lk.indexOf('/');
        out.push({ organizationId: lk.slice(0, slash), registrationId: lk.slice(slash + 1) });
      }
      return out;
    },
    async renewLane(lane, owner, leaseMs) {
      const lk = laneKey(lane);
      const lease = leases.get(lk);
      if (lease === undefined || lease.owner !== owner) return false;
      lease.expires = now() + leaseMs;
      return true;
    },
    async releaseLane(lane, owner) {
      const lk = laneKey(lane);
      if (leases.get(lk)?.owner !== owner) return;
      leases.delete(lk);
      if (!lanes.has(lk)) return;
      const next = firstDue(lane.organizationId, lane.registrationId);
      if (next === undefined) lanes.delete(lk);
      else lanes.set(lk, next);
    },
  };
}
