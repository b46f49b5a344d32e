import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startTestService, type TestService } from '../harness/service.js';

describe('admin CLI', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.close());

  const cli = (...args: string[]) => runCli(svc, ...args);

  it('creates an organization, a user and a working key, lists and revokes it', async () => {
    const org = JSON.parse((await cli('org', 'create', '--name', 'CLI Co', '--json')).out);
    const user = JSON.parse((await cli('user', 'create', '--org', org.id, '--email', 'cli@x.io', '--name', 'Cli', '--role', 'admin', '--password', 'a long password', '--json')).out);
    const key = JSON.parse((await cli('key', 'create', '--org', org.id, '--user', user.id, '--scopes', 'tickets:create,tickets:read', '--json')).out);
    expect(key.key).toMatch(/^org_/);
    expect((await svc.call('POST', '/v1/tickets', { key: key.key, body: { subject: 'from cli', description: 'd' } })).status).toBe(201);
    const human = await cli('key', 'list', '--org', org.id);
    expect(human.out).toContain(key.prefix);
    const contact = JSON.parse((await cli('contact', 'create', '--org', org.id, '--aeid', '4915100000000:77', '--json')).out);
    expect(contact.audienceExternalId).toBe('4915100000000:77');
    expect((await cli('key', 'revoke', '--org', org.id, '--key', key.id)).code).toBe(0);
    expect((await svc.call('GET', '/v1/tickets', { key: key.key })).status).toBe(401);
  });

  it('exits non-zero with a clear message on bad input', async () => {
    const missing = await cli('user', 'create', '--org', 'x');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--email');
    const bad = await cli('key', 'create', '--org', 'nope', '--user', 'u', '--scopes', 'all');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('404');
    expect((await cli('frobnicate')).code).toBe(2);
  });
});
