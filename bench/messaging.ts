/**
 * Chat messaging: template sends through REST → conversation actor → Graph
 * adapter → sandbox network (over HTTP), and signed inbound webhook messages
 * through the receiver → actor, embedded and clustered, beside a bare
 * express endpoint doing one Redis write, all in the same run.
 *
 *   BENCH_SECONDS=5 npm run bench -- messaging
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer, type RunningServer } from '../src/server.js';
import { signHubSignature } from '../src/network/index.js';
import type { WhatsAppChannel } from '../src/store/channels/port.js';
import { startNats, startRedis } from '../test/harness/servers.js';
import { loadVaried as loadVariedBodies, report, startBareRedisEndpoint, type LoadResult } from './lib.js';

const OPERATOR = 'bench-operator-token-0123456789';
const CONNECTIONS = 16;

const loadVaried = (name: string, url: string, headers: Record<string, string>, next: () => { body: string; headers?: Record<string, string> }) =>
  loadVariedBodies(name, url, headers, next, CONNECTIONS);

async function bareBaseline(redisUrl: string): Promise<LoadResult> {
  const bare = await startBareRedisEndpoint(redisUrl);
  let i = 0;
  const result = await loadVaried('bare express + 1 Redis SET', bare.url, { 'content-type': 'application/json' }, () => ({ body: JSON.stringify({ to: String(4915100000000 + (i++ % 1000)) }) }));
  await bare.close();
  return result;
}

interface Setup {
  running: RunningServer[];
  base: string;
  key: string;
  channelId: string;
  channel: WhatsAppChannel;
}

async function setup(envs: Record<string, string>[]): Promise<Setup> {
  const running: RunningServer[] = [];
  for (const env of envs) {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      OPERATOR_TOKEN: OPERATOR,
      LOG_LEVEL: 'silent',
      SEED_DEMO: 'false',
      TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000000',
      SANDBOX_MAX_MPS: '100000',
      ...env,
    });
    running.push(await startServer(config, { log: silentLogger }));
  }
  const base = `http://127.0.0.1:${running[0]!.port}`;
  const op = async (path: string, body: unknown) =>
    (await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
  const org = await op('/admin/v1/organizations', { name: 'Bench' });
  const user = await op(`/admin/v1/organizations/${org.id}/users`, { email: 'b@x.io', name: 'B', role: 'admin', password: 'bench password' });
  const key = (await op(`/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes: ['message:send'] })).key as string;
  const ch = await op(`/admin/v1/organizations/${org.id}/channels`, { kind: 'whatsapp_cloud', name: 'Bench', network: 'sandbox' });
  await op(`/admin/v1/organizations/${org.id}/credits/top-up`, { amount: 1_000_000_000 });
  const channel = (await running[0]!.services.messaging.stores.channels.get(org.id, ch.id)) as WhatsAppChannel;
  return { running, base, key, channelId: ch.id, channel };
}

async function drain(s: Setup): Promise<void> {
  for (const r of s.running) await r.services.messaging.sandbox?.idle(30_000);
}

function templateLoad(label: string, s: Setup): Promise<LoadResult> {
  let i = 0;
  return loadVaried(`template send (${label})`, `${s.base}/v2/wa/template`, { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }, () => ({
    body: JSON.stringify({
      channelId: s.channelId,
      to: String(4915100000000 + (i++ % 2000)),
      template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: `A-${i}` }, { type: 'text', text: 'Monday' }] }] },
    }),
  }));
}

async function messagingRun(label: string, s: Setup): Promise<LoadResult[]> {
  const sends = await templateLoad(label, s);
  await drain(s);
  let j = 0;
  const run = Date.now().toString(36);
  const inbound = await loadVaried(`inbound webhook message (${label})`, `${s.base}/webhooks/whatsapp/${s.channelId}`, { 'content-type': 'application/json' }, () => {
    j++;
    const from = String(4917100000000 + (j % 2000));
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: s.channel.businessAccountId,
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: s.channel.displayPhoneNumber, phone_number_id: s.channel.phoneNumberId },
                contacts: [{ profile: { name: 'Bench' }, wa_id: from }],
                messages: [{ from, id: `wamid.bench-${run}-${j}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: 'Where is my order?' } }],
              },
            },
          ],
        },
      ],
    });
    return { body, headers: { 'x-hub-signature-256': signHubSignature(s.channel.credentials.appSecret, body) } };
  });
  return [sends, inbound];
}

export async function run(): Promise<void> {
  const [redis, nats] = await Promise.all([startRedis(), startNats()]);
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-msg-'));
  try {
    const baseline = await bareBaseline(redis.url);
    const embedded = await setup([{ DATA_DIR: dir }]);
    const rows = await messagingRun('embedded, on disk', embedded);
    await drain(embedded);
    for (const r of embedded.running) await r.close();
    // The same send path with the sandbox's sent/delivered/read webhooks held back past the run:
    // what one send costs on its own, without the three status updates it brings back.
    const quietDir = mkdtempSync(join(tmpdir(), 'sb-bench-msg-'));
    const quiet = await setup([{ DATA_DIR: quietDir, SANDBOX_STATUS_DELAY_MS: '60000' }]);
    rows.push(await templateLoad('embedded, status webhooks held back', quiet));
    for (const r of quiet.running) await r.close();
    rmSync(quietDir, { recursive: true, force: true });
    const clusterEnv = (id: string) => ({ REDIS_URL: redis.url, NATS_URL: nats.url, NODE_ID: id, SECRETS_KEY: '3'.repeat(64), SANDBOX_NETWORK: 'true', KEY_PREFIX: 'bench' });
    const clustered = await setup([clusterEnv('b1'), clusterEnv('b2')]);
    rows.push(...(await messagingRun('clustered, 2 nodes, Redis + NATS', clustered)));
    await drain(clustered);
    for (const r of clustered.running) await r.close();
    report(`Messaging (${CONNECTIONS} connections, autocannon; sends spread over 2000 contacts; sandbox reports sent/delivered/read for every send)`, baseline, rows);
  } finally {
    await Promise.all([redis.stop(), nats.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
