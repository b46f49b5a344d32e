import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type TestService } from '../harness/service.js';
import { orderUpdate, startMessagingService } from './messaging-helpers.js';

describe('admin CLI: channels, templates, credits', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startMessagingService({ env: { GRAPH_API_BASE_URL: 'http://127.0.0.1:9/v27.0' } });
  });
  afterAll(() => svc?.close());

  const cli = (...args: string[]) => runCli(svc, ...args);

  it('creates a sandbox channel, tops up credits, and the organization can send at once', async () => {
    const org = await svc.createOrg('CLI');
    const created = await cli('channel', 'create', '--org', org.id, '--name', 'Support', '--kind', 'whatsapp_cloud', '--network', 'sandbox');
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/channel ch_\S+ \(whatsapp_cloud, sandbox\) Support/);
    expect(created.out).toContain('templates synced: 7');
    const channelId = /channel (ch_\S+)/.exec(created.out)![1]!;
    expect((await cli('channel', 'list', '--org', org.id)).out).toContain(channelId);
    const templates = (await cli('template', 'list', '--org', org.id, '--channel', channelId)).out.split('\n');
    expect(templates[0]).toMatch(/^name\s+language\s+category\s+status\s+source$/);
    expect(templates.find((l) => l.startsWith('order_update '))).toMatch(/^order_update\s+en_US\s+UTILITY\s+APPROVED\s+network$/);
    expect((await cli('credits', 'top-up', '--org', org.id, '--amount', '3', '--operation-id', 'inv-1')).out).toBe('balance now 3 credits');
    expect((await cli('credits', 'top-up', '--org', org.id, '--amount', '3', '--operation-id', 'inv-1')).out).toContain('already applied');
    expect((await cli('credits', 'show', '--org', org.id)).out).toContain('balance 3 credits; template prices: MARKETING 2, UTILITY 1, AUTHENTICATION 1');
    expect((await svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(channelId, '4915900000001') })).status).toBe(201);
    const def = JSON.stringify({ name: 'cli_made', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi {{1}}' }] });
    expect((await cli('template', 'add', '--org', org.id, '--channel', channelId, '--definition', def)).out).toBe('template cli_made (en) UTILITY APPROVED');
    expect((await cli('template', 'delete', '--org', org.id, '--channel', channelId, '--template', 'cli_made', '--language', 'en')).code).toBe(0);
    expect((await cli('template', 'sync', '--org', org.id, '--channel', channelId)).out).toContain('synced 7 template(s)');
    expect(created.out).toContain('throughput tier: 80 messages per second');
    expect((await cli('channel', 'update', '--org', org.id, '--channel', channelId, '--messages-per-second', '250')).out).toContain('throughput tier: 250 messages per second');
    const badTier = await cli('channel', 'update', '--org', org.id, '--channel', channelId, '--messages-per-second', 'fast');
    expect(badTier.code).toBe(1);
    expect(badTier.err).toContain('400');
    const web = await cli('channel', 'create', '--org', org.id, '--name', 'Site', '--kind', 'web_chat', '--origins', 'https://shop.example');
    expect(web.out).toMatch(/\(web_chat\) Site/);
  });

  it('a real-network channel shows its webhook URL and the generated verify token once; errors exit non-zero', async () => {
    const org = await svc.createOrg('CLI2');
    const r = await cli('channel', 'create', '--org', org.id, '--name', 'Prod', '--kind', 'whatsapp_cloud', '--network', 'graph', '--phone-number-id', '106540352242999', '--business-account-id', '102290129340399', '--access-token', 'EAAJBrealtoken', '--app-secret', 'the-app-secret');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/webhook URL: http:\/\/\S+\/webhooks\/whatsapp\/ch_/);
    expect(r.out).toMatch(/verify token: \S+/);
    expect(r.out).toContain('template sync failed');
    const bad = await cli('channel', 'create', '--org', org.id, '--name', 'x', '--kind', 'whatsapp_cloud', '--network', 'graph');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('400');
    expect((await cli('credits', 'top-up', '--org', org.id)).code).toBe(2);
  });
});
