import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { screenshot, watchedPage } from './browser.js';
import { PASSWORD, useDashboardSuite } from './suite.js';

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe('the dashboard in Chromium', { timeout: 120_000 }, () => {
  // Webhooks to this machine's receiver below; a failed delivery is not retried, so it can be resent at once.
  const suite = useDashboardSuite('Dashboard Org', { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_RETRY_WINDOW_MS: '0' });
  const { open, signIn } = suite;

  it('sends a visitor who is not signed in from / to /login, at 360 px and on a desktop', async () => {
    for (const viewport of [{ width: 360, height: 740 }, { width: 1280, height: 800 }]) {
      const { context, w } = await open(viewport);
      await w.page.goto(`${suite.svc.url}/`);
      await w.page.getByRole('heading', { name: 'Sign in to Switchboard' }).waitFor();
      // The app replaces the URL right after it renders the form: wait for it rather than race it.
      await w.page.waitForURL((u) => u.pathname === '/login');
      // Keyboard: the email field has focus, tab reaches the password.
      await w.page.keyboard.type('someone@example.com');
      await w.page.keyboard.press('Tab');
      expect(await w.page.evaluate('document.activeElement?.getAttribute("name")')).toBe('password');
      await screenshot(w.page, viewport.width === 360 ? 'login-360' : 'login');
      expect(w.problems).toEqual([]);
      await context.close();
    }
  });

  it('a deep link asked for before signing in is where the sign-in leads', async () => {
    const { w } = await open();
    await w.page.goto(`${suite.svc.url}/tickets?status=open`);
    await w.page.waitForURL(/\/login\?next=/);
    await w.page.getByLabel('Email').fill(`admin@${suite.org.id}.test`);
    await w.page.getByLabel('Password').fill(PASSWORD);
    await w.page.keyboard.press('Enter');
    await w.page.waitForURL(/\/tickets\?status=open$/);
    await w.page.getByRole('heading', { name: 'Tickets' }).waitFor();
    expect(w.problems).toEqual([]);
  });

  it('10 wrong passwords give 429: the page says when to try again, and the right password is refused too until then', async () => {
    const other = await suite.svc.createOrg('Throttled Org');
    const { w } = await open();
    w.allow('/v1/auth/login', 401, 429);
    await w.page.goto(`${suite.svc.url}/login`);
    const email = `agent@${other.id}.test`;
    for (let i = 1; i <= 10; i++) {
      await w.page.getByLabel('Email').fill(email);
      await w.page.getByLabel('Password').fill(`wrong password ${i}`);
      await w.page.getByRole('button', { name: 'Sign in' }).click();
      await w.page.getByRole('alert').filter({ hasText: /do not match|Too many attempts/ }).waitFor();
      await w.page.getByRole('button', { name: 'Sign in' }).waitFor({ state: 'visible' });
    }
    await w.page.getByLabel('Email').fill(email);
    await w.page.getByLabel('Password').fill(PASSWORD);
    const [answer] = await Promise.all([w.page.waitForResponse((r) => r.url().endsWith('/v1/auth/login')), w.page.getByRole('button', { name: 'Sign in' }).click()]);
    expect(answer.status()).toBe(429);
    await w.page.getByRole('alert').filter({ hasText: /Too many attempts\. Try again in \d+ seconds\./ }).waitFor();
    expect(new URL(w.page.url()).pathname).toBe('/login');
    await screenshot(w.page, 'login-throttled');
    expect(w.problems).toEqual([]);
  });

  it('an agent sees no settings, and opening them by URL shows a refusal (the API refuses too)', async () => {
    const { w } = await open();
    await signIn(w.page, `agent@${suite.org.id}.test`);
    expect(await w.page.getByRole('link', { name: 'Settings' }).count()).toBe(0);
    await w.page.goto(`${suite.svc.url}/settings/api-keys`);
    await w.page.getByRole('alert').filter({ hasText: 'Settings are for admins' }).waitFor();
    expect(await w.page.getByRole('heading', { name: 'API keys' }).count()).toBe(0);
    w.allow('/api/v1/webhooks', 403);
    const status = await w.page.evaluate(async () => (await fetch('/api/v1/webhooks', { credentials: 'same-origin' })).status);
    expect(status).toBe(403);
    await screenshot(w.page, 'settings-refused');
    expect(w.problems).toEqual([]);
  });

  it('logout ends the session in every tab', async () => {
    const { context, w } = await open();
    await signIn(w.page, `admin@${suite.org.id}.test`);
    const second = await watchedPage(context);
    second.allow('/v1/auth/session', 401);
    // The signed-out tab's inbox socket may try to reconnect, and its queue count refresh, before it leaves.
    second.allow('/v1/inbox/token', 401);
    second.allow('/v1/conversations', 401);
    await second.page.goto(`${suite.svc.url}/tickets`);
    await second.page.getByRole('heading', { name: 'Tickets' }).waitFor();
    await w.page.getByRole('button', { name: 'Sign out' }).click();
    await w.page.waitForURL(/\/login$/);
    // The other tab leaves without a reload, and a reload stays signed out.
    await second.page.waitForURL(/\/login/);
    await second.page.reload();
    await second.page.getByRole('heading', { name: 'Sign in to Switchboard' }).waitFor();
    second.allow('/v1/tickets', 401);
    const after = await second.page.evaluate(async () => (await fetch('/v1/tickets', { credentials: 'same-origin' })).status);
    expect(after).toBe(401);
    expect(w.problems).toEqual([]);
    expect(second.problems).toEqual([]);
  });

  it('an admin signs in, creates an agent and an API key whose secret is shown once; the new agent can sign in and the key works', async () => {
    const { w } = await open();
    await signIn(w.page, `admin@${suite.org.id}.test`);
    await w.page.getByRole('link', { name: 'Settings' }).click();
    await w.page.getByRole('heading', { name: 'Users' }).waitFor();
    const newUser = w.page.getByRole('form', { name: 'New user' });
    await newUser.getByLabel('Name').fill('Nina Agent');
    await newUser.getByLabel('Email').fill(`nina@${suite.org.id}.test`);
    await newUser.getByLabel('Role').selectOption('agent');
    await newUser.getByLabel('First password').fill(PASSWORD);
    await newUser.getByRole('button', { name: 'Create user' }).click();
    await w.page.getByTestId('users').locator(`tr[data-user="nina@${suite.org.id}.test"]`).waitFor();
    await screenshot(w.page, 'settings-users');

    await w.page.getByRole('link', { name: 'API keys' }).click();
    const newKey = w.page.getByRole('form', { name: 'New API key' });
    await newKey.getByLabel('Name').fill('CRM sync');
    await newKey.getByLabel('Acts as').selectOption({ label: 'Nina Agent (agent)' });
    await newKey.getByRole('checkbox', { name: 'tickets:read' }).check();
    await newKey.getByRole('button', { name: 'Create key' }).click();
    const secretBox = w.page.getByTestId('new-secret');
    const secret = (await secretBox.locator('code').textContent())!.trim();
    expect(secret).toMatch(/^org_/);
    await w.page.getByTestId('api-keys').locator('tr[data-key="CRM sync"]').waitFor();
    await screenshot(w.page, 'settings-api-keys');
    // Shown once: gone after acknowledging, and nowhere on the page after a reload.
    await secretBox.getByRole('button', { name: 'I have saved it' }).click();
    await w.page.reload();
    await w.page.getByTestId('api-keys').locator('tr[data-key="CRM sync"]').waitFor();
    expect(await w.page.content()).not.toContain(secret);
    const listed = await suite.svc.call('GET', '/v1/tickets', { key: secret });
    expect(listed.status).toBe(200);

    const nina = await open();
    await signIn(nina.w.page, `nina@${suite.org.id}.test`);
    expect(nina.w.problems).toEqual([]);
    expect(w.problems).toEqual([]);
  });

  it("an admin syncs a sandbox channel's templates, sees each one's status and variables, and the credits with their history", async () => {
    const ch = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'whatsapp_cloud', name: 'Sandbox WhatsApp', network: 'sandbox' } });
    expect(ch.status).toBe(201);
    const topUp = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/credits/top-up`, { key: OPERATOR_TOKEN, body: { amount: 250, operationId: 'dashboard-test' } });
    expect(topUp.status).toBe(200);
    const { w } = await open();
    await signIn(w.page, `admin@${suite.org.id}.test`);
    await w.page.goto(`${suite.svc.url}/settings/channels`);
    await w.page.getByRole('button', { name: 'Templates' }).click();
    await w.page.getByRole('button', { name: 'Sync from the network' }).click();
    await w.page.getByRole('status').filter({ hasText: /^Synced \d+ templates/ }).waitFor();
    const rows = w.page.getByTestId('templates').locator('tbody tr');
    expect(await rows.count()).toBeGreaterThan(0);
    await w.page.getByTestId('templates').getByText('approved').first().waitFor();
    await screenshot(w.page, 'settings-channels');
    await w.page.getByRole('link', { name: 'Credits' }).click();
    await w.page.getByTestId('balance').filter({ hasText: '250' }).waitFor();
    await w.page.getByRole('cell', { name: 'top-up' }).first().waitFor();
    expect(w.problems).toEqual([]);
  });

  it('an admin registers a webhook (the challenge), sees a failed delivery attempt with its status code, resends it, and rotates the secret', async () => {
    let answer = 500;
    const receiver = createServer((req, res) => {
      const challenge = new URL(req.url ?? '/', 'http://x').searchParams.get('challenge');
      if (req.method === 'GET' && challenge) return void res.writeHead(200, { 'content-type': 'text/plain' }).end(challenge);
      req.resume();
      req.on('end', () => res.writeHead(answer).end());
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const { w } = await open();
      await signIn(w.page, `admin@${suite.org.id}.test`);
      await w.page.goto(`${suite.svc.url}/settings/webhooks`);
      const form = w.page.getByRole('form', { name: 'Register a webhook' });
      await form.getByLabel(/^URL/).fill(hook);
      await form.getByLabel(/^Events/).fill('ticket.created');
      await form.getByRole('button', { name: 'Register' }).click();
      const first = (await w.page.getByTestId('webhook-secret').locator('code').textContent())!.trim();
      expect(first.length).toBeGreaterThan(16);

      expect((await suite.svc.call('POST', '/v1/tickets', { key: suite.org.adminKey, body: { subject: 'Webhook me', description: 'a ticket.created event' } })).status).toBe(201);
      await w.page.getByRole('button', { name: 'Deliveries' }).click();
      const deliveries = w.page.getByTestId('deliveries');
      const until = async (text: string) => {
        for (let i = 0; i < 50 && (await deliveries.getByText(text).count()) === 0; i++) {
          await w.page.getByRole('button', { name: 'Refresh' }).click();
          await w.page.waitForTimeout(200);
        }
        await deliveries.getByText(text).first().waitFor();
      };
      await until('failed');
      await deliveries.getByText(/^500 · \d+ ms/).first().waitFor();
      answer = 200;
      await deliveries.getByRole('button', { name: 'Resend' }).click();
      await until('succeeded');
      await deliveries.getByText(/^200 · \d+ ms/).first().waitFor();
      await screenshot(w.page, 'settings-webhooks');

      await w.page.getByRole('button', { name: 'I have saved it' }).click();
      await w.page.getByRole('button', { name: 'Rotate secret' }).click();
      const second = (await w.page.getByTestId('webhook-secret').locator('code').textContent())!.trim();
      expect(second).not.toBe(first);
      expect(w.problems).toEqual([]);
    } finally {
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
    }
  });

  it('a ticket made with an API key is listed beside one an agent makes in the page', async () => {
    const made = await suite.svc.call('POST', '/v1/tickets', { key: suite.org.adminKey, body: { subject: 'Printer on fire (API)', description: 'reported by the bot', priority: 'high' } });
    expect(made.status).toBe(201);
    const { w } = await open();
    await signIn(w.page, `agent@${suite.org.id}.test`);
    await w.page.getByRole('link', { name: 'Tickets' }).click();
    await w.page.getByRole('button', { name: 'New ticket' }).click();
    await w.page.getByLabel('Subject').fill('Customer wants a callback (UI)');
    await w.page.getByLabel('Description').fill('made in the dashboard');
    await w.page.getByRole('form', { name: 'New ticket' }).getByLabel('Priority').selectOption('urgent');
    await w.page.getByRole('button', { name: 'Create ticket' }).click();
    const table = w.page.getByTestId('tickets');
    await table.getByRole('link', { name: 'Customer wants a callback (UI)' }).waitFor();
    await table.getByRole('link', { name: 'Printer on fire (API)' }).waitFor();
    // Each shows who or what made it.
    const origin = (title: string) => table.getByRole('row').filter({ hasText: title }).locator('[data-origin]').getAttribute('data-origin');
    expect(await origin('Printer on fire (API)')).toBe('api_key');
    expect(await origin('Customer wants a callback (UI)')).toBe('session');
    await screenshot(w.page, 'tickets');

    // Edit the UI-made ticket: status and description.
    await table.getByRole('link', { name: 'Customer wants a callback (UI)' }).click();
    await w.page.getByLabel(/^Status/).selectOption('in_progress');
    await w.page.getByLabel('Description').fill('called back, waiting for parts');
    await w.page.getByRole('button', { name: 'Save changes' }).click();
    await w.page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const list = await suite.svc.call('GET', '/v1/tickets', { key: suite.org.adminKey });
    const edited = list.body.tickets.find((t: { title: string }) => t.title === 'Customer wants a callback (UI)');
    expect(edited).toMatchObject({ status: 'in_progress', priority: 'urgent', description: 'called back, waiting for parts' });

    // The list's priority and assignee filters go to the API and into the address.
    await w.page.getByRole('link', { name: 'Tickets', exact: true }).click();
    const filters = w.page.getByRole('form', { name: 'Filters' });
    await filters.getByLabel('Priority').selectOption('high');
    await w.page.waitForURL(/\/tickets\?priority=high$/);
    await table.getByRole('link', { name: 'Printer on fire (API)' }).waitFor();
    await table.getByRole('link', { name: 'Customer wants a callback (UI)' }).waitFor({ state: 'detached' });
    await filters.getByLabel('Assignee').selectOption({ label: 'me' });
    await w.page.getByText('No ticket matches.').waitFor();
    await filters.getByLabel('Assignee').selectOption({ label: 'unassigned' });
    await table.getByRole('link', { name: 'Printer on fire (API)' }).waitFor();
    expect(w.page.url()).toMatch(/priority=high&assignee=none$/);
    expect(w.problems).toEqual([]);
  });
});
