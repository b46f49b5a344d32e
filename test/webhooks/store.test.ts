import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openNodeDbIn } from '../../src/store/index.js';
import { createSqliteWebhookStore } from '../../src/store/webhooks/sqlite.js';
import { createPostgresWebhookStore } from '../../src/store/webhooks/postgres.js';
import { useRedisClients } from '../harness/use-servers.js';
import { usePostgres } from '../harness/use-postgres.js';
import { makeDelivery, makeRegistration, runWebhookStoreContract } from './store-contract.js';
import { eventually } from '../harness/eventually.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
runWebhookStoreContract('embedded (on disk)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-whstore-'));
  dirs.push(dir);
  return createSqliteWebhookStore(await openNodeDbIn(dir));
});

const redis = useRedisClients();
const postgres = usePostgres();
runWebhookStoreContract('postgres', async () => {
  return createPostgresWebhookStore(await postgres.open(), await redis.client(), { prefix: `t${randomUUID().slice(0, 8)}` });
});

describe('embedded webhook store', () => {
  it('rebuilds the schedule of pending deliveries after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-whstore-'));
    dirs.push(dir);
    const s1 = createSqliteWebhookStore(await openNodeDbIn(dir));
    const r = makeRegistration('orgA');
    await s1.createRegistration(r);
    const d = makeDelivery(r);
    await s1.enqueueDeliveries([d, makeDelivery(r, { status: 'succeeded', nextAttemptAt: null })]);
    // No close: a crash after the acknowledgement.
    const s2 = createSqliteWebhookStore(await openNodeDbIn(dir));
    const lane = { organizationId: 'orgA', registrationId: r.id };
    expect(await s2.claimLanes(Date.now(), 10, 'n', 1000)).toEqual([lane]);
    expect(await s2.dueDeliveries(lane, Date.now(), 10)).toEqual([d.id]);
  });
});

describe('clustered webhook store', () => {
  it('puts pending deliveries back on the schedule when Redis lost it', async () => {
    const db = await postgres.open();
    const client = await redis.client();
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const s1 = createPostgresWebhookStore(db, client, { prefix });
    const r = makeRegistration('orgA');
    await s1.createRegistration(r);
    const d = makeDelivery(r);
    await s1.enqueueDeliveries([d, makeDelivery(r, { status: 'succeeded', nextAttemptAt: null })]);
    // What a Redis restarted without persistence holds.
    await client.del(`${prefix}:wh:lanes`);
    const s2 = createPostgresWebhookStore(db, client, { prefix });
    const lane = { organizationId: 'orgA', registrationId: r.id };
    expect(await s2.claimLanes(Date.now(), 10, 'n', 1000)).toEqual([lane]);
    expect(await s2.dueDeliveries(lane, Date.now(), 10)).toEqual([d.id]);
  });

  it('a registration deleted while its deliveries are enqueued on another node leaves none behind', async () => {
    const db = await postgres.open();
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const [a, b] = [createPostgresWebhookStore(db, await redis.client(), { prefix }), createPostgresWebhookStore(db, await redis.client(), { prefix })];
    for (let i = 0; i < 20; i++) {
      const r = makeRegistration('orgA');
      await a.createRegistration(r);
      await Promise.all([a.enqueueDeliveries([makeDelivery(r), makeDelivery(r)]), b.deleteRegistration('orgA', r.id)]);
      expect((await a.listDeliveries('orgA', r.id, { offset: 0, limit: 10 })).total).toBe(0);
    }
  });

  it('drops finished deliveries past the retention, keeps pending ones', async () => {
    const db = await postgres.open();
    let now = Date.now();
    const s = createPostgresWebhookStore(db, await redis.client(), { prefix: `t${randomUUID().slice(0, 8)}`, retentionMs: 86_400_000, now: () => now });
    const r = makeRegistration('orgA');
    await s.createRegistration(r);
    const old = new Date(now - 2 * 86_400_000).toISOString();
    const done = makeDelivery(r, { status: 'succeeded', nextAttemptAt: null, updatedAt: old });
    const pending = makeDelivery(r, { updatedAt: old });
    await s.enqueueDeliveries([done, pending]);
    now += 61_000;
    await s.enqueueDeliveries([makeDelivery(r)]);
    expect(await s.getDelivery('orgA', done.id)).toBeNull();
    expect(await s.getDelivery('orgA', pending.id)).not.toBeNull();
  });
  it('registrations for fan-out: created, disabled and deleted are seen at once on their node, by another within a second', async () => {
    const db = await postgres.open();
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const [a, b] = [createPostgresWebhookStore(db, await redis.client(), { prefix }), createPostgresWebhookStore(db, await redis.client(), { prefix })];
    const ids = async (s: typeof a) => (await s.fanOutRegistrations('o1')).map((r) => `${r.id}:${r.status}`);
    expect(await ids(a)).toEqual([]);
    expect(await ids(b)).toEqual([]);
    const reg = makeRegistration('o1');
    await a.createRegistration(reg);
    expect(await ids(a)).toEqual([`${reg.id}:active`]);
    await eventually(async () => (await ids(b)).length === 1);
    await a.updateRegistration({ ...reg, status: 'disabled', disabledReason: 'test' });
    expect(await ids(a)).toEqual([`${reg.id}:disabled`]);
    await eventually(async () => (await ids(b))[0] === `${reg.id}:disabled`);
    await b.deleteRegistration('o1', reg.id);
    expect(await ids(b)).toEqual([]);
    await eventually(async () => (await ids(a)).length === 0);
    // The management list is never remembered.
    await a.createRegistration(makeRegistration('o1'));
    expect(await b.listRegistrations('o1')).toHaveLength(1);
  });
});

