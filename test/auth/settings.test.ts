import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { messagingOrg, orderUpdate, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';
import { Browser, PASSWORD } from './helpers.js';

describe('settings for admins: users, API keys, templates, credits', () => {
  let svc: TestService;
  let a: MessagingOrg;
  let b: MessagingOrg;
  let admin: Browser;
  let agent: Browser;
  beforeAll(async () => {
    // A channel on the real network gets nowhere here: its first template sync fails at once.
    svc = await startMessagingService({ env: { GRAPH_API_BASE_URL: 'http://127.0.0.1:9/v27.0' } });
    a = await messagingOrg(svc, 'A', 50);
    b = await messagingOrg(svc, 'B', 10);
    admin = new Browser(svc);
    await admin.login(`admin@${a.id}.test`, PASSWORD);
    agent = new Browser(svc);
    await agent.login(`agent@${a.id}.test`, PASSWORD);
  });
  afterAll(() => svc?.close());

  it('lists, creates and changes users; deactivating ends their sessions and stops their keys', async () => {
    const list = await admin.call('GET', '/v1/users');
    expect(list.status).toBe(200);
    expect(list.body.users.map((u: { id: string }) => u.id).sort()).toEqual([a.adminId, a.agentId].sort());
    expect(list.body.users[0]).toEqual({ id: expect.any(String), email: expect.any(String), name: expect.any(String), role: expect.any(String), active: true, capacity: null, createdAt: expect.any(String) });

    const created = await admin.call('POST', '/v1/users', { body: { email: 'New@A.test', name: 'Newbie', role: 'agent', password: 'twelve chars!' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ success: true, user: { id: expect.any(String), email: 'new@a.test', name: 'Newbie', role: 'agent', active: true, capacity: null, createdAt: expect.any(String) } });
    const id = created.body.user.id;
    expect((await admin.call('POST', '/v1/users', { body: { email: 'new@a.test', name: 'Again', role: 'agent', password: 'twelve chars!' } })).status).toBe(409);
    expect((await admin.call('POST', '/v1/users', { body: { email: 'x@a.test', name: 'X', role: 'agent', password: 'short' } })).status).toBe(400);

    const newbie = new Browser(svc);
    expect((await newbie.login('new@a.test', 'twelve chars!')).status).toBe(200);
    const newbieKey = (await admin.call('POST', '/v1/api-keys', { body: { name: 'newbie', scopes: ['tickets:read'], userId: id } })).body.secret;
    expect((await svc.call('GET', '/v1/tickets', { key: newbieKey })).status).toBe(200);

    const renamed = await admin.call('PATCH', `/v1/users/${id}`, { body: { name: 'Nina', role: 'admin' } });
    expect(renamed.body.user).toMatchObject({ name: 'Nina', role: 'admin' });
    // The role change applies to the running session at once.
    expect((await newbie.call('GET', '/v1/users')).status).toBe(200);
    const off = await admin.call('PATCH', `/v1/users/${id}`, { body: { active: false } });
    expect(off.status).toBe(200);
    expect(off.body.user.active).toBe(false);
    expect((await newbie.call('GET', '/v1/auth/session')).status).toBe(401);
    expect((await svc.call('GET', '/v1/tickets', { key: newbieKey })).status).toBe(401);
    expect((await new Browser(svc).login('new@a.test', 'twelve chars!')).status).toBe(401);
    await admin.call('PATCH', `/v1/users/${id}`, { body: { active: true } });
    expect((await svc.call('GET', '/v1/tickets', { key: newbieKey })).status).toBe(200);
    expect((await admin.call('PATCH', `/v1/users/${id}`, { body: {} })).status).toBe(400);
  });

  it('refuses to let an admin deactivate or demote themselves (409 cannot_change_self)', async () => {
    for (const body of [{ active: false }, { role: 'agent' }]) {
      const r = await admin.call('PATCH', `/v1/users/${a.adminId}`, { body });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('cannot_change_self');
    }
    expect((await admin.call('PATCH', `/v1/users/${a.adminId}`, { body: { name: 'Still Admin' } })).body.user.name).toBe('Still Admin');
    expect((await admin.call('GET', '/v1/auth/session')).body.user.role).toBe('admin');
  });

  it('issues keys (the secret once), lists them with last use, revokes them', async () => {
    const r = await admin.call('POST', '/v1/api-keys', { body: { name: 'CRM', scopes: ['tickets:read', 'tickets:create'] } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      success: true,
      apiKey: { id: expect.any(String), name: 'CRM', prefix: r.body.secret.slice(0, 10), scopes: ['tickets:read', 'tickets:create'], userId: a.adminId, createdAt: expect.any(String), lastUsedAt: null, revokedAt: null },
      secret: expect.stringMatching(/^org_/),
    });
    expect((await svc.call('POST', '/v1/tickets', { key: r.body.secret, body: { subject: 'by CRM', description: 'd' } })).status).toBe(201);
    await new Promise((res) => setTimeout(res, 50));
    const listed = await admin.call('GET', '/v1/api-keys');
    const mine = listed.body.apiKeys.find((k: { id: string }) => k.id === r.body.apiKey.id);
    expect(mine.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(r.body.secret);
    const revoked = await admin.call('DELETE', `/v1/api-keys/${r.body.apiKey.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.apiKey.revokedAt).not.toBeNull();
    expect((await svc.call('GET', '/v1/tickets', { key: r.body.secret })).status).toBe(401);
    expect((await admin.call('DELETE', `/v1/api-keys/${r.body.apiKey.id}`, { csrf: false })).status).toBe(403);
  });

  it("keeps a key within its user's role and the caller's own scopes", async () => {
    const forAgent = await admin.call('POST', '/v1/api-keys', { body: { name: 'x', scopes: ['tickets:read', 'settings:manage'], userId: a.agentId } });
    expect(forAgent.status).toBe(400);
    expect(forAgent.body.error).toMatchObject({ code: 'scope_not_allowed', details: { scopes: ['settings:manage'] } });
    expect((await admin.call('POST', '/v1/api-keys', { body: { name: 'x', scopes: ['tickets:read'], userId: a.agentId } })).status).toBe(201);
    const narrow = await a.keyWith(['settings:manage']);
    const escalate = await svc.call('POST', '/v1/api-keys', { key: narrow, body: { name: 'x', scopes: ['tickets:create'] } });
    expect(escalate.status).toBe(400);
    expect(escalate.body.error.code).toBe('scope_not_allowed');
    // A key with settings:manage may use every settings route (no session, no CSRF).
    expect((await svc.call('GET', '/v1/users', { key: narrow })).status).toBe(200);
    expect((await svc.call('POST', '/v1/api-keys', { key: narrow, body: { name: 'y', scopes: ['settings:manage'] } })).status).toBe(201);
  });

  it('syncs templates and shows the credit balance with its history', async () => {
    const sync = await admin.call('POST', `/v1/channels/${a.channelId}/templates/sync`);
    expect(sync.status).toBe(200);
    expect(sync.body.success).toBe(true);
    expect(sync.body.templates.map((t: { name: string }) => t.name)).toContain('order_update');
    expect((await admin.call('POST', `/v1/channels/${a.webChannelId}/templates/sync`)).status).toBe(422);

    const sent = await svc.call('POST', '/v2/wa/template', { key: a.adminKey, body: orderUpdate(a.channelId, '4915112345678') });
    expect(sent.status).toBe(201);
    const credits = await admin.call('GET', '/v1/credits');
    expect(credits.status).toBe(200);
    expect(credits.body.balance).toBeLessThan(50);
    expect(credits.body.prices).toMatchObject({ UTILITY: expect.any(Number) });
    expect(credits.body.history[0]).toMatchObject({ kind: 'charge', amount: credits.body.balance - 50, balance: credits.body.balance });
    expect(credits.body.history.at(-1)).toMatchObject({ kind: 'top_up', amount: 50, balance: 50, reference: null });
  });

  it('creates sandbox, WhatsApp and web-chat channels; a WhatsApp channel shows its webhook URL, and its verify token once (a new one on demand)', async () => {
    const sandbox = await admin.call('POST', '/v1/channels', { body: { kind: 'whatsapp_cloud', name: 'Sandbox line', network: 'sandbox' } });
    expect(sandbox.status).toBe(201);
    expect(sandbox.body).toMatchObject({ organizationId: a.id, kind: 'whatsapp_cloud', network: 'sandbox', phoneNumberId: expect.any(String), templateSync: { ok: true, synced: expect.any(Number) } });
    expect(sandbox.body.webhook).toEqual({ url: expect.stringMatching(new RegExp(`/webhooks/whatsapp/${sandbox.body.id}$`)) });
    expect((await admin.call('GET', `/v1/channels/${sandbox.body.id}/templates`)).body.templates.map((t: { name: string }) => t.name)).toContain('order_update');

    const real = { kind: 'whatsapp_cloud', name: 'Real line', network: 'graph', phoneNumberId: '106540352200001', businessAccountId: '102290129300001', accessToken: 'EAAJBrealtoken-settings', appSecret: 'app-secret-settings' };
    const graph = await admin.call('POST', '/v1/channels', { body: real });
    expect(graph.status).toBe(201);
    expect(graph.body.webhook).toEqual({ url: expect.stringMatching(new RegExp(`/webhooks/whatsapp/${graph.body.id}$`)), verifyToken: expect.stringMatching(/^[\w-]{20,}$/) });
    expect(graph.body.templateSync.ok).toBe(false);
    expect(JSON.stringify(graph.body)).not.toContain('app-secret-settings');
    const listed = (await admin.call('GET', '/v1/channels')).body.channels.find((c: { id: string }) => c.id === graph.body.id);
    expect(listed.webhook).toEqual({ url: graph.body.webhook.url });
    // The network's subscription check passes with the token shown, and with the new one only after a rotation.
    const verify = (token: string) => svc.call('GET', `/webhooks/whatsapp/${graph.body.id}?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`);
    expect((await verify(graph.body.webhook.verifyToken)).status).toBe(200);
    const rotated = await admin.call('POST', `/v1/channels/${graph.body.id}/verify-token`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.webhook.verifyToken).not.toBe(graph.body.webhook.verifyToken);
    expect((await verify(rotated.body.webhook.verifyToken)).status).toBe(200);
    expect((await verify(graph.body.webhook.verifyToken)).status).toBe(403);
    expect((await admin.call('POST', `/v1/channels/${sandbox.body.id}/verify-token`)).body.error.code).toBe('sandbox_channel');
    expect((await admin.call('POST', '/v1/channels', { body: { ...real, name: 'Same number' } })).body.error.code).toBe('phone_number_in_use');

    const web = await admin.call('POST', '/v1/channels', { body: { kind: 'web_chat', name: 'Site chat', allowedOrigins: ['https://shop.example'] } });
    expect(web.status).toBe(201);
    expect(web.body).toMatchObject({ kind: 'web_chat', allowedOrigins: ['https://shop.example'] });
    expect((await admin.call('POST', `/v1/channels/${web.body.id}/verify-token`)).status).toBe(422);

    const bad = await admin.call('POST', '/v1/channels', { body: { kind: 'whatsapp_cloud', name: 'No ids', network: 'graph' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
    // Keys need settings:manage too, not only sessions.
    expect((await svc.call('POST', '/v1/channels', { key: a.adminKey, body: { kind: 'web_chat', name: 'By key' } })).status).toBe(201);
  });

  it('refuses every settings route to an agent (403 insufficient_scope)', async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/users'],
      ['POST', '/v1/users', { email: 'z@a.test', name: 'Z', role: 'admin', password: 'twelve chars!' }],
      ['PATCH', `/v1/users/${a.agentId}`, { role: 'admin' }],
      ['GET', '/v1/api-keys'],
      ['POST', '/v1/api-keys', { name: 'k', scopes: ['tickets:read'] }],
      ['DELETE', '/v1/api-keys/whatever'],
      ['POST', `/v1/channels/${a.channelId}/templates/sync`],
      ['POST', '/v1/channels', { kind: 'web_chat', name: 'Agent chat' }],
      ['POST', `/v1/channels/${a.channelId}/verify-token`],
      ['GET', '/v1/credits'],
    ];
    for (const [m, p, body] of routes) {
      const r = await agent.call(m, p, { body });
      expect(r.status, `${m} ${p}`).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'settings:manage' } });
    }
    expect((await svc.call('GET', '/v1/auth/session', {})).status).toBe(401);
  });

  it("answers 404 for another organization's users, keys and channels, and lists only its own", async () => {
    const bAdmin = new Browser(svc);
    await bAdmin.login(`admin@${b.id}.test`, PASSWORD);
    const aKeys = (await admin.call('GET', '/v1/api-keys')).body.apiKeys;
    const probes: [string, string, unknown?][] = [
      ['PATCH', `/v1/users/${a.agentId}`, { active: false }],
      ['DELETE', `/v1/api-keys/${aKeys[0].id}`],
      ['POST', `/v1/channels/${a.channelId}/templates/sync`],
      ['POST', `/v1/channels/${a.channelId}/verify-token`],
      ['POST', '/v1/api-keys', { name: 'x', scopes: ['tickets:read'], userId: a.agentId }],
    ];
    for (const who of [bAdmin, null]) {
      for (const [m, p, body] of probes) {
        const r = who ? await who.call(m, p, { body }) : await svc.call(m, p, { key: b.adminKey, body });
        expect(r.status, `${who ? 'session' : 'key'} ${m} ${p}`).toBe(404);
      }
    }
    const bUsers = (await bAdmin.call('GET', '/v1/users')).body.users.map((u: { id: string }) => u.id);
    expect(bUsers.sort()).toEqual([b.adminId, b.agentId].sort());
    const bKeyIds = new Set((await bAdmin.call('GET', '/v1/api-keys')).body.apiKeys.map((k: { id: string }) => k.id));
    for (const k of aKeys) expect(bKeyIds.has(k.id)).toBe(false);
    expect((await bAdmin.call('GET', '/v1/credits')).body.balance).toBe(10);
    // A channel B creates is B's: A's admin neither lists it nor reaches it, and B's list has none of A's.
    const bChannel = await bAdmin.call('POST', '/v1/channels', { body: { kind: 'whatsapp_cloud', name: 'B line', network: 'sandbox' } });
    expect(bChannel.status).toBe(201);
    expect(bChannel.body.organizationId).toBe(b.id);
    expect((await admin.call('GET', '/v1/channels')).body.channels.map((c: { id: string }) => c.id)).not.toContain(bChannel.body.id);
    expect((await admin.call('GET', `/v1/channels/${bChannel.body.id}/templates`)).status).toBe(404);
    expect((await admin.call('POST', `/v1/channels/${bChannel.body.id}/verify-token`)).status).toBe(404);
    const bIds = (await bAdmin.call('GET', '/v1/channels')).body.channels.map((c: { id: string }) => c.id);
    expect(bIds).not.toContain(a.channelId);
    expect(bIds).toContain(bChannel.body.id);
    // Nothing of A changed.
    expect((await admin.call('GET', '/v1/users')).body.users.find((u: { id: string }) => u.id === a.agentId).active).toBe(true);
    expect((await admin.call('GET', '/v1/api-keys')).body.apiKeys.find((k: { id: string }) => k.id === aKeys[0].id).revokedAt).toBe(aKeys[0].revokedAt);
  });

  it('shows every inbox reader the team (names and roles, no emails), only of their own organization', async () => {
    const seen = await agent.call('GET', '/v1/team');
    expect(seen.status).toBe(200);
    const ids = seen.body.members.map((m: { id: string }) => m.id);
    expect(ids).toEqual(expect.arrayContaining([a.adminId, a.agentId]));
    expect(ids).not.toContain(b.adminId);
    expect(ids).not.toContain(b.agentId);
    for (const m of seen.body.members) expect(Object.keys(m).sort()).toEqual(['active', 'id', 'name', 'role']);
    expect(JSON.stringify(seen.body)).not.toContain('@');

    const bAgent = new Browser(svc);
    await bAgent.login(`agent@${b.id}.test`, PASSWORD);
    const theirs = (await bAgent.call('GET', '/v1/team')).body.members.map((m: { id: string }) => m.id);
    expect(theirs.sort()).toEqual([b.adminId, b.agentId].sort());

    const ticketsOnly = (await admin.call('POST', '/v1/api-keys', { body: { name: 'tickets only', scopes: ['tickets:read'] } })).body.secret;
    const refused = await svc.call('GET', '/v1/team', { key: ticketsOnly });
    expect(refused.status).toBe(403);
    expect((await svc.call('GET', '/v1/team')).status).toBe(401);
  });
});
