import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DomainEvent, EventLog } from '../../src/events/index.js';

/** Opens a log over one fresh namespace; `reopen` opens the same namespace again (a restarted process). */
export interface EventLogFixture {
  open(): Promise<EventLog>;
  cleanup?(): Promise<void>;
}

export async function waitFor(cond: () => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls an async probe until it returns a value that is not undefined. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function makeEvent(org = 'org1', type = 'resource.created', data: unknown = {}): DomainEvent {
  return { id: randomUUID(), type, organizationId: org, createdAt: new Date().toISOString(), data };
}

/** One behaviour, every adapter: `fixture` gives each case a fresh namespace. */
export function runEventLogContract(name: string, fixture: () => Promise<EventLogFixture>): void {
  describe(`event log contract: ${name}`, () => {
    const withFixture = (fn: (f: EventLogFixture) => Promise<void>) => async () => {
      const f = await fixture();
      try {
        await fn(f);
      } finally {
        await f.cleanup?.();
      }
    };

    it('delivers every published event in order to a consumer started later, with increasing seq', withFixture(async (f) => {
      const log = await f.open();
      const sent = Array.from({ length: 20 }, (_, i) => makeEvent('org1', 'resource.created', { i }));
      for (const e of sent) await log.publish(e);
      const got: { id: string; seq: number }[] = [];
      const sub = await log.consume('c1', async (e, info) => { got.push({ id: e.id, seq: info.seq }); }, { concurrency: 1 });
      await waitFor(() => got.length === 20, 15_000, '20 events');
      expect(got.map((g) => g.id)).toEqual(sent.map((e) => e.id));
      for (let i = 1; i < got.length; i++) expect(got[i]!.seq).toBeGreaterThan(got[i - 1]!.seq);
      await sub.stop();
      await log.close();
    }));

    it('delivers events published after the consumer started, whole and unchanged', withFixture(async (f) => {
      const log = await f.open();
      const got: DomainEvent[] = [];
      const sub = await log.consume('c1', async (e) => { got.push(e); });
      const e = makeEvent('org1', 'ticket.created', { nested: { a: [1, 2, 'x'] }, s: 'ünïcode' });
      await log.publish(e);
      await waitFor(() => got.length === 1);
      expect(got[0]).toEqual(e);
      await sub.stop();
      await log.close();
    }));

    it('redelivers an event whose handler failed, counting deliveries', withFixture(async (f) => {
      const log = await f.open();
      const counts: number[] = [];
      const sub = await log.consume('c1', async (_e, info) => {
        counts.push(info.deliveryCount);
        if (info.deliveryCount < 2) throw new Error('transient');
      });
      await log.publish(makeEvent());
      await waitFor(() => counts.length === 2, 15_000, 'redelivery');
      expect(counts).toEqual([1, 2]);
      await sub.stop();
      await log.close();
    }));

    it('keeps each durable consumer position: a restarted consumer resumes after what it acknowledged', withFixture(async (f) => {
      const log = await f.open();
      const first = [makeEvent(), makeEvent(), makeEvent()];
      for (const e of first) await log.publish(e);
      const got1: string[] = [];
      const s1 = await log.consume('c1', async (e) => { got1.push(e.id); });
      await waitFor(() => got1.length === 3);
      await s1.stop();
      // Acks are asynchronous in JetStream: give them a moment to land before the restart.
      await new Promise((r) => setTimeout(r, 300));
      const later = makeEvent();
      await log.publish(later);
      await log.close();

      const log2 = await f.open();
      // A new consumer name starts at the oldest retained event: at least
      // everything some known consumer has not acknowledged yet.
      const got3: string[] = [];
      const s3 = await log2.consume('c2', async (e) => { got3.push(e.id); });
      await waitFor(() => got3.includes(later.id));
      const got2: string[] = [];
      const s2 = await log2.consume('c1', async (e) => { got2.push(e.id); });
      await waitFor(() => got2.includes(later.id));
      await new Promise((r) => setTimeout(r, 300));
      expect(got2).toEqual([later.id]);
      await s2.stop();
      await s3.stop();
      await log2.close();
    }));

    it('redelivers unacknowledged events after a restart', withFixture(async (f) => {
      const log = await f.open();
      const e = makeEvent();
      let seen = 0;
      let release!: () => void;
      const blocked = new Promise<void>((r) => { release = r; });
      await log.publish(e);
      const s1 = await log.consume('c1', async () => { seen++; await blocked; throw new Error('node died'); });
      await waitFor(() => seen === 1);
      release();
      await s1.stop();
      await log.close();
      const log2 = await f.open();
      const got: string[] = [];
      const s2 = await log2.consume('c1', async (ev) => { got.push(ev.id); });
      await waitFor(() => got.includes(e.id), 20_000, 'redelivery after restart');
      await s2.stop();
      await log2.close();
    }));

    it('gives every consumer name its own copy and filters by organization', withFixture(async (f) => {
      const log = await f.open();
      const a: string[] = [];
      const b: string[] = [];
      const onlyOrg2: string[] = [];
      const sa = await log.consume('a', async (e) => { a.push(e.id); });
      const sb = await log.consume('b', async (e) => { b.push(e.id); });
      const so = await log.consume('o2', async (e) => { onlyOrg2.push(e.organizationId); }, { organizationId: 'org2' });
      for (let i = 0; i < 6; i++) await log.publish(makeEvent(i % 2 === 0 ? 'org1' : 'org2'));
      await waitFor(() => a.length === 6 && b.length === 6 && onlyOrg2.length === 3);
      await new Promise((r) => setTimeout(r, 200));
      expect(new Set(a)).toEqual(new Set(b));
      expect(onlyOrg2).toEqual(['org2', 'org2', 'org2']);
      await Promise.all([sa.stop(), sb.stop(), so.stop()]);
      await log.close();
    }));

    it('runs up to `concurrency` handlers at once', withFixture(async (f) => {
      const log = await f.open();
      let inFlight = 0;
      let peak = 0;
      let done = 0;
      const sub = await log.consume('c1', async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 50));
        inFlight--;
        done++;
      }, { concurrency: 4 });
      await Promise.all(Array.from({ length: 16 }, () => log.publish(makeEvent())));
      await waitFor(() => done === 16);
      expect(peak).toBeLessThanOrEqual(4);
      expect(peak).toBeGreaterThan(1);
      await sub.stop();
      await log.close();
    }));

    it('refuses an event that cannot be a subject (bad organization id or type)', withFixture(async (f) => {
      const log = await f.open();
      await expect(log.publish({ ...makeEvent(), organizationId: 'a.b' })).rejects.toThrow(/organizationId/);
      await expect(log.publish({ ...makeEvent(), type: 'has space' })).rejects.toThrow(/type/);
      await expect(log.publish({ ...makeEvent(), type: 'a.*' })).rejects.toThrow(/type/);
      await log.close();
    }));
  });
}
