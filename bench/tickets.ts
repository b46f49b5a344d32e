/**
 * Tickets: create and list, embedded and Redis, against a bare express
 * endpoint that does one Redis write, all in the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { startNats, startPostgres, startRedis } from '../test/harness/servers.js';
import { clusterEnv } from '../test/harness/use-servers.js';
import { load, report, startBareRedisEndpoint, type LoadResult } from './lib.js';

const OPERATOR = 'bench-operator-token-0123456789';

async function bareBaseline(redisUrl: string): Promise<LoadResult> {
  const bare = await startBareRedisEndpoint(redisUrl);
  const result = await load('bare express + 1 Redis SET', { url: bare.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'x', description: 'y' }) });
  await bare.close();
  return result;
}

async function ticketRun(label: string, env: Record<string, string>): Promise<LoadResult[]> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OPERATOR_TOKEN: OPERATOR, LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...env });
  const running = await startServer(config, { log: silentLogger });
  const base = `http://127.0.0.1:${running.port}`;
  const op = async (path: string, body: unknown) =>
    (await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
  const org = await op('/admin/v1/organizations', { name: 'Bench' });
  const user = await op(`/admin/v1/organizations/${org.id}/users`, { email: 'b@x.io', name: 'B', role: 'admin', password: 'bench password' });
  const key = (await op(`/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes: ['tickets:create', 'tickets:read'] })).key;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const create = await load(`ticket create (${label})`, { url: `${base}/v1/tickets`, method: 'POST', headers, body: JSON.stringify({ subject: 'Printer on fire', description: 'Third floor', priority: 'high' }) });
  const list = await load(`ticket list, limit 20 (${label})`, { url: `${base}/v1/tickets?limit=20`, headers });
  const filtered = await load(`ticket list, status filter (${label})`, { url: `${base}/v1/tickets?status=open&limit=20&page=3`, headers });
  await running.close();
  return [create, list, filtered];
}

export async function run(): Promise<void> {
  const [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-'));
  try {
    const baseline = await bareBaseline(redis.url);
    const rows = [
      ...(await ticketRun('embedded, on disk', { DATA_DIR: join(dir, 'embedded') })),
      // Clustered as deployed: the ticket and its outbox entry in one PostgreSQL transaction, the ticket.* events in JetStream.
      ...(await ticketRun('clustered: PostgreSQL + Redis + NATS', { DATA_DIR: join(dir, 'clustered'), ...clusterEnv({ redis, nats, postgres }, 'tickets'), SECRETS_KEY: 'c'.repeat(64) })),
    ];
    report('Tickets (16 connections, autocannon)', baseline, rows);
  } finally {
    await Promise.all([redis.stop(), nats.stop(), postgres.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
