import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN, startTestService, type TestOrg, type TestService } from '../harness/service.js';

describe('API keys and scopes', () => {
  let svc: TestService;
  let org: TestOrg;
  beforeAll(async () => {
    svc = await startTestService();
    org = await svc.createOrg('Auth');
  });
  afterAll(() => svc?.close());

  it('answers 401 with WWW-Authenticate for missing, malformed, unknown and revoked keys', async () => {
    const revokable = await svc.call('POST', `/admin/v1/organizations/${org.id}/api-keys`, { key: OPERATOR_TOKEN, body: { userId: org.adminId, scopes: ['tickets:read'] } });
    expect(revokable.status).toBe(201);
    expect((await svc.call('GET', '/v1/tickets', { key: revokable.body.key })).status).toBe(200);
    const rev = await svc.call('DELETE', `/admin/v1/organizations/${org.id}/api-keys/${revokable.body.id}`, { key: OPERATOR_TOKEN });
    expect(rev.status).toBe(200);
    expect(rev.body.revokedAt).not.toBeNull();

    const cases: Record<string, Record<string, string>> = {
      missing: {},
      'no bearer scheme': { authorization: org.adminKey },
      malformed: { authorization: 'Bearer not-a-key' },
      unknown: { authorization: `Bearer org_${'A'.repeat(43)}` },
      revoked: { authorization: `Bearer ${revokable.body.key}` },
      'operator token is not an API key': { authorization: `Bearer ${OPERATOR_TOKEN}` },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const r = await svc.call('GET', '/v1/tickets', { headers });
      expect(r.status, name).toBe(401);
      expect(r.body).toEqual({ success: false, error: { code: 'unauthorized', message: expect.any(String) } });
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it('answers 403 insufficient_scope naming the missing scope, before looking at the body', async () => {
    const readOnly = await org.keyWith(['tickets:read']);
    const r = await svc.call('POST', '/v1/tickets', { key: readOnly, rawBody: '{broken' });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'tickets:create' } });
    expect(r.body.error.message).toContain('tickets:create');
    const upd = await svc.call('PATCH', '/v1/tickets/T-1-1', { key: readOnly, body: { status: 'open' } });
    expect(upd.body.error.details.requiredScope).toBe('tickets:update');
    const createOnly = await org.keyWith(['tickets:create']);
    expect((await svc.call('GET', '/v1/tickets', { key: createOnly })).body.error.details.requiredScope).toBe('tickets:read');
    expect((await svc.call('GET', '/v1/tickets/T-1-1', { key: createOnly })).status).toBe(403);
  });

  it('issues org_ keys with at least 128 random bits, shows them once, stores only a hash, and records last use', async () => {
    const created = await svc.call('POST', `/admin/v1/organizations/${org.id}/api-keys`, { key: OPERATOR_TOKEN, body: { userId: org.agentId, name: 'ci', scopes: ['tickets:read', 'tickets:read'] } });
    expect(created.body.key).toMatch(/^org_[A-Za-z0-9_-]{43}$/);
    expect(created.body.scopes).toEqual(['tickets:read']);
    expect(created.body).not.toHaveProperty('hash');
    const listed = await svc.call('GET', `/admin/v1/organizations/${org.id}/api-keys`, { key: OPERATOR_TOKEN });
    const rec = listed.body.apiKeys.find((k: any) => k.id === created.body.id);
    expect(rec).toMatchObject({ userId: org.agentId, name: 'ci', lastUsedAt: null, revokedAt: null });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    const stored = await svc.running.services.store.apiKeys.list(org.id);
    expect(JSON.stringify(stored)).not.toContain(created.body.key);
    await svc.call('GET', '/v1/tickets', { key: created.body.key });
    await new Promise((r) => setTimeout(r, 50));
    const after = (await svc.call('GET', `/admin/v1/organizations/${org.id}/api-keys`, { key: OPERATOR_TOKEN })).body.apiKeys.find((k: any) => k.id === created.body.id);
    expect(after.lastUsedAt).not.toBeNull();
  });

  it('refuses unknown scopes and users of another organization when issuing keys', async () => {
    const other = await svc.createOrg('Other');
    expect((await svc.call('POST', `/admin/v1/organizations/${org.id}/api-keys`, { key: OPERATOR_TOKEN, body: { userId: org.adminId, scopes: ['tickets:delete'] } })).status).toBe(400);
    expect((await svc.call('POST', `/admin/v1/organizations/${org.id}/api-keys`, { key: OPERATOR_TOKEN, body: { userId: org.adminId, scopes: [] } })).status).toBe(400);
    const foreign = await svc.call('POST', `/admin/v1/organizations/${org.id}/api-keys`, { key: OPERATOR_TOKEN, body: { userId: other.adminId, scopes: ['tickets:read'] } });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('unknown_user');
    // Revoking another organization's key through this organization's path finds nothing.
    const otherKeys = (await svc.call('GET', `/admin/v1/organizations/${other.id}/api-keys`, { key: OPERATOR_TOKEN })).body.apiKeys;
    expect((await svc.call('DELETE', `/admin/v1/organizations/${org.id}/api-keys/${otherKeys[0].id}`, { key: OPERATOR_TOKEN })).status).toBe(404);
    expect((await svc.call('GET', '/v1/tickets', { key: other.adminKey })).status).toBe(200);
  });
});

describe('operator API', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.close());

  it('needs the operator token', async () => {
    const org = await svc.createOrg('Op');
    for (const key of [undefined, 'wrong-token-wrong-token', org.adminKey]) {
      const r = await svc.call('GET', '/admin/v1/organizations', key === undefined ? {} : { key });
      expect(r.status).toBe(401);
    }
    expect((await svc.call('GET', '/admin/v1/organizations', { key: OPERATOR_TOKEN })).status).toBe(200);
  });

  it('creates users with hashed passwords and refuses duplicate emails, weak passwords and bad roles', async () => {
    const org = (await svc.call('POST', '/admin/v1/organizations', { key: OPERATOR_TOKEN, body: { name: 'Users' } })).body;
    const path = `/admin/v1/organizations/${org.id}/users`;
    const u = await svc.call('POST', path, { key: OPERATOR_TOKEN, body: { email: 'Zoe@x.io', name: 'Zoe', role: 'agent', password: 'long enough password' } });
    expect(u.status).toBe(201);
    expect(u.body).not.toHaveProperty('passwordHash');
    expect(u.body.email).toBe('zoe@x.io');
    const stored = await svc.running.services.store.users.get(org.id, u.body.id);
    expect(stored?.passwordHash).toMatch(/^scrypt\$/);
    expect((await svc.call('POST', path, { key: OPERATOR_TOKEN, body: { email: 'zoe@x.io', name: 'Z2', role: 'agent', password: 'long enough password' } })).status).toBe(409);
    expect((await svc.call('POST', path, { key: OPERATOR_TOKEN, body: { email: 'a@x.io', name: 'A', role: 'agent', password: 'short' } })).status).toBe(400);
    expect((await svc.call('POST', path, { key: OPERATOR_TOKEN, body: { email: 'b@x.io', name: 'B', role: 'owner', password: 'long enough password' } })).status).toBe(400);
    expect((await svc.call('POST', '/admin/v1/organizations/no-such-org/users', { key: OPERATOR_TOKEN, body: { email: 'c@x.io', name: 'C', role: 'agent', password: 'long enough password' } })).status).toBe(404);
  });
});
