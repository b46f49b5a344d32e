import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedEventLog, JetStreamEventLog, type DomainEvent } from '../../src/events/index.js';
import { startNats, type ServerProcess } from '../harness/servers.js';
import { makeEvent, runEventLogContract, waitFor } from './contract.js';

runEventLogContract('embedded (on disk)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-events-'));
  return {
    open: () => EmbeddedEventLog.open(dir),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

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

  it('rolls segments and deletes those every consumer has acknowledged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-events-'));
    try {
      const log = await EmbeddedEventLog.open(dir, { segmentBytes: 2000 });
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
