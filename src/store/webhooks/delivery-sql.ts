import type { DeliveryQuery, WebhookDelivery } from './port.js';

/*
 * The statements on `webhook_deliveries` that the SQLite and PostgreSQL
 * adapters share (the dialects agree on them), with `?` placeholders. `body`
 * is the delivery as JSON; `due_at` (epoch ms) is set while it is pending.
 */
export const DELIVERY_SQL = {
  get: 'SELECT body FROM webhook_deliveries WHERE org = ? AND id = ?',
  save: 'UPDATE webhook_deliveries SET status = ?, due_at = ?, updated_at = ?, body = ? WHERE org = ? AND id = ?',
  due: "SELECT id FROM webhook_deliveries WHERE org = ? AND registration_id = ? AND status = 'pending' AND due_at <= ? ORDER BY due_at, id LIMIT ?",
  firstDue: "SELECT MIN(due_at) AS at FROM webhook_deliveries WHERE org = ? AND registration_id = ? AND status = 'pending'",
  /** Every lane with something pending, and when it is next due: what rebuilds a lost schedule. */
  pendingLanes: "SELECT org, registration_id AS reg, MIN(due_at) AS at FROM webhook_deliveries WHERE status = 'pending' GROUP BY org, registration_id",
  /** Finished deliveries last changed before the cutoff (ISO time): the retention. */
  prune: "DELETE FROM webhook_deliveries WHERE status != 'pending' AND updated_at < ?",
};

/** A page of a registration's deliveries, newest first, and the statement counting them all. */
export function deliveryPage(org: string, registrationId: string, q: DeliveryQuery): { list: string; count: string; listArgs: unknown[]; countArgs: unknown[] } {
  const cond = q.status === undefined ? 'org = ? AND registration_id = ?' : 'org = ? AND registration_id = ? AND status = ?';
  const args: unknown[] = q.status === undefined ? [org, registrationId] : [org, registrationId, q.status];
  return {
    list: `SELECT body FROM webhook_deliveries WHERE ${cond} ORDER BY seq DESC LIMIT ? OFFSET ?`,
    listArgs: [...args, q.limit, q.offset],
    count: `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE ${cond}`,
    countArgs: args,
  };
}

/** When a delivery is due (epoch ms): its next attempt's time while pending (`fallback` when unset), null once finished. */
export function dueAt(d: WebhookDelivery, fallback: string): number | null {
  return d.status === 'pending' ? Date.parse(d.nextAttemptAt ?? fallback) : null;
}
