import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { screenshot, type Watched } from './browser.js';
import { useDashboardSuite } from './suite.js';

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe('canned replies in the dashboard (Chromium)', { timeout: 120_000 }, () => {
  const suite = useDashboardSuite('Canned Org');
  let channel: { id: string; phoneNumberId: string };
  beforeAll(async () => {
    const ch = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'whatsapp_cloud', name: 'Sandbox WhatsApp', network: 'sandbox' } });
    expect(ch.status).toBe(201);
    channel = ch.body;
  });

  async function signIn(email: string): Promise<Watched> {
    const { w } = await suite.open({ width: 1280, height: 900 });
    await suite.signIn(w.page, email);
    return w;
  }

  it("an admin adds a canned reply in the settings; an agent inserts it with / and the contact's name filled in, and sends it", async () => {
    // The admin adds it under Settings → Canned replies.
    const admin = await signIn(`admin@${suite.org.id}.test`);
    await admin.page.goto(`${suite.svc.url}/settings/canned-replies`);
    const form = admin.page.getByRole('form', { name: 'New canned reply' });
    await form.getByLabel('Short code').fill('thanks');
    await form.getByLabel('Text').fill('Thank you {{contact.name}}! {{agent.name}} here: your replacement ships today.');
    await form.getByRole('button', { name: 'Add reply' }).click();
    await admin.page.getByTestId('canned-replies').locator('tr[data-reply="thanks"]').waitFor();
    // A typo in a placeholder is refused, with the reason.
    await form.getByLabel('Short code').fill('oops');
    await form.getByLabel('Text').fill('Hi {{contact.nmae}}');
    await form.getByRole('button', { name: 'Add reply' }).click();
    await admin.page.getByRole('alert').filter({ hasText: 'contact.nmae' }).waitFor();
    await screenshot(admin.page, 'settings-canned-replies');
    expect(admin.problems.filter((p) => !p.includes('status of 400'))).toEqual([]);

    // A customer writes, is handed over, and the agent takes the conversation.
    const phone = '4915112349876';
    const id = `${phone}:${channel.phoneNumberId}`;
    const wrote = await suite.svc.call('POST', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: suite.org.adminKey, body: { text: 'Where is my parcel?', profileName: 'Rosa Díaz' } });
    expect(wrote.status).toBe(201);
    expect((await suite.svc.call('POST', '/v1/handover', { key: suite.org.adminKey, body: { audienceExternalId: id } })).status).toBe(200);
    expect((await suite.svc.call('POST', `/v1/conversations/${encodeURIComponent(id)}/take`, { key: suite.org.agentKey })).status).toBe(200);

    const agent = await signIn(`agent@${suite.org.id}.test`);
    await agent.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await agent.page.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent (you)' }).waitFor();
    const message = agent.page.getByLabel('Message', { exact: true });
    await message.click();
    await message.pressSequentially('/tha');
    const options = agent.page.getByRole('listbox', { name: 'Canned replies' });
    await options.getByRole('option').filter({ hasText: '/thanks' }).waitFor();
    // The list shows the reply as it will read.
    expect(await options.getByRole('option').first().textContent()).toContain('Thank you Rosa Díaz!');
    await screenshot(agent.page, 'composer-canned-replies');
    await agent.page.keyboard.press('Enter');
    const filled = 'Thank you Rosa Díaz! Agent here: your replacement ships today.';
    await expect.poll(() => message.inputValue()).toBe(filled);
    await options.waitFor({ state: 'detached' });
    await agent.page.keyboard.press('Enter');
    await agent.page.getByTestId('messages').locator('li.msg[data-sender="agent"]').filter({ hasText: filled }).waitFor();

    // The customer's phone got the text as filled in, never the placeholders.
    await expect
      .poll(async () => (await suite.svc.call('GET', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: suite.org.adminKey })).body.messages.map((m: { text?: string }) => m.text))
      .toContain(filled);
    expect(agent.problems).toEqual([]);
  });
});
