import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openNodeDbIn } from '../../src/store/index.js';
import { operatorApi, orgWithKey } from '../harness/operator-api.js';
import { freePort } from '../harness/servers.js';
import { launch, waitHealthy } from './launch.js';

/**
 * kill -9 of an embedded node in the middle of a burst of template sends
 * (with and without an Idempotency-Key, their status webhooks arriving
 * meanwhile): after it, every acknowledged send is stored, and no command is
 * there in part — a stored message always has its `message.sent` event and
 * its contact's state and inbox entry, an event always has its message, a
 * stored status always has its event (each command is one transaction).
 */

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const OPERATOR = 'send-crash-operator-token-0123456789';

interface EventRow {
  type: string;
  data: { messageId: string; status?: string; audienceExternalId: string };
}

describe('embedded node killed with SIGKILL mid-send-burst', () => {
  it('keeps every acknowledged send, and no send or status half-written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-send-crash-'));
    dirs.push(dir);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const node = launch({
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir,
      OPERATOR_TOKEN: OPERATOR,
      LOG_LEVEL: 'error',
      SEED_DEMO: 'false',
      TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000000',
      SANDBOX_MAX_MPS: '100000',
      SANDBOX_STATUS_DELAY_MS: '0',
    });
    await waitHealthy(base);
    const op = operatorApi(base, OPERATOR);
    const { orgId, key } = await orgWithKey(op, 'Crash', ['message:send']);
    const ch = await op(`/admin/v1/organizations/${orgId}/channels`, { kind: 'whatsapp_cloud', name: 'Crash', network: 'sandbox', messagesPerSecond: 10_000 });
    await op(`/admin/v1/organizations/${orgId}/credits/top-up`, { amount: 1_000_000 });

    const acked: string[] = [];
    let n = 0;
    let killed = false;
    const send = async (): Promise<void> => {
      const i = n++;
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      if (i % 2 === 0) headers['idempotency-key'] = `crash-${i}`;
      const body = {
        channelId: ch.id,
        to: String(4915100000000 + (i % 60)),
        template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: `A-${i}` }, { type: 'text', text: 'Monday' }] }] },
      };
      const r = await fetch(`${base}/v2/wa/template`, { method: 'POST', headers, body: JSON.stringify(body) });
      const reply = (await r.json()) as { messageId?: string };
      if (r.status === 201 && !killed) acked.push(reply.messageId!);
    };
    const worker = async () => {
      while (!killed) await send().catch(() => {});
    };
    const workers = Array.from({ length: 12 }, worker);
    while (acked.length < 150) await new Promise((r) => setTimeout(r, 10));
    // Answers that arrive after the kill was decided are not counted as acknowledged.
    killed = true;
    node.proc.kill('SIGKILL');
    await node.exited;
    await Promise.all(workers);

    const db = openNodeDbIn(dir);
    try {
      expect(db.raw.pragma('integrity_check', { simple: true })).toBe('ok');
      const messages = db.raw.prepare("SELECT network_id AS id, status, json_extract(body, '$.audienceExternalId') AS contact FROM session_messages WHERE org = ? AND json_extract(body, '$.direction') = 'outbound'").all(orgId) as {
        id: string;
        status: string;
        contact: string;
      }[];
      const stored = new Map(messages.map((m) => [m.id, m]));
      for (const id of acked) expect(stored.has(id), `acknowledged ${id} is stored`).toBe(true);

      const events = (db.raw.prepare('SELECT body FROM events WHERE org = ?').all(orgId) as { body: string }[]).map((r) => JSON.parse(r.body) as EventRow);
      const sent = new Set(events.filter((e) => e.type === 'message.sent').map((e) => e.data.messageId));
      const statusEvents = new Set(events.filter((e) => e.type === 'message_status').map((e) => `${e.data.messageId}/${e.data.status}`));
      // A message and its event commit together: neither is there without the other.
      for (const id of stored.keys()) expect(sent.has(id), `${id} has its message.sent event`).toBe(true);
      for (const id of sent) expect(stored.has(id), `message.sent ${id} has its message`).toBe(true);
      // A stored status and its event commit together.
      for (const m of messages) if (m.status !== 'accepted') expect(statusEvents.has(`${m.id}/${m.status}`), `${m.id} ${m.status} has its event`).toBe(true);

      // The contact's state, contact record and inbox entry came with its messages.
      const contacts = new Set(messages.map((m) => m.contact));
      for (const c of contacts) {
        const state = db.get<{ state: { contactId: string | null; session: { id: string } | null } }>('actor_state', `conversation/${orgId}/${c}`);
        expect(state?.state.contactId, `actor state of ${c}`).toBeTruthy();
        expect(db.raw.prepare('SELECT 1 FROM contacts WHERE org = ? AND audience_external_id = ?').get(orgId, c), `contact ${c}`).toBeDefined();
        expect(db.raw.prepare('SELECT 1 FROM conversations WHERE org = ? AND audience_external_id = ?').get(orgId, c), `inbox entry of ${c}`).toBeDefined();
      }
      expect(messages.length).toBeGreaterThanOrEqual(acked.length);
    } finally {
      await db.close();
    }
  }, 300_000);
});
