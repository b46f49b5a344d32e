import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { signIn } from './helpers.js';

describe('connect, sign-in callback and tool management: bad input and isolation', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  beforeAll(async () => {
    svc = await startTestService({ env: { TOOLS_ALLOWED_RETURN_ORIGINS: 'https://app.example.com', TOOLS_OAUTH_STATE_TTL_MS: '1000' } });
    a = await svc.createOrg('A');
    b = await svc.createOrg('B');
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('GET /v1/integrations lists platform, email, calendar and payment with connect kinds and tools with input schemas', async () => {
    const r = await svc.call('GET', '/v1/integrations', { key: a.adminKey });
    const byId = Object.fromEntries(r.body.integrations.map((i: { id: string }) => [i.id, i]));
    expect(Object.keys(byId)).toEqual(['platform', 'email', 'calendar', 'payment']);
    expect(byId.email.connect).toBe('oauth');
    expect(byId.payment.connect).toBe('api_key');
    expect(byId.calendar.tools.map((t: { name: string }) => t.name)).toEqual(['list_calendars', 'check_availability', 'list_events', 'get_event', 'create_event', 'update_event', 'delete_event']);
    expect(byId.payment.tools[0].inputSchema.properties.amount).toBeDefined();
  });

  it('refuses bad connects with a clear error and stores nothing', async () => {
    const post = (id: string, body: unknown, key = a.adminKey) => svc.call('POST', `/v1/integrations/${id}/connect`, { key, body });
    expect((await post('fax', { name: 'x' })).status).toBe(404);
    expect((await post('platform', { name: 'x' })).body.error.code).toBe('no_connect_needed');
    const noName = await post('email', {});
    expect(noName.status).toBe(400);
    expect(JSON.stringify(noName.body.error.details)).toMatch(/name/);
    const evil = await post('email', { name: 'x', return_url: 'https://evil.example/steal' });
    expect(evil.status).toBe(400);
    expect(evil.body.error.code).toBe('return_url_not_allowed');
    expect((await post('email', { name: 'x', return_url: 'javascript:alert(1)' })).status).toBe(400);
    expect((await post('calendar', { name: 'x', data: { api_key: 'k' } })).status).toBe(400);
    expect((await post('payment', { name: 'x', data: {} })).status).toBe(400);
    expect((await post('email', { name: 'x' }, await a.keyWith(['tickets:read']))).status).toBe(403);
    expect((await svc.call('GET', '/v1/tools', { key: a.adminKey })).body.tools).toEqual([]);
  });

  it('approve with return_url: back to the app with tool_id and status=active', async () => {
    const r = await svc.call('POST', '/v1/integrations/email/connect', { key: a.adminKey, body: { name: 'Inbox', return_url: 'https://app.example.com/done?x=1' } });
    const cb = await signIn(svc, r.body.redirect_url, { email: 'app@shop.example' });
    expect(cb.status).toBe(302);
    const back = new URL(cb.location!);
    expect(back.origin + back.pathname).toBe('https://app.example.com/done');
    expect(Object.fromEntries(back.searchParams)).toEqual({ x: '1', tool_id: r.body.id, status: 'active' });
    // The same callback again: the state was single use.
    const u = new URL(cb.callbackUrl);
    const replay = await svc.call('GET', u.pathname + u.search);
    expect(replay.status).toBe(400);
    expect(replay.body.error.code).toBe('invalid_state');
  });

  it('deny: the tool says authorization_denied, the app hears it, and connect with tool_id retries', async () => {
    const r = await svc.call('POST', '/v1/integrations/calendar/connect', { key: a.adminKey, body: { name: 'Cal', return_url: 'https://app.example.com/done' } });
    const cb = await signIn(svc, r.body.redirect_url, { decision: 'deny' });
    const back = new URL(cb.location!);
    expect(back.searchParams.get('status')).toBe('authorization_denied');
    expect(back.searchParams.get('error')).toBe('access_denied');
    const t = await svc.call('GET', `/v1/tools/${r.body.id}`, { key: a.adminKey });
    expect(t.body.status).toBe('authorization_denied');
    expect((await svc.call('POST', `/mcp/${r.body.id}`, { key: a.adminKey, rawBody: '{}', headers: { accept: 'application/json, text/event-stream' } })).status).toBe(409);
    const retry = await svc.call('POST', '/v1/integrations/calendar/connect', { key: a.adminKey, body: { name: 'Cal', tool_id: r.body.id } });
    const ok = await signIn(svc, retry.body.redirect_url);
    expect(ok.status).toBe(200);
    expect((await svc.call('GET', `/v1/tools/${r.body.id}`, { key: a.adminKey })).body.status).toBe('active');
  });

  it('forged, missing and expired state change nothing', async () => {
    expect((await svc.call('GET', '/v1/tools/oauth/callback?state=forged&code=4/0abc')).body.error.code).toBe('invalid_state');
    expect((await svc.call('GET', '/v1/tools/oauth/callback?code=4/0abc')).status).toBe(400);
    const r = await svc.call('POST', '/v1/integrations/email/connect', { key: a.adminKey, body: { name: 'Late' } });
    const state = new URL(r.body.redirect_url).searchParams.get('state')!;
    await new Promise((res) => setTimeout(res, 1100));
    const late = await svc.call('GET', `/v1/tools/oauth/callback?state=${state}&code=4/0abc`);
    expect(late.body.error.code).toBe('invalid_state');
    expect((await svc.call('GET', `/v1/tools/${r.body.id}`, { key: a.adminKey })).body.status).toBe('pending_authorization');
  });

  it('operator allows an origin with the CLI; connect then accepts it', async () => {
    const add = await runCli(svc, 'tools', 'allow-origin', '--origin', 'https://crm.example.org/path');
    expect(add.code).toBe(0);
    expect(add.out).toContain('https://crm.example.org');
    expect(add.out).toContain('https://app.example.com  (TOOLS_ALLOWED_RETURN_ORIGINS)');
    expect((await svc.call('POST', '/v1/integrations/email/connect', { key: a.adminKey, body: { name: 'x', return_url: 'https://crm.example.org/cb' } })).status).toBe(201);
    const rm = await runCli(svc, 'tools', 'disallow-origin', '--origin', 'https://crm.example.org');
    expect(rm.out).toMatch(/^removed/);
    expect((await svc.call('POST', '/v1/integrations/email/connect', { key: a.adminKey, body: { name: 'x', return_url: 'https://crm.example.org/cb' } })).status).toBe(400);
    expect((await svc.call('GET', '/admin/v1/tools/return-origins', { key: a.adminKey })).status).toBe(401);
  });

  it('every tool endpoint and /mcp/{tool_id} answer another organization exactly like an unknown id', async () => {
    const tools = (await svc.call('GET', '/v1/tools', { key: a.adminKey })).body.tools as { id: string; status: string }[];
    expect(tools.length).toBeGreaterThan(2);
    expect((await svc.call('GET', '/v1/tools', { key: b.adminKey })).body.tools).toEqual([]);
    for (const t of tools) {
      for (const [method, path] of [['GET', `/v1/tools/${t.id}`], ['DELETE', `/v1/tools/${t.id}`]] as const) {
        const other = await svc.call(method, path, { key: b.adminKey });
        const unknown = await svc.call(method, path.replace(t.id, 'tool_AAAAAAAAAAAAAAAA'), { key: b.adminKey });
        expect([other.status, other.body.error.code]).toEqual([unknown.status, unknown.body.error.code]);
      }
      const mcp = await fetch(`${svc.url}/mcp/${t.id}`, { method: 'POST', headers: { authorization: `Bearer ${b.adminKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
      expect(mcp.status).toBe(404);
      const retry = await svc.call('POST', `/v1/integrations/${t.id.length > 0 ? 'email' : ''}/connect`, { key: b.adminKey, body: { name: 'x', tool_id: t.id } });
      expect(retry.status).toBe(404);
    }
    // The tools are untouched for their own organization.
    expect((await svc.call('GET', '/v1/tools', { key: a.adminKey })).body.tools).toEqual(tools);
  });
});
