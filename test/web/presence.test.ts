import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { screenshot, type Watched } from './browser.js';
import { PASSWORD, useDashboardSuite } from './suite.js';

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe('presence in the dashboard (Chromium)', { timeout: 120_000 }, () => {
  const suite = useDashboardSuite('Presence Org');
  let channel: { id: string; phoneNumberId: string };
  let bobId: string;
  beforeAll(async () => {
    const ch = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'whatsapp_cloud', name: 'Sandbox WhatsApp', network: 'sandbox' } });
    channel = ch.body;
    const bob = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/users`, { key: OPERATOR_TOKEN, body: { email: `bob@${suite.org.id}.test`, name: 'Bob', role: 'agent', password: PASSWORD } });
    bobId = bob.body.id;
  });

  const signIn = (email: string): Promise<Watched> => suite.signedIn(email, { width: 1280, height: 900 });

  it("an agent goes away in the app shell; a teammate sees it in the transfer picker, and offline once the agent's dashboard closes", async () => {
    const phone = '4915112345001';
    const id = `${phone}:${channel.phoneNumberId}`;
    expect((await suite.svc.call('POST', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: suite.org.adminKey, body: { text: 'Hello?' } })).status).toBe(201);
    expect((await suite.svc.call('POST', '/v1/handover', { key: suite.org.adminKey, body: { audienceExternalId: id } })).status).toBe(200);
    expect((await suite.svc.call('POST', `/v1/conversations/${encodeURIComponent(id)}/take`, { key: suite.org.agentKey })).status).toBe(200);

    const ann = await signIn(`agent@${suite.org.id}.test`);
    const bob = await signIn(`bob@${suite.org.id}.test`);
    await ann.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    const bobOption = ann.page.getByRole('combobox', { name: 'Transfer to' }).locator(`option[value="${bobId}"]`);
    await expect.poll(() => bobOption.getAttribute('data-presence')).toBe('online');

    await bob.page.getByRole('combobox', { name: 'Your status' }).selectOption('away');
    await expect.poll(() => bobOption.getAttribute('data-presence')).toBe('away');
    expect(await bobOption.textContent()).toBe('Bob · away');
    await screenshot(ann.page, 'presence-transfer');
    expect((await suite.svc.call('GET', '/v1/presence', { key: suite.org.adminKey })).body.agents.find((a: { userId: string }) => a.userId === bobId).status).toBe('away');

    // Bob's choice stays for his next tab; closing his dashboard makes him offline.
    await bob.page.reload();
    await bob.page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    await expect.poll(() => bob.page.getByRole('combobox', { name: 'Your status' }).inputValue()).toBe('away');
    await bob.page.context().close();
    await expect.poll(() => bobOption.getAttribute('data-presence')).toBe('offline');
    expect(ann.problems).toEqual([]);
  });
});
