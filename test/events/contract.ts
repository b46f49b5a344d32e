import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DomainEvent, EventLog, LoggedEvent } from '../../src/events/index.js';

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

    it('a consumer of one type gets that type\'s events only, of every organization, and its position passes the rest', withFixture(async (f) => {
      const log = await f.open();
      const sent = [
        makeEvent('org1', 'ticket.created'),
        makeEvent('org1', 'automation.fired'),
        makeEvent('org2', 'message.sent'),
        makeEvent('org2', 'automation.fired'),
        makeEvent('org1', 'automation.failed'),
      ];
      for (const e of sent) await log.publish(e);
      const typed: string[] = [];
      const all: string[] = [];
      const s1 = await log.consume('fired', async (e) => { typed.push(e.id); }, { types: ['automation.fired'] });
      const s2 = await log.consume('all', async (e) => { all.push(e.id); });
      await waitFor(() => all.length === sent.length, 15_000, 'every event to the unfiltered consumer');
      await waitFor(() => typed.length === 2, 15_000, 'the two automation.fired events');
      await s1.stop();
      await s2.stop();
      await new Promise((r) => setTimeout(r, 300));
      const after = [makeEvent('org3', 'ticket.updated'), makeEvent('org3', 'automation.fired')];
      for (const e of after) await log.publish(e);
      await log.close();
      // Restarted: resumes after what it acknowledged, still only its type (the events of other types
      // between did not hold its position back, nor are they delivered now).
      const log2 = await f.open();
      const resumed: string[] = [];
      const s3 = await log2.consume('fired', async (e) => { resumed.push(e.id); }, { types: ['automation.fired'] });
      await waitFor(() => resumed.includes(after[1]!.id), 15_000, 'the later automation.fired');
      await new Promise((r) => setTimeout(r, 300));
      expect(typed.sort()).toEqual([sent[1]!.id, sent[3]!.id].sort());
      expect(resumed).toEqual([after[1]!.id]);
      await s3.stop();
      await log2.close();
    }));

    it('a consumer of several types gets each of their events once and no other, and resumes after a restart', withFixture(async (f) => {
      const log = await f.open();
      const types = ['handover.requested', 'handover.opened', 'conversation.resolved'];
      const sent = [
        makeEvent('org1', 'handover.requested'),
        makeEvent('org1', 'ticket.created'),
        makeEvent('org2', 'conversation.resolved'),
        makeEvent('org2', 'message.sent'),
        makeEvent('org1', 'handover.opened'),
        makeEvent('org3', 'conversation.assigned'),
      ];
      for (const e of sent) await log.publish(e);
      const typed: string[] = [];
      const all: string[] = [];
      const s1 = await log.consume('assign', async (e) => { typed.push(e.id); }, { types, concurrency: 4 });
      const s2 = await log.consume('all', async (e) => { all.push(e.id); });
      await waitFor(() => all.length === sent.length, 15_000, 'every event to the unfiltered consumer');
      await waitFor(() => typed.length >= 3, 15_000, 'the three events of the types');
      await new Promise((r) => setTimeout(r, 300));
      expect(typed.sort()).toEqual([sent[0]!.id, sent[2]!.id, sent[4]!.id].sort());
      await s1.stop();
      await s2.stop();
      const after = [makeEvent('org3', 'ticket.updated'), makeEvent('org3', 'conversation.resolved')];
      for (const e of after) await log.publish(e);
      await log.close();
      const log2 = await f.open();
      const resumed: string[] = [];
      const s3 = await log2.consume('assign', async (e) => { resumed.push(e.id); }, { types });
      await waitFor(() => resumed.includes(after[1]!.id), 15_000, 'the later conversation.resolved');
      await new Promise((r) => setTimeout(r, 300));
      expect(resumed).toEqual([after[1]!.id]);
      await s3.stop();
      await log2.close();
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

export interface EventFeedFixture {
  /** A log over one fresh namespace. */
  open(): Promise<EventLog>;
  /**
   * A log over one fresh namespace whose retention drops old events soon:
   * `count` keeps the newest `retained` events, `age` drops every event after
   * a short max age.
   */
  retention: { open(): Promise<EventLog> } & ({ kind: 'count'; retained: number } | { kind: 'age' });
  cleanup?(): Promise<void>;
}

export interface EventFeedContractOptions {
  /** Kills and restarts the server under the log (JetStream's nats-server); absent where there is none. */
  restartServer?: () => Promise<void>;
}

const idsOf = (events: LoggedEvent[]) => events.map((e) => e.event.id);
const seqAndIds = (events: LoggedEvent[]) => events.map((e) => [e.seq, e.event.id]);

function expectIncreasing(events: LoggedEvent[]): void {
  for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBeGreaterThan(events[i - 1]!.seq);
}

/** The non-durable read side (`headSeq`, `follow`, `read`), every adapter. */
export function runEventFeedContract(name: string, fixture: () => Promise<EventFeedFixture>, options: EventFeedContractOptions = {}): void {
  describe(`event feed contract: ${name}`, () => {
    const withFixture = (fn: (f: EventFeedFixture) => Promise<void>) => async () => {
      const f = await fixture();
      try {
        await fn(f);
      } finally {
        await f.cleanup?.();
      }
    };

    it('reports the head: 0 when empty, then the seq of the newest event', withFixture(async (f) => {
      const log = await f.open();
      expect(await log.headSeq()).toBe(0);
      const e = makeEvent('org1');
      await log.publish(makeEvent('org2'));
      await log.publish(e);
      const r = await log.read('org1', 0);
      expect(idsOf(r.events)).toEqual([e.id]);
      expect(await log.headSeq()).toBe(r.events[0]!.seq);
      expect(r.headSeq).toBe(r.events[0]!.seq);
      await log.close();
    }));

    it('follow passes every event after startSeq, of every organization, in seq order, once; read agrees per organization', withFixture(async (f) => {
      const log = await f.open();
      const before = [makeEvent('org1'), makeEvent('org2')];
      for (const e of before) await log.publish(e);
      const head = await log.headSeq();
      const got: LoggedEvent[] = [];
      const follower = await log.follow((e) => { got.push(e); });
      expect(follower.startSeq).toBe(head);
      const orgs = ['org1', 'org2', 'org3'];
      const sent: DomainEvent[] = [];
      for (let round = 0; round < 15; round++) {
        const batch = Array.from({ length: 10 }, (_, i) => makeEvent(orgs[(round + i) % 3], 'resource.updated', { round, i }));
        sent.push(...batch);
        await Promise.all(batch.map((e) => log.publish(e)));
      }
      await waitFor(() => got.length >= sent.length, 20_000, `${sent.length} followed events`);
      await new Promise((r) => setTimeout(r, 200));
      expect(got.length).toBe(sent.length);
      expectIncreasing(got);
      expect(got[0]!.seq).toBeGreaterThan(follower.startSeq);
      expect(new Set(idsOf(got))).toEqual(new Set(sent.map((e) => e.id)));
      for (const e of got) expect(e.event).toEqual(sent.find((s) => s.id === e.event.id));
      for (const org of orgs) {
        const r = await log.read(org, follower.startSeq);
        expect(seqAndIds(r.events)).toEqual(seqAndIds(got.filter((e) => e.event.organizationId === org)));
        expect(r.more).toBe(false);
      }
      // After stop nothing more arrives; a new follower starts at the new head.
      await follower.stop();
      await log.publish(makeEvent('org1'));
      const second: LoggedEvent[] = [];
      const follower2 = await log.follow((e) => { second.push(e); });
      expect(follower2.startSeq).toBe(await log.headSeq());
      const last = makeEvent('org2');
      await log.publish(last);
      await waitFor(() => second.length === 1, 15_000, 'the second follower');
      await new Promise((r) => setTimeout(r, 200));
      expect(got.length).toBe(sent.length);
      expect(idsOf(second)).toEqual([last.id]);
      expect(second[0]!.seq).toBeGreaterThan(follower2.startSeq);
      await follower2.stop();
      await log.close();
    }));

    it('several followers each get every event after their own startSeq; one stopping leaves the others following', withFixture(async (f) => {
      const log = await f.open();
      const first: LoggedEvent[] = [];
      const second: LoggedEvent[] = [];
      const f1 = await log.follow((e) => { first.push(e); });
      const e1 = makeEvent('org1');
      await log.publish(e1);
      await waitFor(() => first.length === 1, 15_000, 'the first follower');
      const f2 = await log.follow((e) => { second.push(e); });
      expect(f2.startSeq).toBeGreaterThanOrEqual(first[0]!.seq);
      const both = [makeEvent('org2'), makeEvent('org1')];
      for (const e of both) await log.publish(e);
      await waitFor(() => first.length === 3 && second.length === 2, 15_000, 'both followers');
      expect(idsOf(first)).toEqual([e1.id, ...both.map((e) => e.id)]);
      expect(idsOf(second)).toEqual(both.map((e) => e.id));
      expect(second[0]!.seq).toBeGreaterThan(f2.startSeq);
      await f1.stop();
      const e4 = makeEvent('org3');
      await log.publish(e4);
      await waitFor(() => second.length === 3, 15_000, 'the follower left');
      await new Promise((r) => setTimeout(r, 200));
      expect(first.length).toBe(3);
      expect(idsOf(second)).toEqual([...both, e4].map((e) => e.id));
      // With nobody following, a new follower starts afresh at the head.
      await f2.stop();
      await log.publish(makeEvent('org1'));
      const third: LoggedEvent[] = [];
      const f3 = await log.follow((e) => { third.push(e); });
      expect(f3.startSeq).toBe(await log.headSeq());
      const e6 = makeEvent('org2');
      await log.publish(e6);
      await waitFor(() => third.length === 1, 15_000, 'the third follower');
      expect(idsOf(third)).toEqual([e6.id]);
      await f3.stop();
      await log.close();
    }));

    it('a follower whose callback throws keeps following', withFixture(async (f) => {
      const log = await f.open();
      const got: string[] = [];
      const follower = await log.follow((e) => {
        got.push(e.event.id);
        if (got.length === 1) throw new Error('a buggy fan-out');
      });
      const sent = [makeEvent(), makeEvent(), makeEvent()];
      for (const e of sent) await log.publish(e);
      await waitFor(() => got.length === 3, 15_000, 'three events');
      expect(got).toEqual(sent.map((e) => e.id));
      await follower.stop();
      await log.close();
    }));

    it('read returns exactly the organization\'s events in the range, oldest first, paged by limit with `more`', withFixture(async (f) => {
      const log = await f.open();
      const sentA: DomainEvent[] = [];
      const sentB: DomainEvent[] = [];
      for (let i = 0; i < 30; i++) {
        const e = makeEvent(i % 2 === 0 ? 'orgA' : 'orgB', 'ticket.updated', { i });
        (i % 2 === 0 ? sentA : sentB).push(e);
        await log.publish(e);
      }
      const head = await log.headSeq();
      const a = await log.read('orgA', 0);
      const b = await log.read('orgB', 0);
      expect(idsOf(a.events)).toEqual(sentA.map((e) => e.id));
      expect(idsOf(b.events)).toEqual(sentB.map((e) => e.id));
      expect(a.events.map((e) => e.event)).toEqual(sentA);
      expectIncreasing(a.events);
      expectIncreasing(b.events);
      // One log position per event, whatever the organization.
      const seqsA = new Set(a.events.map((e) => e.seq));
      expect(b.events.some((e) => seqsA.has(e.seq))).toBe(false);
      expect(b.events.at(-1)!.seq).toBe(head);
      expect(a).toMatchObject({ headSeq: head, truncated: false, more: false });
      expect(a.oldestSeq).toBeLessThanOrEqual(Math.min(a.events[0]!.seq, b.events[0]!.seq));

      // A range: afterSeq exclusive, untilSeq inclusive.
      const range = await log.read('orgA', a.events[3]!.seq, { untilSeq: a.events[9]!.seq });
      expect(seqAndIds(range.events)).toEqual(seqAndIds(a.events.slice(4, 10)));
      expect(range.more).toBe(false);
      // untilSeq between two of the organization's events, and past the head.
      const between = await log.read('orgA', 0, { untilSeq: a.events[2]!.seq + 1 });
      expect(idsOf(between.events)).toEqual(idsOf(a.events.slice(0, 3)));
      expect(seqAndIds((await log.read('orgA', 0, { untilSeq: head + 1000 })).events)).toEqual(seqAndIds(a.events));

      // Pages of 4: 4 + 4 + 4 + 3, `more` on all but the last.
      const paged: LoggedEvent[] = [];
      const mores: boolean[] = [];
      let after = 0;
      for (;;) {
        const page = await log.read('orgA', after, { limit: 4 });
        paged.push(...page.events);
        mores.push(page.more);
        if (!page.more) break;
        after = page.events.at(-1)!.seq;
      }
      expect(mores).toEqual([true, true, true, false]);
      expect(seqAndIds(paged)).toEqual(seqAndIds(a.events));
      expect((await log.read('orgA', 0, { limit: 15 })).more).toBe(false);
      expect((await log.read('orgA', 0, { limit: 14 })).more).toBe(true);
      // `more` counts only up to untilSeq.
      expect(await log.read('orgA', 0, { untilSeq: a.events[5]!.seq, limit: 6 })).toMatchObject({ more: false });
      const limited = await log.read('orgA', 0, { untilSeq: a.events[5]!.seq, limit: 5 });
      expect(limited.more).toBe(true);
      expect(idsOf(limited.events)).toEqual(idsOf(a.events.slice(0, 5)));

      // Nothing after the head, nothing for an organization without events.
      expect(await log.read('orgA', head)).toMatchObject({ events: [], more: false, truncated: false, headSeq: head });
      expect(await log.read('orgC', 0)).toMatchObject({ events: [], more: false, truncated: false });
      await log.close();
    }));

    it('read refuses invalid arguments', withFixture(async (f) => {
      const log = await f.open();
      await log.publish(makeEvent('org1'));
      await expect(log.read('a.b', 0)).rejects.toThrow(TypeError);
      await expect(log.read('org1', -1)).rejects.toThrow(TypeError);
      await expect(log.read('org1', 1.5)).rejects.toThrow(TypeError);
      await expect(log.read('org1', 0, { limit: 0 })).rejects.toThrow(TypeError);
      await log.close();
    }));

    it('read after retention dropped events says truncated, with the oldest seq still held', withFixture(async (f) => {
      const { retention } = f;
      const log = await retention.open();
      const sent: DomainEvent[] = [];
      let firstSeq = 0;
      for (let i = 0; i < 30; i++) {
        const e = makeEvent('orgR', 'resource.created', { i });
        sent.push(e);
        await log.publish(e);
        if (i === 0) firstSeq = await log.headSeq();
      }
      // Age retention: wait until every event has aged out, so the checks below do not race it.
      const r = await eventually(async () => {
        const res = await log.read('orgR', 0);
        return res.truncated && (retention.kind === 'count' || res.events.length === 0) ? res : undefined;
      }, 30_000, 'retention to drop events');
      expect(r.oldestSeq).toBeGreaterThan(firstSeq);
      const expected = retention.kind === 'count' ? sent.slice(-retention.retained) : [];
      expect(idsOf(r.events)).toEqual(expected.map((e) => e.id));
      for (const e of r.events) expect(e.seq).toBeGreaterThanOrEqual(r.oldestSeq);

      const fresh = [makeEvent('orgR'), makeEvent('orgR'), makeEvent('orgR')];
      for (const e of fresh) await log.publish(e);
      const r2 = await log.read('orgR', 0);
      expect(r2.truncated).toBe(true);
      expect(idsOf(r2.events).slice(-3)).toEqual(fresh.map((e) => e.id));
      // A reader that is not behind the oldest event is not truncated.
      const r3 = await log.read('orgR', r2.oldestSeq - 1);
      expect(r3.truncated).toBe(false);
      expect(seqAndIds(r3.events)).toEqual(seqAndIds(r2.events));
      await log.close();
    }), 40_000);

    const { restartServer } = options;
    if (restartServer !== undefined) {
      it('follow loses and repeats nothing when the server under the log restarts', withFixture(async (f) => {
        const log = await f.open();
        const got: LoggedEvent[] = [];
        const follower = await log.follow((e) => { got.push(e); });
        const published: string[] = [];
        const publish = async (e: DomainEvent) => { await log.publish(e); published.push(e.id); };
        for (let i = 0; i < 20; i++) await publish(makeEvent(i % 2 === 0 ? 'org1' : 'org2'));
        await waitFor(() => got.length === 20, 15_000, 'events before the restart');
        const restarting = restartServer();
        const during = Promise.all(Array.from({ length: 10 }, (_, i) => publish(makeEvent(i % 2 === 0 ? 'org1' : 'org2'))));
        await restarting;
        await during;
        for (let i = 0; i < 20; i++) await publish(makeEvent(i % 2 === 0 ? 'org1' : 'org2'));
        await waitFor(() => got.length >= published.length, 45_000, 'every event after the restart');
        await new Promise((r) => setTimeout(r, 300));
        expect(got.length).toBe(published.length);
        expectIncreasing(got);
        expect(new Set(idsOf(got))).toEqual(new Set(published));
        for (const org of ['org1', 'org2']) {
          const r = await log.read(org, follower.startSeq);
          expect(seqAndIds(r.events)).toEqual(seqAndIds(got.filter((e) => e.event.organizationId === org)));
        }
        await follower.stop();
        await log.close();
      }), 90_000);
    }
  });
}
