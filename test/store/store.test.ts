import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, createSqliteStore, createPostgresStore, openNodeDbIn } from '../../src/store/index.js';
import { usePostgres } from '../harness/use-postgres.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';
import { runStoreContract } from './contract.js';

runStoreContract('embedded (in memory)', async () => createSqliteStore(await openNodeDbIn(null)));

const dirs: string[] = [];
runStoreContract('embedded (on disk)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-store-'));
  dirs.push(dir);
  return createSqliteStore(await openNodeDbIn(dir));
});
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

let redis: ServerProcess;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});
const postgres = usePostgres();
runStoreContract('postgres', async () => {
  const db = await postgres.open();
  const client = await connectRedis(redis.url);
  const store = createPostgresStore(db, client, { prefix: `t${randomUUID().slice(0, 8)}` });
  return { ...store, close: async () => { await db.close(); await client.close(); } };
});

describe('embedded store durability', () => {
  it('keeps every acknowledged write across a restart, with and without a clean close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-durable-'));
    try {
      const db1 = await openNodeDbIn(dir);
      const s1 = createSqliteStore(db1);
      await s1.organizations.create({ id: 'o1', name: 'A', createdAt: new Date().toISOString() });
      const base = { _id: 'x', title: 't', description: 'd', status: 'open' as const, priority: 'low' as const, assigneeId: null, audienceId: null, audienceExternalId: null, organizationId: 'o1', resolutionDate: null, createdBy: null, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() };
      const t1 = await s1.tickets.create(base, { id: 'e1', type: 'ticket.created', createdAt: base.createdAt });
      await s1.tickets.update('o1', t1.ticketId, (t) => ({ ...t, status: 'resolved' }), { id: 'e2', type: 'ticket.updated', createdAt: base.createdAt });
      // No close: simulates a crash after the acknowledgements.
      const s2 = createSqliteStore(await openNodeDbIn(dir));
      expect((await s2.tickets.get('o1', t1.ticketId))?.status).toBe('resolved');
      expect((await s2.outbox.peek('o1', 10)).map((e) => e.event.id)).toEqual(['e1', 'e2']);
      const t2 = await s2.tickets.create(base, { id: 'e3', type: 'ticket.created', createdAt: base.createdAt });
      expect(t2.ticketId).not.toBe(t1.ticketId);
      await s2.close();
      const s3 = createSqliteStore(await openNodeDbIn(dir));
      expect((await s3.tickets.list({ organizationId: 'o1', offset: 0, limit: 10 })).tickets.map((t) => t.ticketId)).toEqual([t2.ticketId, t1.ticketId]);
      expect((await s3.outbox.peek('o1', 10)).map((e) => e.event.id)).toEqual(['e1', 'e2', 'e3']);
      await s3.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('embedded store on a full disk', () => {
  it('answers 503 for a write that found no room, keeps nothing of it, and takes writes again once there is room', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-full-'));
    try {
      const db = openNodeDbIn(dir);
      const store = createSqliteStore(db);
      await store.organizations.create({ id: 'o1', name: 'kept', createdAt: new Date().toISOString() });
      // SQLite's own page limit stands in for a full disk: a write past it fails with SQLITE_FULL.
      const pages = db.raw.pragma('page_count', { simple: true }) as number;
      db.raw.pragma(`max_page_count = ${pages}`);
      const big = 'x'.repeat(64 * 1024);
      await expect(store.organizations.create({ id: 'o2', name: big, createdAt: new Date().toISOString() })).rejects.toMatchObject({ status: 503, code: 'storage_unavailable' });
      expect(await store.organizations.get('o2')).toBeNull();
      await store.ping();
      db.raw.pragma('max_page_count = 1073741823');
      await store.organizations.create({ id: 'o3', name: 'after', createdAt: new Date().toISOString() });
      await store.close();
      const reopened = createSqliteStore(openNodeDbIn(dir));
      expect((await reopened.organizations.list()).map((o) => o.name)).toEqual(['kept', 'after']);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
