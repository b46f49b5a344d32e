import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { EmbeddedEventLog, JetStreamEventLog, type DomainEvent, type EventLog } from '../../src/events/index.js';
import { closeNodeBacking, connectRedis, openNodeBacking, createPostgresWebhookStore, openWebhookStores, PgDb, NODE_PG_MIGRATIONS, type RedisClient } from '../../src/store/index.js';
import { generateSecret } from '../../src/webhooks/index.js';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually } from '../events/contract.js';
import { startReceiver, type TestReceiver } from './receiver.js';
import { makeRegistration } from './store-contract.js';
import { startHarness } from './setup.js';

const fixture = fileURLToPath(new URL('./fixtures/dispatcher-node.ts', import.meta.url));
const children = new Set<ChildProcess>();

/** Starts a dispatching node in its own process; resolves once it consumes. */
function startNode(env: Record<string, string>): Promise<ChildProcess> {
  const p = spawn(process.execPath, ['--import', 'tsx', fixture], { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(p);
  p.once('exit', () => children.delete(p));
  let err = '';
  p.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-4000); });
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`node did not start: ${err}`)), 30_000);
    p.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) {
        clearTimeout(t);
        resolve(p);
      }
    });
    p.once('exit', (code) => { clearTimeout(t); reject(new Error(`node exited with ${code}: ${err}`)); });
  });
}

function kill(p: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((r) => { p.once('exit', () => r()); p.kill(signal); });
}

afterAll(async () => {
  for (const c of children) await kill(c, 'SIGKILL');
});

const baseEnv = { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_RETRY_MAX_DELAY_MS: '500', WEBHOOK_CONCURRENCY_PER_ENDPOINT: '1' };

function event(org: string, i: number): DomainEvent {
  return { id: randomUUID(), type: 'resource.updated', organizationId: org, createdAt: new Date().toISOString(), data: { i } };
}

async function slowReceivers(n: number): Promise<TestReceiver[]> {
  const rs: TestReceiver[] = [];
  for (let i = 0; i < n; i++) {
    const r = await startReceiver();
    r.behave(async () => {
      await new Promise((res) => setTimeout(res, 40));
      return { status: 200 };
    });
    rs.push(r);
  }
  return rs;
}

function expectAllDelivered(receivers: TestReceiver[], ids: string[]) {
  for (const r of receivers) {
    const got = r.delivered();
    const missing = ids.filter((id) => !got.has(id));
    expect(missing).toEqual([]);
    for (const q of r.requests) expect(q.signaturesValid).toBe(true);
  }
}

