/**
 * Inbound customer messages from customers who hide their number (the
 * webhook names them by business-scoped user id only) against today's phone
 * payloads, on the same node, in one run, embedded and clustered:
 *
 *   BENCH_SECONDS=5 npm run bench -- identity
 *
 * One node per mode (embedded: its SQLite database on disk, as `npm start`
 * runs; clustered: PostgreSQL, Redis and NATS servers the bench starts), a
 * sandbox WhatsApp channel, and autocannon posting signed network webhooks
 * (Meta's `messages` shape, one text message each, a unique message id,
 * 2,000 customers in turn) to `/webhooks/whatsapp/{channelId}`: the whole
 * inbound path, with the customer placed by `ContactRepo.identify`.
 *
 * Three payloads, each customer set warmed first (their first message, which
 * links their ids, is not measured): phone with BSUID (what Meta has sent
 * since April 2026), BSUID only (`from_user_id`, `contacts[].user_id`, no
 * `from`, no `wa_id`), and phone only (the payload before BSUIDs, the
 * baseline). Each target runs once per round (BENCH_ROUNDS, default 3) and
 * reports its median round; the aim is 0.9 of the phone payload for BSUID
 * only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { signHubSignature } from '../src/network/signature.js';
import type { WhatsAppChannel } from '../src/store/channels/port.js';
import { startNats, startPostgres, startRedis } from '../test/harness/servers.js';
import { clusterEnv } from '../test/harness/use-servers.js';
import { loadVaried, medianRun, report, type LoadResult } from './lib.js';

type Shape = 'phone' | 'both' | 'bsuid';
const CUSTOMERS = 2000;

async function targets(label: string, env: Record<string, string>) {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OPERATOR_TOKEN: 'bench-operator-token-0123456789', LOG_LEVEL: 'silent', SEED_DEMO: 'false', SANDBOX_NETWORK: 'true', ...env });
  const running = await startServer(config, { log: silentLogger });
  const s = running.services;
  const org = await s.accounts.createOrganization('Bench');
  const created = await s.messaging.channels.create(org.id, { kind: 'whatsapp_cloud', name: 'Bench', network: 'sandbox' });
  const channel = (await s.messaging.stores.channels.get(org.id, created.id)) as WhatsAppChannel;
  const url = `${running.url.replace('localhost', '127.0.0.1')}/webhooks/whatsapp/${channel.id}`;
  let seq = 0;
  // Each shape has customers of its own, so every measured message goes to a person already placed.
  const body = (shape: Shape, n: number) => {
    const i = n % CUSTOMERS;
    const phone = `4917${shape === 'phone' ? 1 : shape === 'both' ? 2 : 3}${String(i).padStart(7, '0')}`;
    const userId = `US.${shape === 'both' ? 2 : 3}${String(i).padStart(19, '0')}`;
    const contact: Record<string, unknown> = { profile: { name: 'Kim', ...(shape === 'bsuid' ? { username: `kim${i}` } : {}) } };
    if (shape !== 'bsuid') contact.wa_id = phone;
    if (shape !== 'phone') contact.user_id = userId;
    const message: Record<string, unknown> = { id: `wamid.bench.${process.pid}.${label.length}.${seq++}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: `Hi, where is my order ${n}?` } };
    if (shape !== 'bsuid') message.from = phone;
    if (shape !== 'phone') message.from_user_id = userId;
    const text = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [{ id: channel.businessAccountId, changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001111', phone_number_id: channel.phoneNumberId }, contacts: [contact], messages: [message] } }] }],
    });
    return { body: text, headers: { 'x-hub-signature-256': signHubSignature(channel.credentials.appSecret, text) } };
  };
  const headers = { 'content-type': 'application/json' };
  const warm = async (shape: Shape) => {
    for (let i = 0; i < CUSTOMERS; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => fetch(url, { method: 'POST', headers: { ...headers, ...body(shape, i + k).headers }, body: body(shape, i + k).body })));
    }
  };
  for (const shape of ['phone', 'both', 'bsuid'] as const) await warm(shape);
  let n = 0;
  const run = (shape: Shape, name: string) => loadVaried(`${name} (${label})`, url, headers, () => body(shape, n++));
  return { run, close: () => running.close() };
}

export async function run(): Promise<void> {
  const [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-identity-'));
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  try {
    for (const [label, env] of [
      ['embedded, on disk', { DATA_DIR: join(dir, 'embedded') }],
      ['clustered, 1 node', { DATA_DIR: join(dir, 'clustered'), ...clusterEnv({ redis, nats, postgres }, 'identity'), SECRETS_KEY: 'c'.repeat(64) }],
    ] as const) {
      const t = await targets(label, env);
      try {
        const runs: Record<Shape, LoadResult[]> = { phone: [], both: [], bsuid: [] };
        for (let r = 0; r < rounds; r++) {
          // Alternating order: the database grows through the run.
          const order: Shape[] = r % 2 === 0 ? ['phone', 'bsuid', 'both'] : ['both', 'bsuid', 'phone'];
          for (const shape of order) runs[shape].push(await t.run(shape, { phone: 'phone only (before BSUIDs)', both: 'phone and BSUID', bsuid: 'BSUID only, number hidden' }[shape]));
        }
        report(`Inbound messages by customer identity (${label}, 16 connections, median of ${rounds} rounds)`, medianRun(runs.phone), [medianRun(runs.bsuid), medianRun(runs.both), ...runs.bsuid, ...runs.phone]);
      } finally {
        await t.close();
      }
    }
  } finally {
    await Promise.all([redis.stop(), nats.stop(), postgres.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
