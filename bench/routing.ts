/**
 * Inbound customer messages with 0, 10 and 100 automation rules on the
 * organization, against the same node with none, measured in one run:
 *
 *   BENCH_SECONDS=5 npm run bench -- routing
 *
 * One embedded node in this process (its SQLite database in memory by
 * default, so that the disk's fsync, shared with whatever else runs on the
 * machine, does not drown what rules cost; BENCH_ROUTING_DATA_DIR=disk puts
 * it in a temporary DATA_DIR with SQLITE_SYNCHRONOUS=FULL as `npm start`
 * runs), a sandbox WhatsApp
 * channel, and autocannon posting signed network webhooks (the Cloud API's
 * `messages` shape, one text message each, a unique message id, 2,000
 * customers in turn) to `/webhooks/whatsapp/{channelId}`: the whole inbound
 * path (signature, parse, the contact's conversation actor with its state
 * write, event and message append, the conversation index). The rules are
 * the kinds a business writes (words, a pattern, a quick-reply payload,
 * message types, a contact attribute behind a text test) and none of them
 * matches the messages, so the rows measure evaluating rules on every
 * message, not what their actions cost. Runs of none / 10 / 100 and then
 * 100 / 10 / none (the database grows through the run; the mirrored order
 * gives each count the same mean position), each after a warm-up; the
 * ratios are of each count's mean against the mean without rules, and the
 * single runs show the noise.
 *
 * Then the rules' own cost, without the node: the time to evaluate the same
 * 10 and 100 rules against one message (20,000 messages each, in this
 * process), what each row above adds per message.
 *
 * BENCH_ROUTING_CONNECTIONS sets the concurrent connections (default 16).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { signHubSignature } from '../src/network/signature.js';
import { firingRules, type AutomationRule } from '../src/domain/automation.js';
import type { WhatsAppChannel } from '../src/store/channels/port.js';
import { loadVaried, report, type LoadResult } from './lib.js';

function rulesOf(n: number, org: string, agentId: string): AutomationRule[] {
  const at = new Date().toISOString();
  return Array.from({ length: n }, (_, i): AutomationRule => {
    const base = { id: `rule_${i}`, organizationId: org, name: `rule ${i}`, enabled: true, stop: false, createdAt: at, updatedAt: at };
    switch (i % 5) {
      case 0:
        return { ...base, conditions: [{ field: 'text', operator: 'contains', value: ['refund', 'cancel my', 'complaint', `word${i}`] }], actions: [{ type: 'request_handover' }] };
      case 1:
        return { ...base, conditions: [{ field: 'text', operator: 'matches', value: `\\bA-\\d{6}-${i}\\b` }], actions: [{ type: 'webhook', event: `order_${i}` }] };
      case 2:
        return { ...base, conditions: [{ field: 'payload', operator: 'equals', value: `Talk to an agent ${i}` }], actions: [{ type: 'request_handover' }, { type: 'auto_reply', text: 'An agent will be with you shortly.' }], stop: true };
      case 3:
        return { ...base, conditions: [{ field: 'type', operator: 'in', value: ['image', 'document'] }], actions: [{ type: 'webhook', event: `media_${i}` }] };
      default:
        return { ...base, conditions: [{ field: 'text', operator: 'contains', value: `urgent${i}` }, { field: 'attribute.tier', operator: 'equals', value: 'gold' }], actions: [{ type: 'assign', agentId }] };
    }
  });
}

export async function run(): Promise<void> {
  const onDisk = process.env.BENCH_ROUTING_DATA_DIR === 'disk';
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-routing-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: onDisk ? dir : ':memory:', OPERATOR_TOKEN: 'bench-operator-token-0123456789', LOG_LEVEL: 'silent', SEED_DEMO: 'false', SANDBOX_NETWORK: 'true' });
  const running = await startServer(config, { log: silentLogger });
  try {
    const s = running.services;
    const org = await s.accounts.createOrganization('Bench');
    const admin = await s.accounts.createUser(org.id, { email: 'admin@bench.test', name: 'Admin', role: 'admin', password: 'a long bench password' });
    const created = await s.messaging.channels.create(org.id, { kind: 'whatsapp_cloud', name: 'Bench', network: 'sandbox' });
    const channel = (await s.messaging.stores.channels.get(org.id, created.id)) as WhatsAppChannel;
    const url = `${running.url.replace('localhost', '127.0.0.1')}/webhooks/whatsapp/${channel.id}`;
    const connections = Number(process.env.BENCH_ROUTING_CONNECTIONS ?? 16);
    let seq = 0;
    const next = () => {
      const n = seq++;
      const from = `49170${String(n % 2000).padStart(7, '0')}`;
      const body = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: channel.businessAccountId,
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: channel.displayPhoneNumber ?? '15550001111', phone_number_id: channel.phoneNumberId },
                  contacts: [{ profile: { name: 'Kim' }, wa_id: from }],
                  messages: [{ from, id: `wamid.bench.${process.pid}.${n}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: `Hi, where is my order ${n}? It was due on Monday.` } }],
                },
              },
            ],
          },
        ],
      });
      return { body, headers: { 'x-hub-signature-256': signHubSignature(channel.credentials.appSecret, body) } };
    };
    const rows: LoadResult[] = [];
    let version = (await s.messaging.stores.automationRules.get(org.id)).version;
    // 0, 10, 100, then 100, 10, 0: the database grows through the run, and the mirrored order gives each count the same mean position.
    for (const [round, n] of [[1, 0], [1, 10], [1, 100], [2, 100], [2, 10], [2, 0]] as const) {
      if (!(await s.messaging.stores.automationRules.replace(org.id, { version: version + 1, rules: rulesOf(n, org.id, admin.id) }, version))) throw new Error('rules changed under the bench');
      version++;
      // A short warm-up, then the measured run.
      await loadVaried('warm-up', url, { 'content-type': 'application/json' }, next, connections);
      const r = await loadVaried(`inbound messages, ${n} rules (round ${round})`, url, { 'content-type': 'application/json' }, next, connections);
      rows.push(r);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const meanOf = (n: number): LoadResult => {
      const rs = rows.filter((r) => r.name.includes(` ${n} rules`));
      return { name: `inbound messages, ${n} rules (mean of 2)`, rps: mean(rs.map((r) => r.rps)), p50: mean(rs.map((r) => r.p50)), p99: mean(rs.map((r) => r.p99)), errors: 0, non2xx: 0 };
    };
    // What evaluating the rules costs per message, on its own.
    const input = { content: { type: 'text' as const, text: 'Hi, where is my order 1234? It was due on Monday.' }, channelId: channel.id, withinBusinessHours: true, attribute: async () => null };
    const evaluation: string[] = [];
    for (const n of [10, 100]) {
      const rs = rulesOf(n, org.id, admin.id);
      for (let i = 0; i < 2000; i++) await firingRules(rs, input);
      const t = performance.now();
      for (let i = 0; i < 20_000; i++) await firingRules(rs, input);
      evaluation.push(`evaluating ${n} rules: ${(((performance.now() - t) / 20_000) * 1000).toFixed(1)} µs per message`);
    }
    report(`Inbound messages with automation rules (embedded, ${onDisk ? 'on disk, FULL' : 'in memory'}, ${connections} connections)`, meanOf(0), [meanOf(10), meanOf(100), ...rows]);
    console.log('');
    for (const line of evaluation) console.log(line);
  } finally {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
