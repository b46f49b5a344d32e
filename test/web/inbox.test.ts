import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { screenshot, watchedPage } from './browser.js';
import { PASSWORD, useDashboardSuite } from './suite.js';

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe('the live inbox in Chromium', { timeout: 120_000 }, () => {
  const suite = useDashboardSuite('Inbox Org', { SANDBOX_STATUS_DELAY_MS: '50' });
  let channel: { id: string; phoneNumberId: string };
  beforeAll(async () => {
    const ch = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'whatsapp_cloud', name: 'Sandbox WhatsApp', network: 'sandbox' } });
    expect(ch.status).toBe(201);
    channel = ch.body;
    const second = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/users`, { key: OPERATOR_TOKEN, body: { email: `bob@${suite.org.id}.test`, name: 'Bob', role: 'agent', password: PASSWORD } });
    expect(second.status).toBe(201);
  });
  const agent = (email: string, viewport?: { width: number; height: number }) => suite.signedIn(email, viewport);

  /** A conversation's row in the list on screen (the Waiting view unless another was opened). */
  const row = (page: Page, id: string) => page.getByTestId('conversations').locator(`a[data-conversation="${id}"]`);
  const queueRow = row;

  it('the sandbox loop: the customer writes, the bot hands over, the agent sees it live, takes it, replies, the customer sees the reply, it is read; a second agent sees it taken; the customer sends a photo; the agent transfers it to a teammate, who hands it back', async () => {
    const phone = '4915112340001';
    const id = `${phone}:${channel.phoneNumberId}`;
    const ann = await agent(`agent@${suite.org.id}.test`);
    const bob = await agent(`bob@${suite.org.id}.test`);

    // The customer writes, in the simulator (Ann's second tab), and the bot asks for a human.
    const sim = await watchedPage(ann.page.context());
    await sim.page.goto(`${suite.svc.url}/simulator`);
    await sim.page.getByLabel('Customer phone (digits)').fill(phone);
    await sim.page.getByLabel('Profile name').fill('Ann Customer');
    await sim.page.getByRole('button', { name: 'Open the phone' }).click();
    await sim.page.getByLabel('Write as the customer').fill('My order never arrived');
    await sim.page.getByRole('button', { name: 'Send', exact: true }).click();
    await sim.page.getByTestId('customer-panel').getByText('My order never arrived').waitFor();
    await screenshot(sim.page, 'simulator');
    const handover = await suite.svc.call('POST', '/v1/handover', { key: suite.org.adminKey, body: { audienceExternalId: id } });
    expect(handover.status).toBe(200);

    // Both agents see it queued without a reload, with a notice.
    await queueRow(ann.page, id).waitFor();
    await queueRow(bob.page, id).waitFor();
    await ann.page.getByRole('status').filter({ hasText: 'is waiting for an agent' }).first().waitFor();
    await screenshot(ann.page, 'inbox');
    await bob.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await bob.page.getByTestId('conversation-state').filter({ hasText: 'waiting for an agent' }).waitFor();

    // The customer's message is unread for Ann, also after a reload (the count is the server's, per agent).
    await queueRow(ann.page, id).getByLabel('1 unread').waitFor();
    await ann.page.reload();
    await ann.page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    await queueRow(ann.page, id).getByLabel('1 unread').waitFor();

    // Ann takes it; Bob sees it taken and out of the queue.
    await queueRow(ann.page, id).click();
    await ann.page.getByRole('button', { name: 'Take' }).click();
    await ann.page.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent (you)' }).waitFor();
    await bob.page.getByTestId('conversation-state').filter({ hasText: 'Taken by' }).waitFor();
    await queueRow(bob.page, id).waitFor({ state: 'detached' });
    expect(await bob.page.getByRole('button', { name: 'Take' }).count()).toBe(0);
    // Her own view lists it, read; the conversation stays open beside it.
    await ann.page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: /^Mine/ }).click();
    await ann.page.waitForURL(/\?view=mine$/);
    await row(ann.page, id).waitFor();
    expect(await row(ann.page, id).getByLabel(/unread/).count()).toBe(0);

    // Ann replies inside the window; the customer's phone shows it; it reaches "read" in Ann's view.
    await ann.page.getByTestId('window').filter({ hasText: 'Window open' }).waitFor();
    await ann.page.getByLabel('Message', { exact: true }).fill('Sorry! A new one ships today.');
    await ann.page.keyboard.press('Enter');
    const panel = ann.page.getByTestId('customer-panel');
    await panel.getByText('Sorry! A new one ships today.').waitFor();
    const sent = ann.page.getByTestId('messages').locator('li.msg[data-sender="agent"]').filter({ hasText: 'Sorry! A new one ships today.' });
    await sent.locator('[data-status="read"]').waitFor();
    await screenshot(ann.page, 'conversation');

    // The customer answers from the panel beside the conversation; it appears without a reload.
    await panel.getByLabel('Write as the customer').fill('Great, thanks');
    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    await ann.page.getByTestId('messages').locator('li.msg[data-sender="contact"]').filter({ hasText: 'Great, thanks' }).waitFor();

    // The customer sends a photo; Ann sees it in the conversation, fetched through the service.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    await panel.getByLabel('Write as the customer').fill('this is what came');
    await panel.getByLabel('Send a file as the customer').setInputFiles({ name: 'parcel.png', mimeType: 'image/png', buffer: png });
    const photo = ann.page.getByTestId('messages').locator('li.msg[data-sender="contact"]').filter({ hasText: 'this is what came' }).locator('img');
    await photo.waitFor();
    // Loaded, not broken: the service fetched the file from the network with the channel's token.
    await expect.poll(() => photo.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(1);

    // Ann, an agent, transfers it to Bob from the team directory; Bob holds it now and hands it back to the bot.
    await ann.page.getByRole('combobox', { name: 'Transfer to' }).selectOption({ label: 'Bob · online' });
    await ann.page.getByRole('button', { name: 'Transfer', exact: true }).click();
    await bob.page.getByTestId('conversation-state').filter({ hasText: 'Taken by Bob (you)' }).waitFor();
    await ann.page.getByTestId('conversation-state').filter({ hasText: 'Taken by Bob' }).waitFor();
    await bob.page.getByRole('button', { name: 'Hand back to bot' }).click();
    await bob.page.getByTestId('conversation-state').filter({ hasText: 'with the bot' }).waitFor();
    await row(ann.page, id).waitFor({ state: 'detached' });
    await ann.page.getByTestId('conversation-state').filter({ hasText: 'with the bot' }).waitFor();

    for (const w of [ann, bob, sim]) expect(w.problems).toEqual([]);
  });

  it('outside the 24-hour window the composer offers only an approved template', async () => {
    // A contact who never wrote: the window is closed from the start.
    const phone = '4915112340002';
    const id = `${phone}:${channel.phoneNumberId}`;
    await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/contacts`, { key: OPERATOR_TOKEN, body: { audienceExternalId: id } });
    await suite.svc.call('POST', '/v1/handover', { key: suite.org.adminKey, body: { audienceExternalId: id } });
    const admin = await agent(`admin@${suite.org.id}.test`, { width: 360, height: 740 });
    await admin.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await admin.page.getByRole('button', { name: 'Take' }).click();
    await admin.page.getByTestId('conversation-state').filter({ hasText: 'Taken by Admin (you)' }).waitFor();
    await admin.page.getByTestId('window').filter({ hasText: 'Window closed' }).waitFor();
    const tabs = admin.page.getByTestId('composer').getByRole('tab');
    await tabs.first().waitFor();
    // Of what reaches the customer, only a template; a private note for the team stays possible.
    expect(await tabs.allTextContents()).toEqual(['Template', 'Note']);
    await admin.page.getByLabel('Template').selectOption({ index: 1 });
    await screenshot(admin.page, 'conversation-360');
    expect(admin.problems).toEqual([]);
  });

  it("another organization's conversation opened by URL shows 'no such conversation'", async () => {
    const other = await suite.svc.createOrg('Other Org');
    const ann = await agent(`agent@${other.id}.test`);
    ann.allow('/v1/conversations/', 404);
    await ann.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(`4915112340001:${channel.phoneNumberId}`)}`);
    await ann.page.getByRole('alert').filter({ hasText: 'No such conversation' }).waitFor();
    expect(ann.problems).toEqual([]);
  });
});
