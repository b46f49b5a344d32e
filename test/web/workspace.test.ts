import { describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { OPERATOR_TOKEN, type TestOrg } from '../harness/service.js';
import { screenshot } from './browser.js';
import { useDashboardSuite } from './suite.js';

interface Channel {
  id: string;
  phoneNumberId: string;
}

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe("the agent's workspace in Chromium: search, the contact page, views and notifications", { timeout: 180_000 }, () => {
  const suite = useDashboardSuite('Workspace Org', { SANDBOX_STATUS_DELAY_MS: '0' });
  let phone = 4915700000000 + Math.floor(Math.random() * 1e5) * 10;

  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const r = await suite.svc.call(method, path, { key, body });
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    return r.body;
  };
  const sandboxChannel = async (org: TestOrg, name: string): Promise<Channel> => call('POST', `/admin/v1/organizations/${org.id}/channels`, OPERATOR_TOKEN, { kind: 'whatsapp_cloud', name, network: 'sandbox' });
  /** The sandbox customer `p` writes on `channel`; the conversation's id. */
  const writes = async (org: TestOrg, channel: Channel, p: string, text: string, profileName?: string) => {
    await call('POST', `/v1/sandbox/channels/${channel.id}/customers/${p}/messages`, org.adminKey, { text, ...(profileName ? { profileName } : {}) });
    return `${p}:${channel.phoneNumberId}`;
  };
  const queued = async (org: TestOrg, channel: Channel, name: string) => {
    const id = await writes(org, channel, String(phone++), 'I need a human', name);
    await call('POST', '/v1/handover', org.adminKey, { audienceExternalId: id });
    return id;
  };
  const row = (page: Page, id: string) => page.getByTestId('conversations').locator(`a[data-conversation="${id}"]`);

  it("finds a resolved conversation by the customer's words, opens it at that message (an earlier session, older than its last 50), and the contact's page lists both sessions and its tickets", async () => {
    const { org } = suite;
    const channel = await sandboxChannel(org, 'Workspace line');
    const p = String(phone++);
    const id = await writes(org, channel, p, 'My parcel went to Zanzibar instead of Zürich', 'Zoe Traveller');
    // 55 more messages after it: the hit is not among the session's last 50.
    for (let i = 0; i < 55; i++) await writes(org, channel, p, `more detail ${i}`);
    await call('POST', '/v1/handover', org.adminKey, { audienceExternalId: id });
    await call('POST', `/v1/conversations/${encodeURIComponent(id)}/take`, org.agentKey);
    await call('POST', `/v1/conversations/${encodeURIComponent(id)}/resolve`, org.agentKey);
    // The customer writes again: a new session with the bot; the words are in the earlier, resolved one.
    await writes(org, channel, p, 'Hello again');
    const contact = (await call('GET', `/v1/search?q=${encodeURIComponent('Zoe')}`, org.adminKey)).contacts[0];
    for (const subject of ['Reship the parcel', 'Refund the postage']) await call('POST', '/v1/tickets', org.adminKey, { subject, description: 'from the parcel mix-up', audienceExternalId: id });

    const w = await suite.signedIn(`agent@${org.id}.test`);
    const search = w.page.getByRole('search').getByLabel('Search contacts and messages');
    await search.fill('zanzibar zurich');
    const results = w.page.getByTestId('search-results');
    const hit = results.getByRole('region', { name: 'Messages' }).getByRole('link').filter({ hasText: /Zanzibar/ });
    await hit.waitFor();
    await screenshot(w.page, 'search');
    await hit.click();
    await w.page.waitForURL((u) => u.pathname === `/inbox/${encodeURIComponent(id)}` && u.searchParams.has('message'));
    const shown = w.page.getByTestId('messages').locator('li.msg[aria-current="true"]');
    await shown.filter({ hasText: 'My parcel went to Zanzibar instead of Zürich' }).waitFor();
    await w.page.getByTestId('earlier-session').waitFor();
    // Scrolled to it: the highlighted message is inside the list's visible part.
    await expect
      .poll(() =>
        shown.evaluate((el) => {
          const list = (el as unknown as { closest(s: string): { getBoundingClientRect(): { top: number; bottom: number } } }).closest('ol')!.getBoundingClientRect();
          const r = (el as unknown as { getBoundingClientRect(): { top: number; bottom: number } }).getBoundingClientRect();
          return r.top >= list.top - 1 && r.bottom <= list.bottom + 1;
        }),
      )
      .toBe(true);
    expect(await w.page.getByTestId('messages').locator('li.msg[data-sender="contact"]').count()).toBe(56);
    await screenshot(w.page, 'search-hit');

    // The contact: found by name, both sessions with their status, both tickets.
    await search.fill('Zoe');
    await results.getByRole('region', { name: 'Contacts' }).getByRole('link', { name: /Zoe Traveller/ }).click();
    await w.page.waitForURL(`**/contacts/${contact.id}`);
    await w.page.getByRole('heading', { name: 'Zoe Traveller' }).waitFor();
    expect(await w.page.getByTestId('contact-phone').textContent()).toBe(`+${p}`);
    const sessions = w.page.getByTestId('contact-conversations').locator('li');
    await sessions.nth(1).waitFor();
    expect(await sessions.count()).toBe(2);
    expect(await sessions.nth(0).locator('.pill').textContent()).toBe('with the bot');
    expect(await sessions.nth(1).locator('.pill').textContent()).toBe('resolved');
    const tickets = w.page.getByTestId('contact-tickets');
    await tickets.getByRole('link', { name: 'Reship the parcel' }).waitFor();
    await tickets.getByRole('link', { name: 'Refund the postage' }).waitFor();

    // Renamed, an attribute added and changed: stored through the API.
    await w.page.getByRole('button', { name: 'Rename' }).click();
    await w.page.getByRole('form', { name: 'Rename' }).getByLabel('Name').fill('Zoe T. Traveller');
    await w.page.getByRole('form', { name: 'Rename' }).getByRole('button', { name: 'Save' }).click();
    await w.page.getByRole('heading', { name: 'Zoe T. Traveller' }).waitFor();
    const add = w.page.getByRole('form', { name: 'New attribute' });
    await add.getByLabel('Key').fill('plan');
    await add.getByLabel('Value').fill('gold');
    await add.getByRole('button', { name: 'Add attribute' }).click();
    await w.page.getByLabel('Value of plan').fill('platinum');
    await w.page.getByTestId('attributes').getByRole('button', { name: 'Save' }).click();
    await w.page.getByTestId('attributes').getByRole('button', { name: 'Save' }).waitFor({ state: 'detached' });
    expect((await call('GET', `/v1/contacts/${contact.id}`, org.adminKey)).contact).toMatchObject({ name: 'Zoe T. Traveller', attributes: { plan: 'platinum' } });

    // A ticket from the contact page starts with a link back and the last messages.
    await w.page.getByRole('button', { name: 'Create ticket' }).click();
    const form = w.page.getByRole('form', { name: 'New ticket' });
    const description = await form.getByLabel('Description').inputValue();
    expect(description).toContain(`/contacts/${contact.id}`);
    expect(description).toContain('> Customer: Hello again');
    await form.getByRole('button', { name: 'Create ticket' }).click();
    await tickets.getByRole('link', { name: 'Follow-up for Zoe T. Traveller' }).waitFor();
    await screenshot(w.page, 'contact');

    // The ticket list names the contact, with a link to this page.
    await w.page.getByRole('link', { name: 'Tickets', exact: true }).click();
    const named = w.page.getByTestId('tickets').getByRole('row').filter({ hasText: 'Reship the parcel' }).getByTestId('ticket-contact').getByRole('link', { name: 'Zoe T. Traveller' });
    await named.click();
    await w.page.waitForURL(`**/contacts/${contact.id}`);
    expect(w.problems).toEqual([]);
  });

  it("a teammate's rename shows in the lists at once, and a contact's page follows its attributes and labels as they change elsewhere", async () => {
    const org = await suite.svc.createOrg('Contact Live Org');
    const channel = await sandboxChannel(org, 'Live line');
    const id = await queued(org, channel, 'Carl Caller');
    const contact = (await call('GET', `/v1/search?q=${encodeURIComponent('Carl')}`, org.adminKey)).contacts[0];
    const w = await suite.signedIn(`agent@${org.id}.test`);
    await row(w.page, id).filter({ hasText: 'Carl Caller' }).waitFor();

    // The admin renames the contact elsewhere: the agent's waiting list shows the new name.
    await call('PATCH', `/v1/contacts/${contact.id}`, org.adminKey, { name: 'Carla Caller' });
    await row(w.page, id).filter({ hasText: 'Carla Caller' }).waitFor();

    // On the contact's page, an attribute and a label put on elsewhere appear.
    await w.page.goto(`${suite.svc.url}/contacts/${contact.id}`);
    await w.page.getByRole('heading', { name: 'Carla Caller' }).waitFor();
    await call('PATCH', `/v1/contacts/${contact.id}`, org.adminKey, { attributes: { tier: 'gold' } });
    expect(await w.page.getByLabel('Value of tier').inputValue({ timeout: 60_000 })).toBe('gold');
    const label = await call('POST', '/v1/labels', org.adminKey, { name: 'callback', color: '#2255aa' });
    await call('POST', `/v1/contacts/${contact.id}/labels`, org.adminKey, { labels: [label.label.id] });
    await w.page.getByRole('list', { name: 'Labels' }).locator('li[data-label="callback"]').waitFor();
    // And the agent takes it off here.
    await w.page.getByRole('button', { name: 'Remove label callback' }).click();
    await w.page.getByRole('list', { name: 'Labels' }).locator('li[data-label="callback"]').waitFor({ state: 'detached' });
    expect((await call('GET', `/v1/contacts/${contact.id}`, org.adminKey)).contact.labels).toEqual([]);
    expect(w.problems).toEqual([]);
  });

  it('filters a view by channel and assignee, with the counts of the filter, and keeps it live', async () => {
    const org = await suite.svc.createOrg('Views Org');
    const [north, south] = [await sandboxChannel(org, 'North line'), await sandboxChannel(org, 'South line')];
    const a = await queued(org, north, 'Nora North');
    const b = await queued(org, south, 'Sam South');
    const w = await suite.signedIn(`agent@${org.id}.test`);
    await row(w.page, a).waitFor();
    await row(w.page, b).waitFor();
    await w.page.getByTestId('count-waiting').filter({ hasText: /^2$/ }).waitFor();

    const filters = w.page.getByRole('form', { name: 'Filters' });
    await filters.getByLabel('Channel').selectOption({ label: 'South line' });
    await w.page.waitForURL((u) => u.searchParams.get('channel') === south.id);
    await row(w.page, a).waitFor({ state: 'detached' });
    await row(w.page, b).waitFor();
    await w.page.getByTestId('count-waiting').filter({ hasText: /^1$/ }).waitFor();
    // Live within the filter: a new one on the south line appears, one on the north line does not.
    const d = await queued(org, north, 'Ned North');
    const c = await queued(org, south, 'Sol South');
    await row(w.page, c).waitFor();
    await w.page.getByTestId('count-waiting').filter({ hasText: /^2$/ }).waitFor();
    expect(await row(w.page, d).count()).toBe(0);
    // Longest waiting first (the view's own order): b came before c.
    expect(await w.page.getByTestId('conversations').locator('a[data-conversation]').evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { conversation: string } }).dataset.conversation))).toEqual([b, c]);

    // A label: only the conversations carrying it, with the label's counts.
    const vip = (await call('POST', '/v1/labels', org.adminKey, { name: 'vip', color: '#e11d48' })).label;
    await call('POST', `/v1/conversations/${encodeURIComponent(b)}/labels`, org.adminKey, { labels: ['vip'] });
    await w.page.reload();
    await w.page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    await filters.getByLabel('Label').selectOption({ label: 'vip' });
    await w.page.waitForURL((u) => u.searchParams.get('label') === vip.id && u.searchParams.get('channel') === south.id);
    await row(w.page, c).waitFor({ state: 'detached' });
    await row(w.page, b).getByTitle('label vip').waitFor();
    await w.page.getByTestId('count-waiting').filter({ hasText: /^1$/ }).waitFor();
    await filters.getByLabel('Label').selectOption({ label: 'any label' });
    await row(w.page, c).waitFor();

    // Taken by a teammate: it moves to Others, and the assignee filter finds it.
    await call('POST', `/v1/conversations/${encodeURIComponent(c)}/take`, org.adminKey);
    await row(w.page, c).waitFor({ state: 'detached' });
    await w.page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: /^Others/ }).click();
    await row(w.page, c).waitFor();
    await filters.getByLabel('Assignee').selectOption({ label: 'Admin' });
    await w.page.waitForURL((u) => u.searchParams.get('assignee') === org.adminId && u.searchParams.get('view') === 'others');
    await row(w.page, c).waitFor();
    await w.page.getByTestId('count-others').filter({ hasText: /^1$/ }).waitFor();
    await w.page.getByTestId('count-waiting').filter({ hasText: /^0$/ }).waitFor();
    await screenshot(w.page, 'inbox-views');
    expect(w.problems).toEqual([]);
  });

  it('a new waiting conversation and a new message in a conversation the agent holds raise a browser notification and the tab-title count', async () => {
    const org = await suite.svc.createOrg('Notify Org');
    const channel = await sandboxChannel(org, 'Notify line');
    // The agent allowed notifications and is in another window; Notification is recorded as it is constructed.
    const init = async (context: BrowserContext) => {
      await context.grantPermissions(['notifications'], { origin: suite.svc.url });
      await context.addInitScript(() => {
        const g = globalThis as unknown as { Notification: new (title: string, o?: { body?: string }) => unknown; __notes: { title: string; body: string }[]; Document: { prototype: { hasFocus(): boolean } } };
        const Real = g.Notification;
        g.__notes = [];
        g.Notification = class extends (Real as unknown as new (title: string, o?: { body?: string }) => object) {
          constructor(title: string, o?: { body?: string }) {
            g.__notes.push({ title, body: o?.body ?? '' });
            super(title, o);
          }
        } as unknown as typeof Real;
        g.Document.prototype.hasFocus = () => false;
      });
    };
    const w = await suite.signedIn(`agent@${org.id}.test`, undefined, init);
    expect(await w.page.getByRole('button', { name: 'Enable notifications' }).count()).toBe(0);
    const notes = () => w.page.evaluate(() => (globalThis as unknown as { __notes: { title: string; body: string }[] }).__notes);
    expect(await w.page.title()).toBe('Switchboard');

    const id = await queued(org, channel, 'Wanda Waiting');
    await expect.poll(notes, { timeout: 60_000 }).toContainEqual({ title: 'Conversation waiting', body: 'Wanda Waiting is waiting for an agent' });
    await w.page.waitForFunction(() => (globalThis as unknown as { document: { title: string } }).document.title === '(1) Switchboard');

    // She holds it now (taken elsewhere): nobody waits, her one unread message counts. The customer writes again:
    // a notification, and the count is two.
    await call('POST', `/v1/conversations/${encodeURIComponent(id)}/take`, org.agentKey);
    await w.page.getByTestId('count-mine').filter({ hasText: /^1$/ }).waitFor();
    await w.page.getByTestId('count-waiting').filter({ hasText: /^0$/ }).waitFor();
    expect(await w.page.title()).toBe('(1) Switchboard');
    await writes(org, channel, id.split(':')[0]!, 'Are you there?');
    await expect.poll(notes, { timeout: 60_000 }).toContainEqual({ title: 'New message from Wanda Waiting', body: 'in a conversation you hold' });
    await w.page.waitForFunction(() => (globalThis as unknown as { document: { title: string } }).document.title === '(2) Switchboard');
    expect(w.problems).toEqual([]);
  });
});
