import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { OPERATOR_TOKEN, startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { ensureWebBuilt, launchChromium, screenshot, watchedPage, type Watched } from './browser.js';

const PASSWORD = 'correct horse battery';

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe('presence in the dashboard (Chromium)', { timeout: 120_000 }, () => {
  let svc: TestService;
  let browser: Browser;
  let org: TestOrg;
  let channel: { id: string; phoneNumberId: string };
  let bobId: string;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    await ensureWebBuilt();
    [svc, browser] = await Promise.all([startTestService(), launchChromium()]);
    org = await svc.createOrg('Presence Org');
    const ch = await svc.call('POST', `/admin/v1/organizations/${org.id}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'whatsapp_cloud', name: 'Sandbox WhatsApp', network: 'sandbox' } });
    channel = ch.body;
    const bob = await svc.call('POST', `/admin/v1/organizations/${org.id}/users`, { key: OPERATOR_TOKEN, body: { email: `bob@${org.id}.test`, name: 'Bob', role: 'agent', password: PASSWORD } });
    bobId = bob.body.id;
  }, 120_000);
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await svc?.close();
  });

  async function signIn(email: string): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const w = await watchedPage(context);
    w.allow('/v1/auth/session', 401);
    await w.page.goto(`${svc.url}/login`);
    await w.page.getByLabel('Email').fill(email);
    await w.page.getByLabel('Password').fill(PASSWORD);
    await w.page.getByRole('button', { name: 'Sign in' }).click();
    await w.page.waitForURL(/\/inbox$/);
    await w.page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    return w;
  }

  it("an agent goes away in the app shell; a teammate sees it in the transfer picker, and offline once the agent's dashboard closes", async () => {
    const phone = '4915112345001';
    const id = `${phone}:${channel.phoneNumberId}`;
    expect((await svc.call('POST', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: org.adminKey, body: { text: 'Hello?' } })).status).toBe(201);
    expect((await svc.call('POST', '/v1/handover', { key: org.adminKey, body: { audienceExternalId: id } })).status).toBe(200);
    expect((await svc.call('POST', `/v1/conversations/${encodeURIComponent(id)}/take`, { key: org.agentKey })).status).toBe(200);

    const ann = await signIn(`agent@${org.id}.test`);
    const bob = await signIn(`bob@${org.id}.test`);
    await ann.page.goto(`${svc.url}/inbox/${encodeURIComponent(id)}`);
    const bobOption = ann.page.getByRole('combobox', { name: 'Transfer to' }).locator(`option[value="${bobId}"]`);
    await expect.poll(() => bobOption.getAttribute('data-presence')).toBe('online');

    await bob.page.getByRole('combobox', { name: 'Your status' }).selectOption('away');
    await expect.poll(() => bobOption.getAttribute('data-presence')).toBe('away');
    expect(await bobOption.textContent()).toBe('Bob · away');
    await screenshot(ann.page, 'presence-transfer');
    expect((await svc.call('GET', '/v1/presence', { key: org.adminKey })).body.agents.find((a: { userId: string }) => a.userId === bobId).status).toBe('away');

    // Bob's choice stays for his next tab; closing his dashboard makes him offline.
    await bob.page.reload();
    await bob.page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    await expect.poll(() => bob.page.getByRole('combobox', { name: 'Your status' }).inputValue()).toBe('away');
    await bob.page.context().close();
    await expect.poll(() => bobOption.getAttribute('data-presence')).toBe('offline');
    expect(ann.problems).toEqual([]);
  });
});
