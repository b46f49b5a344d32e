import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { call, errorText, mcpClient, structured } from '../mcp/helpers.js';
import { stripeSignature } from '../../src/tools/index.js';
import { fault, sandboxStripeKey } from './helpers.js';

const PAYMENT_TOOLS = ['create_payment_request', 'check_payment_status', 'cancel_payment', 'get_payment_instructions'];

/** The customer pays on the sandbox checkout page. */
async function pay(url: string, card = '4242 4242 4242 4242'): Promise<number> {
  const page = await (await fetch(url)).text();
  const action = /<form method="post" action="([^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&');
  const r = await fetch(action, { method: 'POST', body: new URLSearchParams({ email: 'ada@example.com', card }), redirect: 'manual' });
  await r.text();
  return r.status;
}

async function until(fn: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await fn()); i++) await new Promise((r) => setTimeout(r, 25));
}

describe('payment tool against the sandbox payment provider over HTTP', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let apiKey: string;
  let toolId: string;
  let client: Client;
  beforeAll(async () => {
    svc = await startTestService();
    a = await svc.createOrg('A');
    b = await svc.createOrg('B');
    apiKey = await sandboxStripeKey(svc, a.adminKey, 'Lid Shop');
  });
  afterAll(async () => {
    await client?.close();
    await svc?.close();
  });

  it('connect: data.api_key required and checked at the provider; the tool is active at once and never shows the key', async () => {
    expect((await svc.call('POST', '/v1/integrations/payment/connect', { key: a.adminKey, body: { name: 'Shop' } })).body.error.details).toEqual([expect.objectContaining({ field: 'data.api_key' })]);
    const bad = await svc.call('POST', '/v1/integrations/payment/connect', { key: a.adminKey, body: { name: 'Shop', data: { api_key: 'sk_test_sbx_wrong' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_api_key');
    expect(JSON.stringify(bad.body)).not.toContain('sk_test_sbx_wrong');
    expect((await svc.call('GET', '/v1/tools', { key: a.adminKey })).body.tools).toEqual([]);
    const r = await svc.call('POST', '/v1/integrations/payment/connect', { key: a.adminKey, body: { name: 'Shop', data: { api_key: apiKey } } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'active', account: 'Lid Shop', sandbox: true });
    expect(r.body.redirect_url).toBeUndefined();
    expect(JSON.stringify(r.body)).not.toContain(apiKey);
    toolId = r.body.id;
    client = await mcpClient(`${svc.url}/mcp/${toolId}`, a.adminKey);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...PAYMENT_TOOLS].sort());
  });

  it('request → customer pays on the checkout page → signed webhook → paid', async () => {
    const req = structured(await call(client, 'create_payment_request', { amount: '42.50', currency: 'EUR', description: 'Replacement lid', reference: 'T-1', idempotencyKey: 'order-1042' }));
    expect(req).toMatchObject({ status: 'open', amount: '42.50 EUR', amountMinor: 4250, reference: 'T-1', paidConfirmedByWebhook: false });
    const again = structured(await call(client, 'create_payment_request', { amount: '42.50', currency: 'EUR', description: 'Replacement lid', reference: 'T-1', idempotencyKey: 'order-1042' }));
    expect(again.paymentId).toBe(req.paymentId);
    const how = structured(await call(client, 'get_payment_instructions', { paymentId: req.paymentId }));
    expect(how.instructions).toContain(req.url);
    expect(how.instructions).toContain('42.50 EUR');
    expect(await pay(req.url, '4000 0000 0000 0002')).toBe(402);
    expect(structured(await call(client, 'check_payment_status', { paymentId: req.paymentId })).status).toBe('open');
    expect(await pay(req.url)).toBe(200);
    await until(async () => (await svc.running.services.tools!.repo.paymentEvents(toolId, req.paymentId)).length > 0);
    const paid = structured(await call(client, 'check_payment_status', { paymentId: req.paymentId }));
    expect(paid).toMatchObject({ status: 'paid', paidConfirmedByWebhook: true, customerEmail: 'ada@example.com', url: null });
    expect(errorText(await call(client, 'cancel_payment', { paymentId: req.paymentId }))).toMatch(/already paid/);
    expect(structured(await call(client, 'get_payment_instructions', { paymentId: req.paymentId, language: 'de' })).instructions).toMatch(/eingegangen/);
  });

  it('cancel: an open request expires and can no longer be paid', async () => {
    const req = structured(await call(client, 'create_payment_request', { amount: 1000, currency: 'jpy', description: 'Tea' }));
    expect(req.amount).toBe('1000 JPY');
    const cancelled = structured(await call(client, 'cancel_payment', { paymentId: req.paymentId }));
    expect(cancelled.status).toBe('expired');
    expect(structured(await call(client, 'cancel_payment', { paymentId: req.paymentId })).status).toBe('expired');
    expect(await (await fetch(req.url)).text()).toMatch(/expired/);
  });

  it('the webhook refuses forged, unsigned and replayed-old events', async () => {
    const body = JSON.stringify({ id: 'evt_forged', object: 'event', type: 'checkout.session.completed', data: { object: { id: 'cs_test_forged', object: 'checkout.session', payment_status: 'paid' } } });
    const path = `/v1/tools/${toolId}/payment-webhook`;
    expect((await svc.call('POST', path, { rawBody: body })).status).toBe(400);
    expect((await svc.call('POST', path, { rawBody: body, headers: { 'stripe-signature': stripeSignature('whsec_wrong', body, Math.floor(Date.now() / 1000)) } })).status).toBe(400);
    const creds = await svc.running.services.tools!.repo.getCredentials(toolId);
    const secret = creds?.kind === 'api_key' ? creds.webhookSecret! : '';
    expect((await svc.call('POST', path, { rawBody: body, headers: { 'stripe-signature': stripeSignature(secret, body, Math.floor(Date.now() / 1000) - 3600) } })).status).toBe(400);
    const ok = await svc.call('POST', path, { rawBody: body, headers: { 'stripe-signature': stripeSignature(secret, body, Math.floor(Date.now() / 1000)) } });
    expect(ok.body).toEqual({ received: true, recorded: true });
  });

  it('bad arguments and provider failures are tool errors', async () => {
    expect(errorText(await call(client, 'create_payment_request', { amount: '0.10', currency: 'EUR', description: 'x' }))).toMatch(/at least 0.50/);
    expect(errorText(await call(client, 'create_payment_request', { amount: '1.234', currency: 'EUR', description: 'x' }))).toMatch(/amount/);
    expect(errorText(await call(client, 'check_payment_status', { paymentId: 'nope' }))).toMatch(/paymentId/);
    expect(errorText(await call(client, 'check_payment_status', { paymentId: 'cs_test_doesnotexist1' }))).toMatch(/not_found/);
    await fault(svc, { target: 'stripe', status: 429, retryAfter: 3 });
    expect(errorText(await call(client, 'check_payment_status', { paymentId: 'cs_test_doesnotexist1' }))).toMatch(/wait 3 seconds/);
    await fault(svc, { target: 'stripe', status: 401 });
    expect(errorText(await call(client, 'check_payment_status', { paymentId: 'cs_test_doesnotexist1' }))).toMatch(/reauthorization_required/);
    expect((await svc.call('GET', `/v1/tools/${toolId}`, { key: a.adminKey })).body.status).toBe('reauthorization_required');
    const again = await svc.call('POST', '/v1/integrations/payment/connect', { key: a.adminKey, body: { name: 'Shop', tool_id: toolId, data: { api_key: apiKey } } });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('active');
  });

  it('another organization cannot see, use or delete it; delete removes the webhook endpoint and credentials', async () => {
    expect((await svc.call('GET', `/v1/tools/${toolId}`, { key: b.adminKey })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/tools/${toolId}`, { key: b.adminKey })).status).toBe(404);
    await expect(mcpClient(`${svc.url}/mcp/${toolId}`, b.adminKey)).rejects.toThrow(/404|No MCP server/);
    const del = await svc.call('DELETE', `/v1/tools/${toolId}`, { key: a.adminKey });
    expect(del.body).toEqual({ id: toolId, deleted: true, revoked_at_provider: true });
    expect(await svc.running.services.tools!.repo.getCredentials(toolId)).toBeNull();
    await expect(client.listTools()).rejects.toThrow(/404|No MCP server/);
  });
});
