/**
 * Tickets: create and list, embedded and clustered, against a bare express
 * endpoint that does one Redis write, all in the same run: every row runs in
 * each of BENCH_ROUNDS interleaved rounds (default 3) and reports its median.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { startNats, startPostgres, startRedis } from '../test/harness/servers.js';
import { clusterEnv } from '../test/harness/use-servers.js';
import { inRounds, report, startBareRedisEndpoint, type LoadTarget } from './lib.js';

const OPERATOR = 'bench-operator-token-0123456789';

/** A running service with an organization and a key: its create and list targets. */
async function ticketTargets(label: string, env: Record<string, string>): Promise<{ targets: LoadTarget[]; close(): Promise<void> }> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OPERATOR_TOKEN: OPERATOR, LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...env });
  const running = await startServer(config, { log: silentLogger });
  const base = `http://127.0.0.1:${running.port}`;
  const op = async (path: string, body: unknown) =>
    (await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
  const org = await op('/admin/v1/organizations', { name: 'Bench' });
  const user = await op(`/admin/v1/organizations/${org.id}/users`, { email: 'b@x.io', name: 'B', role: 'admin', password: 'bench password' });
  const key = (await op(`/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes: ['tickets:create', 'tickets:read'] })).key;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return {
    targets: [
      { name: `ticket create (${label})`, opts: { url: `${base}/v1/tickets`, method: 'POST', headers, body: JSON.stringify({ subject: 'Printer on fire', description: 'Third floor', priority: 'high' }) } },
      { name: `ticket list, limit 20 (${label})`, opts: { url: `${base}/v1/tickets?limit=20`, headers } },
      { name: `ticket list, status filter (${label})`, opts: { url: `${base}/v1/tickets?status=open&limit=20&page=3`, headers } },
    ],
    close: () => running.close(),
  };
}

export async function run(): Promise<void> {
  const [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-'));
  const bare = await startBareRedisEndpoint(redis.url);
  const embedded = await ticketTargets('embedded, on disk', { DATA_DIR: join(dir, 'embedded') });
  // Clustered as deployed: the ticket and its outbox entry in one PostgreSQL transaction, the ticket.* events in JetStream.
  const clustered = await ticketTargets('clustered: PostgreSQL + Redis + NATS', { DATA_DIR: join(dir, 'clustered'), ...clusterEnv({ redis, nats, postgres }, 'tickets'), SECRETS_KEY: 'c'.repeat(64) });
  try {
    const baselineTarget: LoadTarget = { name: 'bare express + 1 Redis SET', opts: { url: bare.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'x', description: 'y' }) } };
    const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
    // The creates on either side of the baseline in each round: their ratios are the aims.
    const [embeddedCreate, baseline, clusteredCreate, ...lists] = await inRounds([embedded.targets[0]!, baselineTarget, clustered.targets[0]!, ...embedded.targets.slice(1), ...clustered.targets.slice(1)], rounds);
    report(`Tickets (16 connections, autocannon, median of ${rounds} interleaved rounds)`, baseline!, [embeddedCreate!, clusteredCreate!, ...lists]);
  } finally {
    await embedded.close();
    await clustered.close();
    await bare.close();
    await Promise.all([redis.stop(), nats.stop(), postgres.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
