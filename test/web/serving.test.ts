import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../harness/service.js';

// A stand-in build: the serving rules do not depend on what the files contain.
const dir = mkdtempSync(join(tmpdir(), 'sb-web-'));
mkdirSync(join(dir, 'assets'));
writeFileSync(join(dir, 'index.html'), '<!doctype html><title>dashboard</title><div id="app"></div>');
writeFileSync(join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');

const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

describe('the dashboard served by the service', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { WEB_DIR: dir } });
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('GET / and the page routes answer index.html, never cached', async () => {
    for (const path of ['/', '/login', '/inbox', '/inbox/4915112345678%3A106540352242922', '/tickets?status=open', '/settings/api-keys']) {
      const r = await svc.call('GET', path, { headers: html });
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(r.headers.get('cache-control'), path).toBe('no-cache');
      expect(r.headers.get('content-security-policy'), path).toContain("default-src 'self'");
      expect(r.body, path).toContain('<title>dashboard</title>');
    }
  });

  it('hashed assets are immutable for a year', async () => {
    const r = await svc.call('GET', '/assets/index-AbC123.js');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(r.headers.get('content-type')).toMatch(/javascript/);
    const missing = await svc.call('GET', '/assets/nope.js', { headers: html });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });

  it('never shadows API paths or protocol endpoints, even for a browser', async () => {
    for (const path of ['/v1/nope', '/v2/nope', '/api/v1/nope', '/admin/v1/nope', '/ws', '/mcp/nope', '/webhooks/nope', '/metricsx/../metrics']) {
      const r = await svc.call('GET', path, { headers: html });
      expect(r.headers.get('content-type') ?? '', path).not.toMatch(/^text\/html/);
    }
    expect((await svc.call('GET', '/openapi.json', { headers: html })).body.openapi).toMatch(/^3\./);
    expect((await svc.call('GET', '/healthz', { headers: html })).body).toEqual({ status: 'ok' });
    const docs = await svc.call('GET', '/docs', { headers: html });
    expect(docs.body).not.toContain('<title>dashboard</title>');
  });

  it('answers JSON 404 to non-page requests: other methods, or a client that does not take HTML', async () => {
    const post = await svc.call('POST', '/inbox', { body: {} });
    expect(post.status).toBe(404);
    expect(post.body).toMatchObject({ success: false, error: { code: 'not_found' } });
    const json = await svc.call('GET', '/login', { headers: { accept: 'application/json' } });
    expect(json.status).toBe(404);
    expect(json.body.success).toBe(false);
  });
});

describe('without a build', () => {
  it('says how to build it, with a 503 and no stack trace', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'sb-web-empty-'));
    const svc = await startTestService({ env: { WEB_DIR: empty } });
    try {
      const r = await svc.call('GET', '/', { headers: html });
      expect(r.status).toBe(503);
      expect(r.body).toContain('npm start');
      expect(r.body).not.toMatch(/at .*\.(ts|js):\d+/);
    } finally {
      await svc.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
