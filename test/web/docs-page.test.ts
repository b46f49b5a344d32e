import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { launchChromium } from './browser.js';

/** /docs in headless Chromium: Swagger UI from node_modules renders /openapi.json, and its try-it panel takes an API key. */
describe('the API reference page', () => {
  let svc: TestService;
  let org: TestOrg;
  let browser: Browser;
  beforeAll(async () => {
    svc = await startTestService();
    org = await svc.createOrg('Docs');
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  it('renders every operation with examples, without console errors or requests elsewhere, and tries an operation with an API key', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Generous: Swagger UI renders every operation, and this machine is shared.
    page.setDefaultTimeout(60_000);
    const problems: string[] = [];
    const elsewhere: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(svc.url) && !r.url().startsWith('data:')) elsewhere.push(r.url());
    });

    const res = await page.goto(`${svc.url}/docs`);
    expect(res?.status()).toBe(200);
    await page.locator('.opblock').first().waitFor();
    const doc = (await svc.call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
    // Swagger UI renders a long list virtually (only what is near the viewport), so the operations
    // are collected while the page scrolls from top to bottom.
    // The page's globals, typed here: the tests compile without the DOM library.
    type PageWindow = { scrollTo(x: number, y: number): void; document: { documentElement: { scrollHeight: number } } };
    const seen = new Set<string>();
    for (let y = 0; ; y += 500) {
      const ids = await page.locator('.opblock').evaluateAll((els) => els.map((e) => e.closest('[id^="operations-"]')?.id ?? e.id));
      for (const id of ids) seen.add(id);
      const bottom = await page.evaluate((to) => {
        const w = globalThis as unknown as PageWindow;
        w.scrollTo(0, to);
        return to >= w.document.documentElement.scrollHeight;
      }, y);
      if (bottom) break;
      await page.waitForTimeout(30);
    }
    await page.evaluate(() => (globalThis as unknown as PageWindow).scrollTo(0, 0));
    expect(seen.size).toBe(operations);
    expect(await page.locator('a[href="/asyncapi.json"]').count()).toBeGreaterThanOrEqual(1);

    // An operation's example request and response, as the document gives them.
    const create = page.locator('#operations-Tickets-createTicket');
    await create.locator('.opblock-summary').click();
    await create.locator('.opblock-section-request-body .highlight-code').first().waitFor({ timeout: 60_000 });
    expect(await create.innerText()).toContain('"subject"');

    // Try it: authorize with a key, run GET /v1/tickets from the page.
    await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'Seen from the docs', description: 'd' } });
    await page.getByRole('button', { name: /Authorize/ }).first().click();
    const dialog = page.locator('.dialog-ux');
    await dialog.locator('input[type="text"], input[type="password"]').first().fill(org.adminKey);
    await dialog.locator('button.modal-btn.authorize').first().click();
    await dialog.locator('button.btn-done').first().click();
    const list = page.locator('#operations-Tickets-listTickets');
    await list.locator('.opblock-summary').click();
    await list.getByRole('button', { name: 'Try it out' }).click();
    await list.getByRole('button', { name: 'Execute' }).click();
    await list.locator('.live-responses-table tbody .response-col_status').first().waitFor();
    expect((await list.locator('.live-responses-table tbody .response-col_status').first().innerText()).trim()).toBe('200');
    expect(await list.locator('.live-responses-table').innerText()).toContain('Seen from the docs');

    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
    await page.close();
    // A wait, not an assertion: every step above waits up to 20 s on a loaded machine.
  }, 180_000);

  it('serves the renderer from node_modules with caching headers, and nothing else of the package', async () => {
    const js = await fetch(`${svc.url}/docs/assets/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toMatch(/max-age=86400/);
    expect((await svc.call('GET', '/docs/assets/index.html')).status).toBe(404);
    expect((await svc.call('GET', '/docs/assets/package.json')).status).toBe(404);
  });
});
