import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedEventLog, JetStreamEventLog, type DomainEvent, type LoggedEvent } from '../../src/events/index.js';
import { startNats, type ServerProcess } from '../harness/servers.js';
import { openNodeDbIn, type SqliteDb } from '../../src/store/index.js';
import { makeEvent, runEventFeedContract, runEventLogContract, waitFor } from './contract.js';

runEventLogContract('embedded (on disk)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-events-'));
  return {
    open: () => EmbeddedEventLog.open(dir),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

function tempDirFixture<T>(make: (dir: string) => T): T & { cleanup: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'sb-events-'));
  return { ...make(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

runEventFeedContract('embedded (on disk)', async () => tempDirFixture((dir) => ({
  open: () => EmbeddedEventLog.open(join(dir, 'a')),
  retention: { kind: 'count' as const, retained: 10, open: () => EmbeddedEventLog.open(join(dir, 'b'), { replayRetainEvents: 10, segmentBytes: 1500 }) },
})));

runEventLogContract('embedded (in the node database)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-events-'));
  const dbs: SqliteDb[] = [];
  return {
    // Each open is a restart: a new connection to the same file.
    open: () => {
      const db = openNodeDbIn(dir);
      dbs.push(db);
      return EmbeddedEventLog.openSqlite(db);
    },
    cleanup: async () => {
      for (const db of dbs) await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

runEventFeedContract('embedded (in the node database)', async () => tempDirFixture((dir) => ({
  open: () => EmbeddedEventLog.openSqlite(openNodeDbIn(join(dir, 'a'))),
  retention: { kind: 'count' as const, retained: 10, open: () => EmbeddedEventLog.openSqlite(openNodeDbIn(join(dir, 'b')), { replayRetainEvents: 10 }) },
})));

runEventFeedContract('embedded (in memory)', async () => ({
  open: () => EmbeddedEventLog.open(null),
  retention: { kind: 'count', retained: 10, open: () => EmbeddedEventLog.open(null, { replayRetainEvents: 10 }) },
}));

let nats: ServerProcess;
beforeAll(async () => {
  nats = await startNats();
});
afterAll(async () => {
  await nats?.stop();
});

runEventLogContract('jetstream', async () => {
  // A fresh prefix per case: its own stream and consumers on the shared test server.
  const prefix = `t${randomUUID().slice(0, 8)}`;
  return { open: () => JetStreamEventLog.connect(nats.url, { prefix, ackWaitMs: 2000 }) };
});

runEventFeedContract('jetstream', async () => {
  const prefix = `f${randomUUID().slice(0, 8)}`;
  return {
    open: () => JetStreamEventLog.connect(nats.url, { prefix, publishTimeoutMs: 30_000 }),
    // The stream's max age is the retention: five seconds here, so the events published after the
    // old ones aged out stay for the checks that follow, even on a loaded machine.
    retention: { kind: 'age', open: () => JetStreamEventLog.connect(nats.url, { prefix: `${prefix}r`, maxAgeMs: 5000 }) },
  };
}, { restartServer: () => nats.restart() });

describe('embedded event log on disk', () => {
  it('survives a torn final line and keeps appending after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-events-'));
    try {
      const l1 = await EmbeddedEventLog.open(dir);
      const a = makeEvent();
      await l1.publish(a);
      // Simulate a crash in the middle of writing the next line.
      const seg = readdirSync(join(dir, 'segments'))[0]!;
      appendFileSync(join(dir, 'segments', seg), '{"seq":2,"event":{"id":"x"');
      const l2 = await EmbeddedEventLog.open(dir);
      const b = makeEvent();
      await l2.publish(b);
      const l3 = await EmbeddedEventLog.open(dir);
      const got: string[] = [];
      await l3.consume('c', async (e) => { got.push(e.id); });
      await waitFor(() => got.length === 2);
      expect(got).toEqual([a.id, b.id]);
      await l3.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rolls segments and deletes those every consumer has acknowledged (replay retention 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-events-'));
    try {
      const log = await EmbeddedEventLog.open(dir, { segmentBytes: 2000, replayRetainEvents: 1 });
      const got: DomainEvent[] = [];
      const sub = await log.consume('c', async (e) => { got.push(e); });
      for (let i = 0; i < 100; i++) await log.publish(makeEvent('org1', 'resource.updated', { pad: 'x'.repeat(100) }));
      await waitFor(() => got.length === 100);
      await sub.stop();
      await log.close();
      const segments = readdirSync(join(dir, 'segments'));
      // Everything acknowledged: only the active segment (and perhaps its predecessor) is left.
      expect(segments.length).toBeLessThanOrEqual(2);
      const log2 = await EmbeddedEventLog.open(dir);
      const again: string[] = [];
      await log2.consume('c', async (e) => { again.push(e.id); });
      const next = makeEvent();
      await log2.publish(next);
      await waitFor(() => again.length >= 1);
      expect(again).toEqual([next.id]);
      await log2.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('embedded event log: replay retention', () => {
  it('keeps the newest N readable across a restart, though every consumer acknowledged them, and deletes older segments', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-events-'));
    try {
      const opts = { replayRetainEvents: 10, segmentBytes: 1500 };
      const log = await EmbeddedEventLog.open(dir, opts);
      const acked: string[] = [];
      const sub = await log.consume('c', async (e) => { acked.push(e.id); });
      const sent: DomainEvent[] = [];
      for (let i = 0; i < 60; i++) {
        const e = makeEvent(i % 3 === 0 ? 'org2' : 'org1', 'resource.updated', { i });
        sent.push(e);
        await log.publish(e);
      }
      await waitFor(() => acked.length === 60);
      await sub.stop();
      await log.close();

      const log2 = await EmbeddedEventLog.open(dir, opts);
      expect(await log2.headSeq()).toBe(60);
      const newest = sent.slice(-10);
      const r1 = await log2.read('org1', 0);
      const r2 = await log2.read('org2', 0);
      expect(r1).toMatchObject({ oldestSeq: 51, headSeq: 60, truncated: true, more: false });
      expect(r1.events.map((e) => e.event)).toEqual(newest.filter((e) => e.organizationId === 'org1'));
      expect(r2.events.map((e) => e.event)).toEqual(newest.filter((e) => e.organizationId === 'org2'));
      expect((await log2.read('org1', 50)).truncated).toBe(false);
      // Older segments were deleted: what is left on disk holds the newest 10 and not much more.
      const left = readdirSync(join(dir, 'segments'));
      const lines = left.map((n) => readFileSync(join(dir, 'segments', n), 'utf8').split('\n').filter((l) => l !== '').length).reduce((a, b) => a + b, 0);
      expect(lines).toBeGreaterThanOrEqual(10);
      expect(lines).toBeLessThan(30);
      // The consumer still resumes after what it acknowledged, and seqs go on after the head.
      const followed: LoggedEvent[] = [];
      await log2.follow((e) => { followed.push(e); });
      const got: string[] = [];
      await log2.consume('c', async (e) => { got.push(e.id); });
      const next = makeEvent('org1');
      await log2.publish(next);
      await waitFor(() => got.length === 1 && followed.length === 1);
      expect(got).toEqual([next.id]);
      expect(followed[0]!.seq).toBe(61);
      await log2.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps memory bounded by N without consumers, and keeps what a lagging consumer still needs', async () => {
    const log = await EmbeddedEventLog.open(null, { replayRetainEvents: 10 });
    for (let i = 0; i < 500; i++) await log.publish(makeEvent());
    const r = await log.read('org1', 0);
    expect(r.headSeq).toBe(500);
    expect(r.headSeq - r.oldestSeq + 1).toBeGreaterThanOrEqual(10);
    expect(r.headSeq - r.oldestSeq + 1).toBeLessThanOrEqual(20);

    // A consumer stuck on its first event holds everything after it.
    let release!: () => void;
    const stuck = new Promise<void>((res) => { release = res; });
    const seen: number[] = [];
    const sub = await log.consume('slow', async (_e, info) => { seen.push(info.seq); await stuck; }, { concurrency: 1 });
    await waitFor(() => seen.length === 1);
    for (let i = 0; i < 200; i++) await log.publish(makeEvent());
    const held = await log.read('org1', 0);
    expect(held.oldestSeq).toBeLessThanOrEqual(seen[0]!);
    expect(held.events.length).toBe(held.headSeq - held.oldestSeq + 1);
    release();
    // A new consumer starts at the oldest event retained, so it also sees those.
    await waitFor(() => seen.at(-1) === held.headSeq, 15_000, 'the consumer to catch up');
    await new Promise((res) => setTimeout(res, 50));
    // Caught up: memory shrinks back to about the newest N.
    const after = await log.read('org1', 0);
    expect(after.headSeq - after.oldestSeq + 1).toBeLessThanOrEqual(20);
    await sub.stop();
    await log.close();
  });
});

describe('jetstream event log opened by several nodes at once', () => {
  it('lets every node open it when they all find no stream and all create it', async () => {
    const prefix = `s${randomUUID().slice(0, 8)}`;
    const logs = await Promise.all(Array.from({ length: 4 }, () => JetStreamEventLog.connect(nats.url, { prefix })));
    await logs[0]!.publish(makeEvent('orgS'));
    expect((await logs[3]!.read('orgS', 0)).events).toHaveLength(1);
    await Promise.all(logs.map((l) => l.close()));
  });
});

describe('jetstream consumers by type', () => {
  it('takes several types as one durable consumer each and removes a consumer of the same name that took every type', async () => {
    const prefix = `y${randomUUID().slice(0, 8)}`;
    const log = await JetStreamEventLog.connect(nats.url, { prefix, ackWaitMs: 2000 });
    // What an earlier version left: one consumer of this name over every type.
    const old = await log.consume('assign', async () => {});
    await old.stop();
    const got: string[] = [];
    const sub = await log.consume('assign', async (e) => { got.push(e.type); }, { types: ['handover.requested', 'conversation.resolved'] });
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const { connect } = await import('@nats-io/transport-node');
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      const names: string[] = [];
      for await (const c of jsm.consumers.list(log.stream)) names.push(`${c.name} ${c.config.filter_subject}`);
      expect(names.sort()).toEqual([`assign-conversation_resolved ${prefix}.events.*.conversation.resolved`, `assign-handover_requested ${prefix}.events.*.handover.requested`]);
    } finally {
      await nc.close();
    }
    for (const t of ['ticket.created', 'handover.requested', 'message.sent', 'conversation.resolved']) await log.publish(makeEvent('orgY', t));
    await waitFor(() => got.length === 2, 15_000, 'the two events of the types');
    expect(got.sort()).toEqual(['conversation.resolved', 'handover.requested']);
    await sub.stop();
    await log.close();
  });

  it('acknowledges every event its handlers finished, many at once: nothing is delivered again after a restart', async () => {
    const prefix = `k${randomUUID().slice(0, 8)}`;
    const open = () => JetStreamEventLog.connect(nats.url, { prefix, ackWaitMs: 1000 });
    const log = await open();
    const sent = Array.from({ length: 300 }, () => makeEvent('orgK'));
    await Promise.all(sent.map((e) => log.publish(e)));
    const got = new Set<string>();
    const sub = await log.consume('c', async (e) => { got.add(e.id); }, { concurrency: 64 });
    await waitFor(() => got.size === sent.length, 15_000, 'every event');
    // Past the ack wait: an event whose ack was never sent would be delivered again now.
    await new Promise((r) => setTimeout(r, 1500));
    await sub.stop();
    await log.close();
    const log2 = await open();
    const again: string[] = [];
    const sub2 = await log2.consume('c', async (e) => { again.push(e.id); });
    const last = makeEvent('orgK');
    await log2.publish(last);
    await waitFor(() => again.includes(last.id), 15_000, 'the new event');
    await new Promise((r) => setTimeout(r, 1500));
    expect(again).toEqual([last.id]);
    await sub2.stop();
    await log2.close();
  });
});

describe('jetstream event log across a NATS restart', () => {
  it('loses no published event and resumes the consumer when nats-server is killed and restarted', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}`;
    const log = await JetStreamEventLog.connect(nats.url, { prefix, ackWaitMs: 2000, publishTimeoutMs: 20_000 });
    const got = new Set<string>();
    const sub = await log.consume('c', async (e) => { got.add(e.id); });
    const published: string[] = [];
    for (let i = 0; i < 20; i++) {
      const e = makeEvent();
      await log.publish(e);
      published.push(e.id);
    }
    const restarting = nats.restart();
    // Publishes during the outage wait for the server and then succeed.
    const during = Array.from({ length: 10 }, () => makeEvent());
    const duringDone = Promise.all(during.map(async (e) => { await log.publish(e); published.push(e.id); }));
    await restarting;
    await duringDone;
    for (let i = 0; i < 20; i++) {
      const e = makeEvent();
      await log.publish(e);
      published.push(e.id);
    }
    await waitFor(() => published.every((id) => got.has(id)), 30_000, 'every event after restart');
    await sub.stop();
    await log.close();
  }, 60_000);
});

describe('embedded event log in the node database', () => {
  it('commits an event together with the store writes of the same turn (one commit), and keeps it across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-events-tx-'));
    try {
      const db = openNodeDbIn(dir);
      const log = await EmbeddedEventLog.openSqlite(db);
      const before = db.stats.commits;
      const event = makeEvent('org-tx');
      await Promise.all([db.put('orgs', 'org-tx', { id: 'org-tx' }), log.publish(event)]);
      expect(db.stats.commits).toBe(before + 1);
      await log.close();
      const again = await EmbeddedEventLog.openSqlite(openNodeDbIn(dir));
      expect((await again.read('org-tx', 0)).events.map((e) => e.event.id)).toEqual([event.id]);
      await again.close();
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
