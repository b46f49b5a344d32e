import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../web/browser.js';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { call, mcpClient, structured } from '../mcp/helpers.js';
import { sandboxStripeKey } from './helpers.js';

describe('connected tools in headless Chromium: a person signs in and pays', { timeout: 180_000 }, () => {
  let svc: TestService;
  let a: TestOrg;
  let browser: Browser;
  beforeAll(async () => {
    [svc, browser] = await Promise.all([startTestService(), launchChromium()]);
    a = await svc.createOrg('A');
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  it('opens redirect_url, approves on the sandbox consent page, lands on the connected page; the tool is active', async () => {
    const r = await svc.call('POST', '/v1/integrations/email/connect', { key: a.adminKey, body: { name: 'Inbox' } });
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(r.body.redirect_url);
    await expect(page.getByRole('note').textContent()).resolves.toMatch(/Sandbox provider/);
    await page.getByLabel('Email').fill('browser@shop.example');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Connected' }).waitFor();
    expect(page.url()).toContain('/v1/tools/oauth/callback');
    const t = await svc.call('GET', `/v1/tools/${r.body.id}`, { key: a.adminKey });
    expect(t.body).toMatchObject({ status: 'active', account: 'browser@shop.example' });
    const client = await mcpClient(`${svc.url}/mcp/${r.body.id}`, a.adminKey);
    expect(structured(await call(client, 'list_emails', {})).emails.length).toBe(3);
    await client.close();
    await page.close();
  });

  it('a customer pays on the sandbox checkout page; the payment turns paid', async () => {
    const key = await sandboxStripeKey(svc, a.adminKey, 'Browser Shop');
    const r = await svc.call('POST', '/v1/integrations/payment/connect', { key: a.adminKey, body: { name: 'Shop', data: { api_key: key } } });
    const client = await mcpClient(`${svc.url}/mcp/${r.body.id}`, a.adminKey);
    const req = structured(await call(client, 'create_payment_request', { amount: 19.99, currency: 'usd', description: 'Gift card' }));
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(req.url);
    await page.getByRole('heading', { name: 'Pay Browser Shop' }).waitFor();
    await page.getByRole('button', { name: /Pay 19.99 USD/ }).click();
    await page.getByRole('heading', { name: 'Paid' }).waitFor();
    expect(structured(await call(client, 'check_payment_status', { paymentId: req.paymentId })).status).toBe('paid');
    await client.close();
    await page.close();
  });
});
