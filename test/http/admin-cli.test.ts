import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPERATOR_TOKEN, runCli, startTestService, type TestService } from '../harness/service.js';
import { main as adminCli } from '../../src/cli/admin.js';
import { demoBanner } from '../../src/app/bootstrap.js';
// @ts-expect-error -- a plain .mjs script without types
import { serviceBuildStale } from '../../scripts/build-state.mjs';

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

  it('prints tables with a header row naming the columns', async () => {
    const org = JSON.parse((await cli('org', 'create', '--name', 'Header Co', '--json')).out);
    const lines = (await cli('org', 'list')).out.split('\n');
    expect(lines[0]).toMatch(/^id\s+name\s+createdAt$/);
    const row = lines.find((l) => l.startsWith(org.id))!;
    // Columns line up under their headers.
    expect(row.indexOf('Header Co')).toBe(lines[0]!.indexOf('name'));
  });

  it('reads the connection from the variables the first-start banner exports', async () => {
    const banner = demoBanner({ operatorToken: OPERATOR_TOKEN, organizationId: 'o', adminEmail: 'a@b.c', adminPassword: 'p', apiKey: 'org_x' }, svc.url);
    const line = banner.split('\n').find((l) => l.trim().startsWith('export '))!;
    const env = Object.fromEntries(line.trim().slice('export '.length).split(' ').map((kv) => kv.split('=') as [string, string]));
    const out: string[] = [];
    const code = await adminCli(['org', 'list', '--json'], env, (s) => out.push(s), () => {});
    expect(code).toBe(0);
    expect(JSON.parse(out.join('')).organizations).toBeInstanceOf(Array);
    // The older names still work when the new ones are unset.
    expect(await adminCli(['org', 'list', '--json'], { SWITCHBOARD_URL: svc.url, SWITCHBOARD_OPERATOR_TOKEN: OPERATOR_TOKEN }, () => {}, () => {})).toBe(0);
  });
});

describe('npm run admin', () => {
  it('rebuilds only when dist is missing or older than a source or tsconfig', () => {
    const root = mkdtempSync(join(tmpdir(), 'sb-build-'));
    try {
      mkdirSync(join(root, 'src', 'cli'), { recursive: true });
      mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
      for (const f of ['tsconfig.json', 'tsconfig.build.json', 'src/cli/admin.ts']) writeFileSync(join(root, f), '');
      const entry = join('cli', 'admin.js');
      expect(serviceBuildStale(root, entry)).toBe(true);
      writeFileSync(join(root, 'dist', entry), '');
      const t = (s: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + s * 1000);
      for (const f of ['tsconfig.json', 'tsconfig.build.json', 'src/cli/admin.ts']) utimesSync(join(root, f), t(0), t(0));
      utimesSync(join(root, 'dist', entry), t(10), t(10));
      expect(serviceBuildStale(root, entry)).toBe(false);
      utimesSync(join(root, 'src', 'cli', 'admin.ts'), t(20), t(20));
      expect(serviceBuildStale(root, entry)).toBe(true);
      utimesSync(join(root, 'src', 'cli', 'admin.ts'), t(0), t(0));
      utimesSync(join(root, 'tsconfig.build.json'), t(20), t(20));
      expect(serviceBuildStale(root, entry)).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
