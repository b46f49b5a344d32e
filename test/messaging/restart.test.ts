import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { eventually, messagingOrg, op, orderUpdate, startMessagingService } from './messaging-helpers.js';

describe('messaging across restarts (embedded, on disk)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-msg-restart-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps channels (secrets still sealed), history, credits and the window; refunds when the sandbox is gone', async () => {
    let svc: TestService = await startMessagingService({ env: { DATA_DIR: dir } });
    const org = await messagingOrg(svc, 'Durable', 10);
    const to = '4915300000001';
    const sent = await svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, to) });
    expect(sent.status).toBe(201);
    await svc.call('POST', `/v1/sandbox/channels/${org.channelId}/customers/${to}/messages`, { key: org.adminKey, body: { text: 'hi!' } });
    const m = await svc.running.services.messaging.stores.messages.getByNetworkId(org.id, sent.body.messageId);
    await eventually(async () => (await svc.running.services.messaging.stores.messages.getByNetworkId(org.id, sent.body.messageId))?.status === 'read');
    await svc.close();

    // The service's database holds the channel, its secrets sealed (the sandbox network, Meta's side, keeps its own database).
    const raw = (f: string) => (existsSync(f) ? readFileSync(f, 'latin1') : '');
    const stored = raw(join(dir, 'switchboard.db')) + raw(join(dir, 'switchboard.db-wal'));
    const acct = raw(join(dir, 'sandbox-network.db')) + raw(join(dir, 'sandbox-network.db-wal'));
    const token = /"accessToken":"(EAASBX[^"]+)"/.exec(acct)![1]!;
    const secret = /"appSecret":"([^"]+)"/.exec(acct)![1]!;
    expect(stored).toContain(org.phoneNumberId);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(secret);

    svc = await startMessagingService({ env: { DATA_DIR: dir } });
    const history = await svc.call('GET', `/v1/sessions/${m!.sessionId}/messages`, { key: org.adminKey });
    expect(history.body.map((x: { sender: string; status?: string }) => `${x.sender}:${x.status ?? '-'}`)).toEqual(['bot:read', 'contact:-']);
    const buttons = await svc.call('POST', '/v1/messages/buttons', { key: org.adminKey, body: { channelId: org.channelId, to, interactive: { body: { text: 'Still there?' }, buttons: [{ id: 'y', title: 'Yes' }] } } });
    expect(buttons.body).toMatchObject({ success: true });
    expect((await op(svc, 'GET', `/admin/v1/organizations/${org.id}/credits`)).body.balance).toBe(9);
    await svc.close();

    svc = await startMessagingService({ env: { DATA_DIR: dir, SANDBOX_NETWORK: 'false' } });
    try {
      const r = await svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, to) });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('sandbox_disabled');
      expect((await op(svc, 'GET', `/admin/v1/organizations/${org.id}/credits`)).body.balance).toBe(9);
      expect((await svc.call('POST', `/v1/sandbox/channels/${org.channelId}/customers/${to}/messages`, { key: org.adminKey, body: { text: 'x' } })).status).toBe(404);
    } finally {
      await svc.close();
    }
  });
});
