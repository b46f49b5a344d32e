import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createLogger } from '../../src/log.js';
import { OPERATOR_TOKEN, runCli, startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { Browser, PASSWORD } from './helpers.js';

describe('dashboard sign-in and sessions', () => {
  let svc: TestService;
  let org: TestOrg;
  let other: TestOrg;
  const clock = new ManualClock(Date.now());
  const adminEmail = () => `admin@${org.id}.test`;
  const agentEmail = () => `agent@${org.id}.test`;
  beforeAll(async () => {
    svc = await startTestService({ clock });
    org = await svc.createOrg('Sessions');
    other = await svc.createOrg('Other');
  });
  afterAll(() => svc?.close());

  it('signs in with email and password: an HttpOnly, SameSite=Lax session cookie, the user, the CSRF token and the end', async () => {
    const b = new Browser(svc);
    const r = await b.login(adminEmail().toUpperCase(), PASSWORD);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      user: { id: org.adminId, email: adminEmail(), name: 'Admin', role: 'admin', organizationId: org.id },
      csrfToken: expect.stringMatching(/^[\w-]{40,}$/),
      expiresAt: new Date(clock.now() + 7 * 86_400_000).toISOString(),
    });
    const cookie = r.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^sb_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
    expect(cookie).not.toContain('Secure');
    expect(r.headers.get('cache-control')).toBe('no-store');
    const s = await b.call('GET', '/v1/auth/session');
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ success: true, user: { id: org.adminId }, csrfToken: r.body.csrfToken });
    // Only a hash of the id is stored.
    const repo = svc.running.services.store.sessions;
    expect(await repo.get(createHash('sha256').update(b.cookie!).digest('hex'))).toMatchObject({ userId: org.adminId, csrfToken: r.body.csrfToken });
    expect(await repo.get(b.cookie!)).toBeNull();
  });

  it('answers a wrong email and a wrong password with the same 401 invalid_credentials, and no cookie', async () => {
    const b = new Browser(svc);
    const wrongPw = await b.login(agentEmail(), 'not the password');
    const noUser = await b.login(`nobody@${org.id}.test`, PASSWORD);
    for (const r of [wrongPw, noUser]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ success: false, error: { code: 'invalid_credentials', message: 'wrong email or password' } });
      expect(r.headers.get('set-cookie')).toBeNull();
    }
    expect((await b.call('GET', '/v1/auth/session')).body.error.code).toBe('not_signed_in');
    expect((await b.login('', '')).status).toBe(400);
  });

  it('rotates the session id at every sign-in and ends the session of a cookie the client sent', async () => {
    const b = new Browser(svc);
    await b.login(agentEmail(), PASSWORD);
    const first = b.cookie!;
    await b.login(agentEmail(), PASSWORD);
    expect(b.cookie).not.toBe(first);
    const stale = new Browser(svc);
    stale.cookie = first;
    expect((await stale.call('GET', '/v1/auth/session')).status).toBe(401);
    // A cookie planted before sign-in (session fixation) is never adopted.
    const planted = new Browser(svc);
    planted.cookie = 'A'.repeat(43);
    await planted.login(agentEmail(), PASSWORD);
    expect(planted.cookie).not.toBe('A'.repeat(43));
  });

  it('lets the session cookie stand in for an API key, with the scopes of the role', async () => {
    const admin = new Browser(svc);
    await admin.login(adminEmail(), PASSWORD);
    const agent = new Browser(svc);
    await agent.login(agentEmail(), PASSWORD);
    expect((await agent.call('GET', '/v1/tickets')).status).toBe(200);
    const created = await agent.call('POST', '/v1/tickets', { body: { subject: 'From the dashboard', description: 'made with a session' } });
    expect(created.status).toBe(201);
    // Scopes by role: an agent may not register webhooks; an admin may (and gets further than the scope check).
    const hook = { url: 'https://example.com/hook', events: ['ticket.created'] };
    const agentHook = await agent.call('POST', '/api/v1/webhooks', { body: hook });
    expect(agentHook.status).toBe(403);
    expect(agentHook.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'webhook:create' } });
    expect((await admin.call('POST', '/api/v1/webhooks', { body: {} })).status).toBe(400);
    // The agent sees what an agent sees: their own and unassigned tickets only.
    const assigned = await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'someone else', description: 'd', assigneeId: org.adminId } });
    const seen = (await agent.call('GET', '/v1/tickets?limit=100')).body.tickets.map((t: { ticketId: string }) => t.ticketId);
    expect(seen).toContain(created.body.ticketId ?? created.body.ticket?.ticketId ?? seen[0]);
    expect(seen).not.toContain(assigned.body.ticketId ?? assigned.body.ticket?.ticketId);
  });

  it('refuses unsafe requests made with the cookie but without the CSRF token (403 csrf_failed), and changes nothing', async () => {
    const b = new Browser(svc);
    await b.login(adminEmail(), PASSWORD);
    const before = (await b.call('GET', '/v1/tickets')).body.total;
    for (const csrf of [false, 'wrong-token', b.csrf!.slice(0, -1)] as const) {
      const r = await b.call('POST', '/v1/tickets', { body: { subject: 'forged', description: 'x' }, csrf });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('csrf_failed');
    }
    expect((await b.call('POST', '/v1/auth/logout', { csrf: false })).status).toBe(403);
    expect((await b.call('GET', '/v1/tickets')).body.total).toBe(before);
    expect((await b.call('GET', '/v1/auth/session')).status).toBe(200);
  });

  it('uses the bearer key when a request carries both a key and a cookie, and a key never needs CSRF', async () => {
    const b = new Browser(svc);
    await b.login(adminEmail(), PASSWORD);
    const bad = await b.call('GET', '/v1/tickets', { headers: { authorization: 'Bearer org_' + 'x'.repeat(43) } });
    expect(bad.status).toBe(401);
    expect(bad.body.error.code).toBe('unauthorized');
    const readOnly = await org.keyWith(['tickets:read']);
    const r = await b.call('POST', '/v1/tickets', { key: readOnly, csrf: false, body: { subject: 's', description: 'd' } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('insufficient_scope');
    expect((await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 's', description: 'd' } })).status).toBe(201);
  });

  it('signs out: 204, the cookie cleared, the session dead for every tab', async () => {
    const tab1 = new Browser(svc);
    await tab1.login(agentEmail(), PASSWORD);
    const tab2 = new Browser(svc);
    tab2.cookie = tab1.cookie;
    tab2.csrf = tab1.csrf;
    const out = await tab1.call('POST', '/v1/auth/logout');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^sb_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/);
    expect(tab1.cookie).toBeUndefined();
    for (const [m, p] of [['GET', '/v1/auth/session'], ['GET', '/v1/tickets'], ['POST', '/v1/inbox/token']] as const) {
      const r = await tab2.call(m, p);
      expect(r.status, p).toBe(401);
      expect(r.body.error.code).toBe('not_signed_in');
    }
  });

  it('ends a session after 12 idle hours, and after 7 days however active', async () => {
    const b = new Browser(svc);
    await b.login(agentEmail(), PASSWORD);
    clock.advance(11 * 3_600_000);
    expect((await b.call('GET', '/v1/auth/session')).status).toBe(200);
    clock.advance(11 * 3_600_000);
    // Active within 12 h of the last request: still signed in, 22 h after sign-in.
    expect((await b.call('GET', '/v1/auth/session')).status).toBe(200);
    clock.advance(12 * 3_600_000 + 1000);
    expect((await b.call('GET', '/v1/auth/session')).status).toBe(401);

    const busy = new Browser(svc);
    await busy.login(agentEmail(), PASSWORD);
    for (let h = 0; h < 7 * 24 - 6; h += 6) {
      clock.advance(6 * 3_600_000);
      expect((await busy.call('GET', '/v1/auth/session')).status, `after ${h + 6} h`).toBe(200);
    }
    clock.advance(6 * 3_600_000);
    expect((await busy.call('GET', '/v1/auth/session')).status).toBe(401);
  });

  it('changes the password: the old one stops working, the other sessions end, this one stays', async () => {
    const email = 'changer@x.io';
    await svc.call('POST', `/admin/v1/organizations/${org.id}/users`, { key: OPERATOR_TOKEN, body: { email, name: 'C', role: 'agent', password: PASSWORD } });
    const here = new Browser(svc);
    await here.login(email, PASSWORD);
    const elsewhere = new Browser(svc);
    await elsewhere.login(email, PASSWORD);
    const wrong = await here.call('POST', '/v1/auth/password', { body: { currentPassword: 'nope nope nope', newPassword: 'a new password 123' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('invalid_current_password');
    const short = await here.call('POST', '/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body.error.code).toBe('validation_failed');
    expect((await here.call('POST', '/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: 'a new password 123' }, csrf: false })).status).toBe(403);
    expect((await here.call('POST', '/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: 'a new password 123' } })).status).toBe(204);
    expect((await here.call('GET', '/v1/auth/session')).status).toBe(200);
    expect((await elsewhere.call('GET', '/v1/auth/session')).status).toBe(401);
    expect((await new Browser(svc).login(email, PASSWORD)).status).toBe(401);
    expect((await new Browser(svc).login(email, 'a new password 123')).status).toBe(200);
  });

  it('resets a password through the operator CLI, ending every session of the user', async () => {
    const email = 'forgetful@x.io';
    const user = (await svc.call('POST', `/admin/v1/organizations/${org.id}/users`, { key: OPERATOR_TOKEN, body: { email, name: 'F', role: 'agent', password: PASSWORD } })).body;
    const b = new Browser(svc);
    await b.login(email, PASSWORD);
    const out = await runCli(svc, 'user', 'reset-password', '--org', org.id, '--user', user.id, '--password', 'brand new password');
    expect(out.code).toBe(0);
    expect(out.out).toContain('1 session(s) ended');
    expect((await b.call('GET', '/v1/auth/session')).status).toBe(401);
    expect((await new Browser(svc).login(email, 'brand new password')).status).toBe(200);
    expect((await runCli(svc, 'user', 'reset-password', '--org', other.id, '--user', user.id, '--password', 'brand new password')).code).toBe(1);
    expect((await runCli(svc, 'user', 'reset-password', '--org', org.id, '--user', user.id, '--password', 'short')).code).toBe(1);
  });

  it('signs in the user of the organization whose password matches when an email is used in several; 409 ambiguous_login when more match', async () => {
    const email = 'shared@x.io';
    const mk = (o: TestOrg, password: string) =>
      svc.call('POST', `/admin/v1/organizations/${o.id}/users`, { key: OPERATOR_TOKEN, body: { email, name: 'S', role: 'agent', password } });
    await mk(org, 'password of org A');
    const inOther = (await mk(other, 'password of org B')).body;
    const r = await new Browser(svc).login(email, 'password of org B');
    expect(r.status).toBe(200);
    expect(r.body.user).toMatchObject({ id: inOther.id, organizationId: other.id });
    const third = await svc.createOrg('Third');
    await mk(third, 'password of org B');
    const amb = await new Browser(svc).login(email, 'password of org B');
    expect(amb.status).toBe(409);
    expect(amb.body.error.code).toBe('ambiguous_login');
    expect(amb.body.error.details.organizations.map((o: { id: string }) => o.id).sort()).toEqual([other.id, third.id].sort());
    const picked = await new Browser(svc).login(email, 'password of org B', { organizationId: third.id });
    expect(picked.body.user.organizationId).toBe(third.id);
  });

  it('issues single-use inbox tokens, valid 60 s, that die with the session', async () => {
    const b = new Browser(svc);
    await b.login(agentEmail(), PASSWORD);
    const sessions = svc.running.services.sessions;
    const t1 = await b.call('POST', '/v1/inbox/token');
    expect(t1.status).toBe(200);
    expect(t1.body).toEqual({ success: true, token: expect.any(String), expiresAt: new Date(clock.now() + 60_000).toISOString() });
    expect(await sessions.authenticateInboxToken(t1.body.token)).toMatchObject({ organizationId: org.id, userId: org.agentId, role: 'agent' });
    await expect(sessions.authenticateInboxToken(t1.body.token)).rejects.toMatchObject({ status: 401 });
    const t2 = (await b.call('POST', '/v1/inbox/token')).body.token;
    clock.advance(61_000);
    await expect(sessions.authenticateInboxToken(t2)).rejects.toMatchObject({ status: 401 });
    const t3 = (await b.call('POST', '/v1/inbox/token')).body.token;
    expect((await b.call('POST', '/v1/inbox/token', { csrf: false })).status).toBe(403);
    await b.call('POST', '/v1/auth/logout');
    await expect(sessions.authenticateInboxToken(t3)).rejects.toMatchObject({ status: 401 });
    await expect(sessions.authenticateInboxToken(undefined)).rejects.toMatchObject({ status: 401 });
    // An API key cannot get an inbox token: that route takes the session only.
    expect((await svc.call('POST', '/v1/inbox/token', { key: org.agentKey })).status).toBe(401);
    const c = new Browser(svc);
    await c.login(agentEmail(), PASSWORD);
    expect(await sessions.authenticateSessionCookie(`a=b; sb_session=${c.cookie}`)).toMatchObject({ userId: org.agentId, keyId: expect.stringMatching(/^session:[0-9a-f]{12}$/) });
    await expect(sessions.authenticateSessionCookie(undefined)).rejects.toMatchObject({ status: 401 });
  });

  it('keeps organizations apart: a session of one organization sees nothing of another', async () => {
    const b = new Browser(svc);
    await b.login(`admin@${other.id}.test`, PASSWORD);
    const t = await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'secret', description: 'of org A' } });
    const id = t.body.ticketId ?? t.body.ticket?.ticketId;
    expect((await b.call('GET', `/v1/tickets/${id}`)).status).toBe(404);
    expect((await b.call('PATCH', `/v1/tickets/${id}`, { body: { status: 'closed' } })).status).toBe(404);
  });
});

describe('sign-in cookie on https', () => {
  it('adds Secure when PUBLIC_URL is https', async () => {
    const svc = await startTestService({ env: { PUBLIC_URL: 'https://support.example.com' } });
    try {
      await svc.createOrg('Tls');
      const org = (await svc.call('GET', '/admin/v1/organizations', { key: OPERATOR_TOKEN })).body.organizations[0];
      const r = await new Browser(svc).login(`admin@${org.id}.test`, PASSWORD);
      expect(r.headers.get('set-cookie')).toMatch(/; Secure$/);
    } finally {
      await svc.close();
    }
  });
});

describe('failed-authentication throttling', () => {
  let svc: TestService;
  let org: TestOrg;
  const lines: string[] = [];
  beforeAll(async () => {
    svc = await startTestService({ log: createLogger('warn', {}, (line) => lines.push(line)) });
    org = await svc.createOrg('Throttle');
  });
  afterAll(() => svc?.close());

  it('answers 429 with Retry-After after 10 wrong passwords for one account, even for the right password, and logs each failure without the password', async () => {
    const email = `agent@${org.id}.test`;
    for (let i = 0; i < 10; i++) {
      const r = await new Browser(svc, `10.0.0.${i}`).login(email, `wrong password ${i}`);
      expect(r.status, `attempt ${i + 1}`).toBe(401);
    }
    const r = await new Browser(svc, '10.0.1.1').login(email, PASSWORD);
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe('too_many_attempts');
    const retry = Number(r.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(800);
    expect(retry).toBeLessThanOrEqual(900);
    // Another account from the same addresses is not affected.
    expect((await new Browser(svc, '10.0.0.1').login(`admin@${org.id}.test`, PASSWORD)).status).toBe(200);
    const failures = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'authentication failed' && l.account === email);
    expect(failures).toHaveLength(10);
    expect(failures[0]).toMatchObject({ via: 'password', reason: 'wrong password', address: '10.0.0.0' });
    expect(lines.join('\n')).not.toContain('wrong password 3');
  });

  it('answers 429 to every key from an address after 50 failures, a valid key included', async () => {
    const addr = '10.9.9.9';
    for (let i = 0; i < 50; i++) {
      const r = await svc.call('GET', '/v1/tickets', { key: `org_${String(i).padStart(6, '0')}${'x'.repeat(30)}`, headers: { 'x-forwarded-for': addr } });
      expect(r.status).toBe(401);
    }
    const blocked = await svc.call('GET', '/v1/tickets', { key: org.adminKey, headers: { 'x-forwarded-for': addr } });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('too_many_attempts');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await svc.call('GET', '/v1/tickets', { key: org.adminKey, headers: { 'x-forwarded-for': '10.9.9.10' } })).status).toBe(200);
    expect(lines.filter((l) => l.includes('"via":"api_key"')).length).toBeGreaterThanOrEqual(50);
  });

  it('counts failures per key prefix too', async () => {
    const prefixOf = org.adminKey.slice(0, 10);
    for (let i = 0; i < 10; i++) {
      await svc.call('GET', '/v1/tickets', { key: `${prefixOf}${'y'.repeat(30)}${i}`, headers: { 'x-forwarded-for': `10.8.0.${i}` } });
    }
    // The real key shares the prefix: it is throttled with the guesses.
    expect((await svc.call('GET', '/v1/tickets', { key: org.adminKey, headers: { 'x-forwarded-for': '10.8.1.1' } })).status).toBe(429);
  });
});

describe('first start', () => {
  it("the banner's admin login signs in", async () => {
    const { loadConfig } = await import('../../src/config.js');
    const { startServer } = await import('../../src/server.js');
    const { silentLogger } = await import('../../src/log.js');
    const printed: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => (printed.push(String(chunk)), true)) as typeof process.stdout.write;
    let running: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      running = await startServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: ':memory:', LOG_LEVEL: 'silent', SEED_DEMO: 'true' }), { log: silentLogger });
    } finally {
      process.stdout.write = write;
    }
    try {
      const banner = printed.join('');
      const m = /admin login\s+: (\S+) \/ (\S+)\s+\(sign in at (\S+)\)/.exec(banner);
      expect(m, banner).not.toBeNull();
      expect(m![3]).toBe(`http://localhost:${running.port}/login`);
      const r = await fetch(`http://127.0.0.1:${running.port}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: m![1], password: m![2] }) });
      expect(r.status).toBe(200);
      expect(((await r.json()) as { user: { role: string } }).user.role).toBe('admin');
    } finally {
      await running.close();
    }
  });
});