describe('a dispatching node killed with SIGKILL mid-batch', () => {
  it('embedded: the restarted node delivers every event (duplicates only for what was in flight)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-kill-'));
    const receivers = await slowReceivers(2);
    try {
      const env = { ...baseEnv, DATA_DIR: dir };
      const config = loadConfig(env);
      const backing = await openNodeBacking(config);
      const stores = await openWebhookStores(config, backing);
      for (const r of receivers) {
        const reg = makeRegistration('orgK', { url: r.url, secret: generateSecret(), createdAt: new Date(Date.now() - 1000).toISOString() });
        r.setSecret(reg.secret);
        await stores.webhooks.createRegistration(reg);
      }
      await stores.close();
      if (backing.kind !== 'sqlite') throw new Error('embedded expected');
      // The node's event log is in its database.
      const log = await EmbeddedEventLog.openSqlite(backing.db);
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) {
        const e = event('orgK', i);
        await log.publish(e);
        ids.push(e.id);
      }
      await log.close();
      await closeNodeBacking(backing);

      const first = await startNode(env);
      await eventually(async () => (receivers[0]!.delivered().size >= 8 ? true : undefined), 20_000, 'some deliveries');
      await kill(first, 'SIGKILL');
      const before = receivers.map((r) => r.delivered().size);
      expect(before.every((n) => n < 40)).toBe(true);

      const second = await startNode(env);
      await eventually(async () => (receivers.every((r) => r.delivered().size === 40) ? true : undefined), 30_000, 'every event after restart');
      expectAllDelivered(receivers, ids);
      const duplicates = receivers.flatMap((r) => [...r.delivered().values()].filter((n) => n > 1));
      // Concurrency 1 per registration: at most the one request in flight per registration is repeated.
      expect(duplicates.length).toBeLessThanOrEqual(receivers.length);
      await kill(second, 'SIGTERM');
    } finally {
      for (const r of receivers) await r.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  describe('clustered (PostgreSQL + Redis + JetStream)', () => {
    const servers = useClusterServers();
    /** The webhook store the nodes of `env` share (the schema they migrate, on their Redis). */
    const clusteredDb = (env: Record<string, string>) => PgDb.open(servers.postgres.url, { migrations: NODE_PG_MIGRATIONS, schema: env.DATABASE_SCHEMA, poolSize: 2 });

    it('another node takes over the dead one\'s lanes and events: everything arrives', async () => {
      const prefix = `k${randomUUID().slice(0, 6)}`;
      const env = { ...baseEnv, ...servers.env(prefix), EVENTS_ACK_WAIT_MS: '2000', SECRETS_KEY: '5'.repeat(64) };
      const receivers = await slowReceivers(3);
      const client: RedisClient = await connectRedis(servers.redis.url);
      const db = await clusteredDb(env);
      let log: EventLog | undefined;
      try {
        const store = createPostgresWebhookStore(db, client, { prefix });
        for (const r of receivers) {
          const reg = makeRegistration('orgC', { url: r.url, secret: generateSecret(), createdAt: new Date(Date.now() - 1000).toISOString() });
          r.setSecret(reg.secret);
          await store.createRegistration(reg);
        }
        const a = await startNode({ ...env, NODE_ID: 'a' });
        const b = await startNode({ ...env, NODE_ID: 'b' });
        log = await JetStreamEventLog.connect(servers.nats.url, { prefix });
        const ids: string[] = [];
        for (let i = 0; i < 40; i++) {
          const e = event('orgC', i);
          await log.publish(e);
          ids.push(e.id);
        }
        await eventually(async () => (receivers.reduce((n, r) => n + r.delivered().size, 0) >= 20 ? true : undefined), 20_000, 'some deliveries');
        await kill(a, 'SIGKILL');
        expect(receivers.some((r) => r.delivered().size < 40)).toBe(true);
        await eventually(async () => (receivers.every((r) => r.delivered().size === 40) ? true : undefined), 45_000, 'every event after the kill');
        expectAllDelivered(receivers, ids);
        await kill(b, 'SIGTERM');
      } finally {
        await log?.close();
        await client.close();
        await db.close();
        for (const r of receivers) await r.close();
      }
    }, 90_000);

    it('NATS restarted mid-run: nothing published is lost', async () => {
      const prefix = `n${randomUUID().slice(0, 6)}`;
      const client = await connectRedis(servers.redis.url);
      const db = await clusteredDb(servers.env(prefix));
      const events = await JetStreamEventLog.connect(servers.nats.url, { prefix, ackWaitMs: 2000, publishTimeoutMs: 20_000 });
      const harness = await startHarness({ store: createPostgresWebhookStore(db, client, { prefix }), events });
      const r = await startReceiver();
      try {
        await harness.register('orgN', r);
        const ids: string[] = [];
        const publish = async (i: number) => { ids.push((await harness.publish('orgN', 'resource.updated', { i })).id); };
        for (let i = 0; i < 20; i++) await publish(i);
        const restarting = servers.nats.restart();
        const during = Promise.all(Array.from({ length: 10 }, (_, i) => publish(100 + i)));
        await restarting;
        await during;
        for (let i = 0; i < 20; i++) await publish(200 + i);
        await eventually(async () => (ids.every((id) => r.delivered().has(id)) ? true : undefined), 45_000, 'every event after the NATS restart');
        expect(ids).toHaveLength(50);
        expect(r.requests.every((q) => q.signaturesValid)).toBe(true);
      } finally {
        await harness.close();
        await client.close();
        await db.close();
        await r.close();
      }
    }, 90_000);
  });
});
