import { conflict } from '../errors.js';
import type { EmbeddedDb } from './embedded-db.js';
import type { DeliveryQuery, LaneRef, WebhookDelivery, WebhookRegistration, WebhookStore } from './webhook-types.js';

const REGS = 'webhooks';
const URLS = 'webhookUrls';
const DELIVERIES = 'webhookDeliveries';
const key = (org: string, id: string) => `${org}/${id}`;

/** Deliveries of one lane ordered by due time, with O(log n) lookup of the due ones. */
class DueQueue {
  private readonly items: { due: number; id: string }[] = [];
  private readonly byId = new Map<string, number>();

  get size(): number {
    return this.items.length;
  }

  set(id: string, due: number): void {
    this.remove(id);
    this.byId.set(id, due);
    this.items.splice(this.search(due, id), 0, { due, id });
  }

  remove(id: string): void {
    const due = this.byId.get(id);
    if (due === undefined) return;
    this.byId.delete(id);
    const i = this.search(due, id);
    if (this.items[i]?.id === id) this.items.splice(i, 1);
  }

  first(): number | undefined {
    return this.items[0]?.due;
  }

  due(now: number, limit: number): string[] {
    const out: string[] = [];
    for (const it of this.items) {
      if (it.due > now || out.length >= limit) break;
      out.push(it.id);
    }
    return out;
  }

  private search(due: number, id: string): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.items[mid]!;
      if (m.due < due || (m.due === due && m.id < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export interface EmbeddedWebhookStoreOptions {
  /** Finished deliveries older than this are dropped (default 30 days). */
  retentionMs?: number;
  now?: () => number;
}

/**
 * The embedded webhook store: registrations and deliveries durable in the
 * EmbeddedDb; the schedule (due queues, lanes, leases) is rebuilt from the
 * pending deliveries at start. One process, so leases only keep the
 * dispatcher's own lane runners apart.
 */
export function createEmbeddedWebhookStore(db: EmbeddedDb, opts: EmbeddedWebhookStoreOptions = {}): WebhookStore {
  const now = opts.now ?? Date.now;
  const retentionMs = opts.retentionMs ?? 30 * 86_400_000;
  const due = new Map<string, DueQueue>();
  /** Lane key -> when the lane should next be looked at. */
  const lanes = new Map<string, number>();
  const leases = new Map<string, { owner: string; expires: number }>();
  /** Registration key -> delivery ids in creation order. */
  const byReg = new Map<string, string[]>();

  const laneKey = (l: LaneRef) => key(l.organizationId, l.registrationId);
  const queueOf = (lk: string) => {
    let q = due.get(lk);
    if (q === undefined) {
      q = new DueQueue();
      due.set(lk, q);
    }
    return q;
  };
  const wake = (lk: string, at: number) => {
    const cur = lanes.get(lk);
    if (cur === undefined || at < cur) lanes.set(lk, at);
  };
  const index = (d: WebhookDelivery) => {
    const rk = key(d.organizationId, d.registrationId);
    const list = byReg.get(rk) ?? [];
    list.push(d.id);
    byReg.set(rk, list);
    if (d.status === 'pending') {
      const at = Date.parse(d.nextAttemptAt ?? d.createdAt);
      queueOf(rk).set(d.id, at);
      wake(rk, at);
    }
  };

  const stored = [...db.values<WebhookDelivery>(DELIVERIES)].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  for (const d of stored) index(d);

  let lastPrune = now();
  const prune = async () => {
    if (now() - lastPrune < 60_000) return;
    lastPrune = now();
    const cutoff = new Date(now() - retentionMs).toISOString();
    const drop = [...db.values<WebhookDelivery>(DELIVERIES)].filter((d) => d.status !== 'pending' && d.updatedAt < cutoff);
    if (drop.length === 0) return;
    const gone = new Set(drop.map((d) => d.id));
    for (const [rk, list] of byReg) byReg.set(rk, list.filter((id) => !gone.has(id)));
    await db.write(drop.map((d) => ({ coll: DELIVERIES, key: key(d.organizationId, d.id), delete: true as const })));
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
    async updateRegistration(reg) {
      const k = key(reg.organizationId, reg.id);
      const cur = db.get<WebhookRegistration>(REGS, k);
      if (cur === undefined) return false;
      await db.put(REGS, k, { ...reg, url: cur.url });
      return true;
    },
    async deleteRegistration(org, id) {
      const k = key(org, id);
      const cur = db.get<WebhookRegistration>(REGS, k);
      if (cur === undefined) return false;
      const ids = byReg.get(k) ?? [];
      byReg.delete(k);
      due.delete(k);
      lanes.delete(k);
      leases.delete(k);
      await db.write([
        { coll: REGS, key: k, delete: true },
        { coll: URLS, key: key(org, cur.url), delete: true },
        ...ids.map((d) => ({ coll: DELIVERIES, key: key(org, d), delete: true as const })),
      ]);
      return true;
    },

    async enqueueDeliveries(deliveries) {
      const fresh = deliveries.filter((d) => !db.has(DELIVERIES, key(d.organizationId, d.id)) && db.has(REGS, key(d.organizationId, d.registrationId)));
      if (fresh.length === 0) return;
      const write = db.write(fresh.map((d) => ({ coll: DELIVERIES, key: key(d.organizationId, d.id), value: d })));
      for (const d of fresh) index(d);
      await write;
      await prune();
    },
    async getDelivery(org, id) {
      return db.get<WebhookDelivery>(DELIVERIES, key(org, id)) ?? null;
    },
    async listDeliveries(org, registrationId, q: DeliveryQuery) {
      const ids = byReg.get(key(org, registrationId)) ?? [];
      const all: WebhookDelivery[] = [];
      for (let i = ids.length - 1; i >= 0; i--) {
        const d = db.get<WebhookDelivery>(DELIVERIES, key(org, ids[i]!));
        if (d !== undefined && (q.status === undefined || d.status === q.status)) all.push(d);
      }
      return { deliveries: all.slice(q.offset, q.offset + q.limit), total: all.length };
    },
    async saveDelivery(d) {
      const k = key(d.organizationId, d.id);
      if (!db.has(DELIVERIES, k)) return false;
      const rk = key(d.organizationId, d.registrationId);
      const write = db.put(DELIVERIES, k, d);
      if (d.status === 'pending') {
        const at = Date.parse(d.nextAttemptAt ?? d.updatedAt);
        queueOf(rk).set(d.id, at);
        wake(rk, at);
      } else {
        due.get(rk)?.remove(d.id);
      }
      await write;
      return true;
    },

    async dueDeliveries(lane, at, limit) {
      return due.get(laneKey(lane))?.due(at, limit) ?? [];
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
      const next = due.get(lk)?.first();
      if (next === undefined) lanes.delete(lk);
      else lanes.set(lk, next);
    },
  };
}
