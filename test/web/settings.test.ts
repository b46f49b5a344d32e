import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { screenshot, type Watched } from './browser.js';
import { useDashboardSuite } from './suite.js';

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe("the dashboard's settings for channels and connected tools, and the simulator's templates, in Chromium", { timeout: 120_000 }, () => {
  // A channel on the real network gets nowhere here: its first template sync fails at once.
  const suite = useDashboardSuite('Settings Org', { GRAPH_API_BASE_URL: 'http://127.0.0.1:9/v27.0', SANDBOX_STATUS_DELAY_MS: '0' });

  async function admin(): Promise<Watched> {
    const { w } = await suite.open({ width: 1280, height: 860 });
    await suite.signIn(w.page, `admin@${suite.org.id}.test`);
    return w;
  }

  const channelCard = (page: Page, name: string) => page.getByTestId('channels').locator('article', { has: page.getByText(name, { exact: true }) });

  it('an admin creates a sandbox channel in settings, sees it listed, and syncs its templates there', async () => {
    const w = await admin();
    await w.page.getByRole('link', { name: 'Settings' }).click();
    await w.page.getByRole('link', { name: 'Channels & templates' }).click();
    await w.page.getByRole('button', { name: 'New channel' }).click();
    await w.page.getByLabel('WhatsApp on the sandbox network').check();
    await w.page.getByLabel('Name', { exact: true }).fill('Sandbox support');
    await w.page.getByRole('button', { name: 'Create channel' }).click();
    await w.page.getByTestId('channel-created').filter({ hasText: /The channel Sandbox support was created\. \d+ templates synced/ }).waitFor();
    const card = channelCard(w.page, 'Sandbox support');
    await card.getByText('WhatsApp on the sandbox network').waitFor();
    const listed = (await suite.svc.call('GET', '/v1/channels', { key: suite.org.adminKey })).body.channels;
    expect(listed).toEqual([expect.objectContaining({ name: 'Sandbox support', network: 'sandbox' })]);

    // The templates opened with the new channel; a sync from here fills the same table.
    await card.getByTestId('templates').getByRole('cell', { name: 'order_update' }).waitFor();
    await card.getByRole('button', { name: 'Sync from the network' }).click();
    await card.getByRole('status').filter({ hasText: /^Synced \d+ templates/ }).waitFor();
    await card.getByTestId('templates').getByText('approved').first().waitFor();
    expect(w.problems).toEqual([]);
  });

  it('a WhatsApp channel on the real network shows its webhook URL and verify token to copy, and a new token on demand', async () => {
    const w = await admin();
    await w.page.goto(`${suite.svc.url}/settings/channels`);
    await w.page.getByRole('button', { name: 'New channel' }).click();
    await w.page.getByLabel('WhatsApp Business number').check();
    await w.page.getByLabel('Name', { exact: true }).fill('Real number');
    await w.page.getByLabel('Display phone number').fill('15550009876');
    await w.page.getByLabel('Phone number ID').fill('106540352299001');
    await w.page.getByLabel('WhatsApp Business account ID').fill('102290129399001');
    await w.page.getByLabel('Access token').fill('EAAJBsettings-browser-token');
    await w.page.getByLabel('App secret').fill('app-secret-browser');
    await w.page.getByRole('button', { name: 'Create channel' }).click();
    const created = w.page.getByTestId('channel-created');
    await created.filter({ hasText: 'The first template sync failed' }).waitFor();
    const channel = (await suite.svc.call('GET', '/v1/channels', { key: suite.org.adminKey })).body.channels.find((c: { name: string }) => c.name === 'Real number');
    expect(await created.getByTestId('webhook-url').textContent()).toBe(channel.webhook.url);
    expect(channel.webhook.url).toMatch(new RegExp(`/webhooks/whatsapp/${channel.id}$`));
    const token = (await created.getByTestId('verify-token').textContent())!;
    // The token shown is the one the channel verifies Meta's subscription with.
    const verify = (t: string) => suite.svc.call('GET', `/webhooks/whatsapp/${channel.id}?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(t)}&hub.challenge=4242`);
    expect(await verify(token)).toMatchObject({ status: 200 });
    await created.getByRole('button', { name: 'Copy verify token' }).waitFor();
    // Listed with its webhook URL to copy; the token is not shown again.
    const card = channelCard(w.page, 'Real number');
    await card.getByText(channel.webhook.url).waitFor();
    await screenshot(w.page, 'settings-channels-new');
    await created.getByRole('button', { name: 'I have saved it' }).click();
    expect(await w.page.getByTestId('verify-token').count()).toBe(0);

    w.page.once('dialog', (d) => void d.accept());
    await card.getByRole('button', { name: 'New verify token' }).click();
    await w.page.getByTestId('channel-created').filter({ hasText: 'A new verify token for Real number.' }).waitFor();
    const fresh = (await w.page.getByTestId('verify-token').textContent())!;
    expect(fresh).not.toBe(token);
    expect(await verify(fresh)).toMatchObject({ status: 200 });
    expect(await verify(token)).toMatchObject({ status: 403 });
    expect(w.problems).toEqual([]);
  });

  it('an admin connects a sandbox mailbox by signing in at the provider, and a sandbox payment account by key, sees them listed, and disconnects them', async () => {
    const w = await admin();
    await w.page.goto(`${suite.svc.url}/settings/tools`);
    await w.page.getByText('No tool is connected.').waitFor();
    await w.page.getByLabel('Integration').selectOption('email');
    await w.page.getByLabel('Name', { exact: true }).fill('Support mailbox');
    await w.page.getByRole('button', { name: 'Connect and sign in' }).click();
    const row = w.page.getByTestId('tools').locator('tr', { hasText: 'Support mailbox' });
    await row.getByText('waiting for sign-in').waitFor();

    // The provider's sign-in opens in a tab of its own; the list follows once it is done.
    const [signIn] = await Promise.all([w.page.context().waitForEvent('page'), row.getByRole('link', { name: 'Sign in' }).click()]);
    await signIn.getByLabel('Email').fill('support@shop.example');
    await signIn.getByRole('button', { name: 'Allow' }).click();
    await signIn.getByRole('heading', { name: 'Connected' }).waitFor();
    await signIn.close();
    await row.getByText('connected', { exact: true }).waitFor();
    await row.getByText('support@shop.example').waitFor();

    // Payment: a sandbox Stripe account's key.
    const account = await fetch(`${suite.svc.url}/sandbox/providers/stripe/accounts`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${suite.org.adminKey}` }, body: JSON.stringify({ name: 'Settings Shop' }) });
    expect(account.status).toBe(201);
    const { api_key: key } = (await account.json()) as { api_key: string };
    await w.page.getByLabel('Integration').selectOption('payment');
    await w.page.getByLabel('Name', { exact: true }).fill('Shop payments');
    await w.page.getByLabel('Stripe secret key').fill(key);
    await w.page.getByRole('button', { name: 'Connect', exact: true }).click();
    const pay = w.page.getByTestId('tools').locator('tr', { hasText: 'Shop payments' });
    await pay.getByText('connected', { exact: true }).waitFor();
    await screenshot(w.page, 'settings-tools');

    const tools = (await suite.svc.call('GET', '/v1/tools', { key: suite.org.adminKey })).body.tools;
    expect(tools.map((t: { name: string; status: string; sandbox: boolean }) => [t.name, t.status, t.sandbox])).toEqual([['Support mailbox', 'active', true], ['Shop payments', 'active', true]]);

    for (const name of ['Support mailbox', 'Shop payments']) {
      w.page.once('dialog', (d) => void d.accept());
      await w.page.getByTestId('tools').locator('tr', { hasText: name }).getByRole('button', { name: 'Disconnect' }).click();
      await w.page.getByTestId('tools').locator('tr', { hasText: name }).waitFor({ state: 'detached' });
    }
    await w.page.getByText('No tool is connected.').waitFor();
    expect((await suite.svc.call('GET', '/v1/tools', { key: suite.org.adminKey })).body.tools).toEqual([]);
    expect(w.problems).toEqual([]);
  });

  it("the simulator shows a template as the customer reads it: header, body with its variables filled, footer, buttons", async () => {
    const ch = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'whatsapp_cloud', name: 'Simulator line', network: 'sandbox' } });
    expect(ch.status).toBe(201);
    await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/credits/top-up`, { key: OPERATOR_TOKEN, body: { amount: 100 } });
    const phone = '4915112349901';
    const send = (template: unknown) => suite.svc.call('POST', '/v2/wa/template', { key: suite.org.adminKey, body: { channelId: ch.body.id, to: phone, template } });
    expect((await send({ name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: ['Ann', 'A-1001', 'Monday'].map((text) => ({ type: 'text', text })) }] })).status).toBe(201);
    expect((await send({ name: 'hello_world', language: { code: 'en_US', policy: 'deterministic' } })).status).toBe(201);

    const w = await admin();
    await w.page.goto(`${suite.svc.url}/simulator`);
    await w.page.getByLabel('Channel').selectOption({ label: 'Simulator line' });
    await w.page.getByLabel('Customer phone (digits)').fill(phone);
    await w.page.getByRole('button', { name: 'Open the phone' }).click();
    const panel = w.page.getByTestId('customer-panel');
    const order = panel.locator('[data-template="order_update"]');
    await order.getByText('Hi Ann, your order A-1001 has shipped and arrives on Monday.', { exact: true }).waitFor();
    await panel.getByRole('button', { name: 'Track my order' }).waitFor();
    const hello = panel.locator('[data-template="hello_world"]');
    await hello.getByText('Hello World', { exact: true }).waitFor();
    await hello.getByText('WhatsApp Business Platform sample message').waitFor();
    expect(await panel.getByText('[template', { exact: false }).count()).toBe(0);
    await screenshot(w.page, 'simulator-template');

    // A quick reply of the rendered template still reaches the service as the customer's tap.
    await panel.getByRole('button', { name: 'Track my order' }).click();
    await panel.locator('li.mine').getByText('Track my order').waitFor();
    expect(w.problems).toEqual([]);
  });
});
