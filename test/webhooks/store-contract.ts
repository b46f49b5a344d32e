import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WebhookDelivery, WebhookRegistration, WebhookStore } from '../../src/store/webhooks/port.js';

export function makeRegistration(org: string, over: Partial<WebhookRegistration> = {}): WebhookRegistration {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    organizationId: org,
    url: `https://example.com/hook/${randomUUID()}`,
    events: ['*'],
    secret: 'whsec_' + Buffer.from(randomUUID()).toString('base64'),
    previousSecret: null,
    status: 'active',
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
    ...over,
  };
}

export function makeDelivery(reg: WebhookRegistration, over: Partial<WebhookDelivery> = {}): WebhookDelivery {
  const now = new Date();
  return {
    id: randomUUID(),
    organizationId: reg.organizationId,
    registrationId: reg.id,
    eventId: randomUUID(),
    eventType: 'resource.created',
    payload: '{"x":1}',
    status: 'pending',
    attempts: [],
    attemptCount: 0,
    nextAttemptAt: now.toISOString(),
    retryUntil: new Date(now.getTime() + 3 * 86_400_000).toISOString(),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    ...over,
  };
}

export function runWebhookStoreContract(name: string, create: () => Promise<WebhookStore>): void {
  describe(`webhook store contract: ${name}`, () => {
    it('creates, reads, lists and updates registrations; 409 on a URL already registered in the organization only', async () => {
      const s = await create();
      const a = makeRegistration('orgA', { createdAt: '2024-01-01T00:00:00.000Z' });
      const b = makeRegistration('orgA', { createdAt: '2024-01-02T00:00:00.000Z' });
      await s.createRegistration(a);
      await s.createRegistration(b);
      await expect(s.createRegistration(makeRegistration('orgA', { url: a.url }))).rejects.toMatchObject({ status: 409, code: 'webhook_url_taken' });
      // Another organization may register the same URL.
      await s.createRegistration(makeRegistration('orgB', { url: a.url }));
      expect(await s.getRegistration('orgA', a.id)).toEqual(a);
      expect(await s.getRegistration('orgB', a.id)).toBeNull();
      expect((await s.listRegistrations('orgA')).map((r) => r.id)).toEqual([a.id, b.id]);
      expect(await s.updateRegistration({ ...a, events: ['ticket.created'], url: 'https://changed.example' })).toBe(true);
      const updated = await s.getRegistration('orgA', a.id);
      expect(updated?.events).toEqual(['ticket.created']);
      expect(updated?.url).toBe(a.url);
      expect(await s.updateRegistration(makeRegistration('orgA'))).toBe(false);
    });

    it('deletes a registration with its deliveries and frees its URL', async () => {
      const s = await create();
      const r = makeRegistration('orgA');
      await s.createRegistration(r);
      const d = makeDelivery(r);
      await s.enqueueDeliveries([d]);
      expect(await s.deleteRegistration('orgB', r.id)).toBe(false);
      expect(await s.deleteRegistration('orgA', r.id)).toBe(true);
      expect(await s.getRegistration('orgA', r.id)).toBeNull();
      expect(await s.getDelivery('orgA', d.id)).toBeNull();
      expect(await s.claimLanes(Date.now() + 1000, 10, 'n1', 5000)).toEqual([]);
      await s.createRegistration(makeRegistration('orgA', { url: r.url }));
      // Deliveries for a deleted registration are not stored.
      await s.enqueueDeliveries([makeDelivery(r)]);
      expect((await s.listDeliveries('orgA', r.id, { offset: 0, limit: 10 })).total).toBe(0);
    });

    it('enqueues idempotently, lists newest first with status filter and pages', async () => {
      const s = await create();
      const r = makeRegistration('orgA');
      await s.createRegistration(r);
      const ds = [0, 1, 2].map((i) => makeDelivery(r, { createdAt: new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString() }));
      await s.enqueueDeliveries(ds);
      await s.enqueueDeliveries([{ ...ds[0]!, payload: 'changed' }]);
      expect((await s.getDelivery('orgA', ds[0]!.id))?.payload).toBe('{"x":1}');
      expect(await s.getDelivery('orgB', ds[0]!.id)).toBeNull();
      const page = await s.listDeliveries('orgA', r.id, { offset: 0, limit: 2 });
      expect(page.total).toBe(3);
      expect(page.deliveries.map((d) => d.id)).toEqual([ds[2]!.id, ds[1]!.id]);
      await s.saveDelivery({ ...ds[1]!, status: 'failed', nextAttemptAt: null, attemptCount: 1, attempts: [{ at: new Date().toISOString(), status: 500, latencyMs: 3, error: 'HTTP 500' }] });
      const failed = await s.listDeliveries('orgA', r.id, { status: 'failed', offset: 0, limit: 10 });
      expect(failed.deliveries.map((d) => d.id)).toEqual([ds[1]!.id]);
      expect(failed.deliveries[0]!.attempts[0]!.status).toBe(500);
      expect((await s.listDeliveries('orgA', r.id, { status: 'pending', offset: 0, limit: 10 })).total).toBe(2);
      expect((await s.listDeliveries('orgB', r.id, { offset: 0, limit: 10 })).total).toBe(0);
    });

    it('schedules: due deliveries, exclusive lane leases, release at the next due time, lapse of a dead owner', async () => {
      const s = await create();
      const r = makeRegistration('orgA');
      await s.createRegistration(r);
      const now = Date.now();
      const soon = makeDelivery(r, { nextAttemptAt: new Date(now - 10).toISOString() });
      const later = makeDelivery(r, { nextAttemptAt: new Date(now + 60_000).toISOString() });
      await s.enqueueDeliveries([soon, later]);
      const lane = { organizationId: 'orgA', registrationId: r.id };
      expect(await s.dueDeliveries(lane, now, 10)).toEqual([soon.id]);
      expect(await s.claimLanes(now, 10, 'n1', 200)).toEqual([lane]);
      expect(await s.claimLanes(now, 10, 'n2', 200)).toEqual([]);
      expect(await s.renewLane(lane, 'n2', 200)).toBe(false);
      expect(await s.renewLane(lane, 'n1', 200)).toBe(true);
      // Succeed the due one; the lane then sleeps until the later one.
      expect(await s.saveDelivery({ ...soon, status: 'succeeded', nextAttemptAt: null })).toBe(true);
      await s.releaseLane(lane, 'n1');
      expect(await s.claimLanes(Date.now(), 10, 'n2', 200)).toEqual([]);
      expect(await s.claimLanes(now + 60_001, 10, 'n2', 200)).toEqual([lane]);
      // n2 dies holding the lease: after it lapses another node gets the lane.
      await new Promise((res) => setTimeout(res, 300));
      expect(await s.claimLanes(now + 60_500, 10, 'n3', 200)).toEqual([lane]);
      // A retry rescheduled into the future leaves the due set until then.
      await s.saveDelivery({ ...later, attemptCount: 1, nextAttemptAt: new Date(now + 120_000).toISOString() });
      expect(await s.dueDeliveries(lane, now + 60_500, 10)).toEqual([]);
      expect(await s.dueDeliveries(lane, now + 120_000, 10)).toEqual([later.id]);
    });

    it('wakes a released idle lane when a new delivery arrives', async () => {
      const s = await create();
      const r = makeRegistration('orgA');
      await s.createRegistration(r);
      const lane = { organizationId: 'orgA', registrationId: r.id };
      const d1 = makeDelivery(r);
      await s.enqueueDeliveries([d1]);
      expect(await s.claimLanes(Date.now(), 10, 'n1', 5000)).toEqual([lane]);
      // A delivery arrives while n1 holds the lane.
      const d2 = makeDelivery(r);
      await s.enqueueDeliveries([d2]);
      await s.saveDelivery({ ...d1, status: 'succeeded', nextAttemptAt: null });
      await s.releaseLane(lane, 'n1');
      expect(await s.claimLanes(Date.now() + 5, 10, 'n2', 5000)).toEqual([lane]);
      expect(await s.dueDeliveries(lane, Date.now() + 5, 10)).toEqual([d2.id]);
    });

    it('keeps a lane due when another node pushed it back while the owner was releasing it', async () => {
      const s = await create();
      const r = makeRegistration('orgA');
      await s.createRegistration(r);
      const lane = { organizationId: 'orgA', registrationId: r.id };
      await s.enqueueDeliveries([makeDelivery(r)]);
      expect(await s.claimLanes(Date.now(), 10, 'n1', 30_000)).toEqual([lane]);
      await s.enqueueDeliveries([makeDelivery(r)]);
      // n2 sees the lane due but leased: it looks again at the lease's expiry.
      expect(await s.claimLanes(Date.now(), 10, 'n2', 30_000)).toEqual([]);
      await s.releaseLane(lane, 'n1');
      expect(await s.claimLanes(Date.now() + 5, 10, 'n2', 30_000)).toEqual([lane]);
    });
  });
}
