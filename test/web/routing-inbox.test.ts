import { describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { OPERATOR_TOKEN, type TestOrg } from '../harness/service.js';
import { screenshot, watchedPage } from './browser.js';
import { useDashboardSuite } from './suite.js';

interface Channel {
  id: string;
  phoneNumberId: string;
}

/** Browser notifications allowed, the agent in another window, and each Notification recorded as it is made. */
async function recordNotifications(context: BrowserContext, origin: string): Promise<void> {
  await context.grantPermissions(['notifications'], { origin });
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
}

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe('routing in the inbox and the rule editor: response-time flags, team filter, rule actions, and the "Talk to an agent" loop (Chromium)', { timeout: 180_000 }, () => {
  const suite = useDashboardSuite('Routing Inbox Org', { SANDBOX_STATUS_DELAY_MS: '0' });
  const call = (method: string, path: string, key: string, body?: unknown) => suite.svc.call(method, path, { key, body });
  const channelOf = async (org: TestOrg, name: string): Promise<Channel> => (await call('POST', `/admin/v1/organizations/${org.id}/channels`, OPERATOR_TOKEN, { kind: 'whatsapp_cloud', name, network: 'sandbox' })).body as Channel;
  const writes = async (org: TestOrg, channel: Channel, phone: string, text: string) => {
    expect((await call('POST', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, org.adminKey, { text })).status).toBe(201);
  };
  const conversation = async (org: TestOrg, id: string) => (await call('GET', `/v1/conversations/${encodeURIComponent(id)}`, org.adminKey)).body.conversation;
  const row = (page: Page, id: string) => page.getByTestId('conversations').locator(`a[data-conversation="${id}"]`);

  it('each waiting row shows when its answer is due, or a red "overdue" once missed; the overdue filter and the team filter narrow the list and its counts', async () => {
    const org = suite.org;
    const fast = await channelOf(org, 'Fast line');
    const slow = await channelOf(org, 'Slow line');
    // Agents answer first on both; a first answer is due in 10 s on one (the least the API takes) and in an hour on the other.
    for (const [ch, seconds] of [[fast, 10], [slow, 3600]] as const) {
      expect((await call('PATCH', `/v1/channels/${ch.id}`, org.adminKey, { routing: { firstResponder: 'agents', sla: { firstResponseSeconds: seconds } } })).status).toBe(200);
    }
    const team = (await call('POST', '/v1/teams', org.adminKey, { name: 'Billing', memberIds: [org.agentId] })).body.team as { id: string };
    const other = (await call('POST', '/v1/teams', org.adminKey, { name: 'Returns', memberIds: [org.adminId] })).body.team as { id: string };

    const late = `4915112347001:${fast.phoneNumberId}`;
    const onTime = `4915112347002:${slow.phoneNumberId}`;
    const returns = `4915112347003:${slow.phoneNumberId}`;
    await writes(org, fast, '4915112347001', 'Where is my parcel?');
    await writes(org, slow, '4915112347002', 'A question about my invoice');
    await writes(org, slow, '4915112347003', 'I want to send it back');
    await expect.poll(async () => Promise.all([late, onTime, returns].map(async (id) => (await conversation(org, id))?.status)), { timeout: 30_000 }).toEqual(['queued', 'queued', 'queued']);
    expect((await call('POST', `/v1/conversations/${encodeURIComponent(onTime)}/queue`, org.adminKey, { teamId: team.id })).status).toBe(200);
    expect((await call('POST', `/v1/conversations/${encodeURIComponent(returns)}/queue`, org.adminKey, { teamId: other.id })).status).toBe(200);

    const w = await suite.signedIn(`agent@${org.id}.test`, { width: 1280, height: 900 });
    const page = w.page;
    await row(page, onTime).waitFor();
    // The hour-long target runs: the row says when the answer is due.
    const due = row(page, onTime).getByTestId('sla');
    expect(await due.getAttribute('data-sla')).toBe('running');
    // Rounded up: "1 h" within a minute of the message, "59 min" (or less, on a slow machine) after.
    expect(await due.textContent()).toMatch(/^reply due in (\d+ min|1 h)$/);
    // The 10-second one is missed: the row turns red without a reload, as the server flags it.
    const overdue = row(page, late).getByTestId('sla');
    await overdue.filter({ hasText: 'overdue' }).waitFor();
    expect(await overdue.getAttribute('data-sla')).toBe('breached');
    expect(await overdue.getAttribute('class')).toContain('overdue');
    expect(await overdue.getAttribute('title')).toMatch(/^first reply was due at /);
    await screenshot(page, 'inbox-sla');

    // Overdue only: the list and its counts, from the server's sla=breached.
    await page.getByLabel('Response time').selectOption('breached');
    await page.waitForURL(/[?&]sla=breached/);
    await row(page, onTime).waitFor({ state: 'detached' });
    await row(page, late).waitFor();
    await page.getByTestId('count-waiting').filter({ hasText: /^1$/ }).waitFor();
    expect(await page.getByTestId('conversations').locator('a[data-conversation]').count()).toBe(1);
    await page.getByLabel('Response time').selectOption('');
    await row(page, onTime).waitFor();

    // My teams: only Billing's queue (the agent is in Billing, not in Returns); then Returns by name.
    await page.getByLabel('Team').selectOption('mine');
    await page.waitForURL(/[?&]team=mine/);
    await row(page, late).waitFor({ state: 'detached' });
    await row(page, returns).waitFor({ state: 'detached' });
    await row(page, onTime).waitFor();
    await page.getByTestId('count-waiting').filter({ hasText: /^1$/ }).waitFor();
    await page.getByLabel('Team').selectOption({ label: 'Returns' });
    await page.waitForURL(new RegExp(`[?&]team=${other.id}`));
    await row(page, returns).waitFor();
    await row(page, onTime).waitFor({ state: 'detached' });
    expect(await page.getByTestId('conversations').locator('a[data-conversation]').count()).toBe(1);
    // A conversation moved into the filtered team's queue joins the list live.
    expect((await call('POST', `/v1/conversations/${encodeURIComponent(late)}/queue`, org.adminKey, { teamId: other.id })).status).toBe(200);
    await row(page, late).waitFor();
    await page.getByTestId('count-waiting').filter({ hasText: /^2$/ }).waitFor();

    // The API agrees with what the page shows.
    const breached = (await call('GET', '/v1/conversations?view=waiting&sla=breached', org.agentKey)).body.conversations.map((c: { id: string }) => c.id);
    expect(breached).toEqual([late]);
    // The conversation shows the flag too; an agent's answer ends the target, and the flag goes live.
    await page.getByLabel('Team').selectOption('');
    await page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(late)}`);
    const headFlag = page.locator('.conv-head').getByTestId('sla');
    await headFlag.filter({ hasText: 'overdue' }).waitFor();
    expect((await call('POST', `/v1/conversations/${encodeURIComponent(late)}/take`, org.agentKey)).status).toBe(200);
    expect((await call('POST', `/v1/conversations/${encodeURIComponent(late)}/reply`, org.agentKey, { type: 'text', text: 'It ships today.' })).status).toBe(200);
    await headFlag.waitFor({ state: 'detached' });
    await expect.poll(async () => (await conversation(org, late)).sla, { timeout: 30_000 }).toBeNull();
    await page.goto(`${suite.svc.url}/inbox?view=mine`);
    await row(page, late).waitFor();
    expect(await row(page, late).getByTestId('sla').count()).toBe(0);
    expect(w.problems).toEqual([]);
  });

  it('an admin builds a rule with a label condition and the add-label, priority and ticket actions; it fires on the next message of a labelled customer', async () => {
    const org = await suite.svc.createOrg('Rule Actions Org');
    const channel = await channelOf(org, 'Rules line');
    for (const [name, color] of [['VIP', '#b8860b'], ['Refund', '#a83232']]) {
      expect((await call('POST', '/v1/labels', org.adminKey, { name, color })).status).toBe(201);
    }
    const { w } = await suite.open({ width: 1280, height: 900 });
    w.allow('/v1/automation-rules', 400);
    await suite.signIn(w.page, `admin@${org.id}.test`);
    const page = w.page;
    await page.goto(`${suite.svc.url}/settings/automation`);
    await page.getByText('No rule yet').waitFor();

    await page.getByRole('button', { name: 'New rule' }).click();
    const editor = page.getByTestId('rule-editor');
    await editor.getByLabel('Rule name').fill('VIP refunds');
    await editor.getByRole('button', { name: 'Add condition' }).click();
    await editor.getByLabel('Condition 1 field').selectOption('label');
    expect(await editor.getByLabel('Condition 1 operator').inputValue()).toBe('in');
    await editor.getByRole('group', { name: 'Condition 1 values' }).getByRole('checkbox', { name: 'VIP' }).check();
    await editor.getByRole('button', { name: 'Add condition' }).click();
    await editor.getByLabel('Condition 2 values (one per line)').fill('refund');
    await editor.getByLabel('Action 1', { exact: true }).selectOption('add_label');
    await editor.getByLabel('Action 1 label').selectOption({ label: 'Refund' });
    await editor.getByRole('button', { name: 'Add action' }).click();
    await editor.getByLabel('Action 2', { exact: true }).selectOption('create_ticket');
    await editor.getByRole('button', { name: 'Add action' }).click();
    await editor.getByLabel('Action 3', { exact: true }).selectOption('set_priority');
    await editor.getByLabel('Action 3 priority').selectOption('urgent');
    // A ticket without a subject is refused, next to its field.
    await editor.getByRole('button', { name: 'Create rule' }).click();
    await editor.getByRole('alert').waitFor();
    const subject = editor.getByLabel('Action 2 ticket subject');
    expect(await subject.getAttribute('aria-invalid')).toBe('true');
    await subject.fill('VIP refund request');
    await editor.getByRole('button', { name: 'Create rule' }).click();
    const rule = page.getByTestId('rules').getByRole('listitem', { name: 'Rule 1: VIP refunds' });
    await rule.getByText('a label is one of “VIP” and message text contains any of “refund”').waitFor();
    await rule.getByText("add label “Refund”; create a ticket “VIP refund request”; set the ticket's priority to urgent").waitFor();
    await screenshot(page, 'settings-automation-actions');

    const labels = (await call('GET', '/v1/labels', org.adminKey)).body.labels as { id: string; name: string }[];
    const idOf = (name: string) => labels.find((l) => l.name === name)!.id;
    const stored = (await call('GET', '/v1/automation-rules', org.adminKey)).body.rules[0];
    expect(stored.conditions).toEqual([{ field: 'label', operator: 'in', value: [idOf('VIP')] }, { field: 'text', operator: 'contains', value: 'refund' }]);
    expect(stored.actions).toEqual([{ type: 'add_label', label: idOf('Refund') }, { type: 'create_ticket', subject: 'VIP refund request' }, { type: 'set_priority', priority: 'urgent' }]);

    // The editor shows what is stored.
    await rule.getByRole('button', { name: 'Edit' }).click();
    const again = page.getByTestId('rules').getByTestId('rule-editor');
    expect(await again.getByRole('group', { name: 'Condition 1 values' }).getByRole('checkbox', { name: 'VIP' }).isChecked()).toBe(true);
    expect(await again.getByLabel('Action 1 label').inputValue()).toBe(idOf('Refund'));
    expect(await again.getByLabel('Action 2 ticket subject').inputValue()).toBe('VIP refund request');
    expect(await again.getByLabel('Action 3 priority').inputValue()).toBe('urgent');
    await again.getByRole('button', { name: 'Cancel' }).click();

    // It takes effect: a VIP customer asking for a refund gets the label, and an urgent ticket with the subject.
    const phone = '4915112347101';
    const id = `${phone}:${channel.phoneNumberId}`;
    await writes(org, channel, phone, 'Hello');
    await expect.poll(async () => (await conversation(org, id))?.status, { timeout: 30_000 }).toBe('bot');
    expect((await call('POST', `/v1/conversations/${encodeURIComponent(id)}/labels`, org.adminKey, { labels: ['VIP'] })).status).toBe(200);
    await writes(org, channel, phone, 'I need a refund please');
    await expect.poll(async () => (await conversation(org, id)).labels.map((l: { name: string }) => l.name).sort(), { timeout: 30_000 }).toEqual(['Refund', 'VIP']);
    const contactId = (await conversation(org, id)).contactId as string;
    await expect
      .poll(async () => (await call('GET', '/v1/tickets', org.adminKey)).body.tickets.map((t: { title: string; priority: string; audienceId: string | null }) => [t.title, t.priority, t.audienceId]), { timeout: 30_000 })
      .toEqual([['VIP refund request', 'urgent', contactId]]);
    expect(w.problems).toEqual([]);
  });

  it('a customer in the simulator taps "Talk to an agent" on the demo channel: the default rule queues the conversation and auto-assignment gives it to the one online agent, who is notified', async () => {
    // A first start's demo organization: the sandbox channel and the "Talk to an agent" rule, as `npm start` seeds them.
    const org = await suite.svc.createOrg('Demo Org');
    const services = suite.svc.running.services;
    await services.messaging.seedDemo(org.id);
    await services.automation.seedDemo(org.id);
    const channel = (await call('GET', '/v1/channels', org.adminKey)).body.channels[0] as Channel & { name: string };
    expect(channel.name).toBe('Sandbox WhatsApp');
    expect((await call('PATCH', `/v1/channels/${channel.id}`, org.adminKey, { routing: { autoAssign: { enabled: true } } })).status).toBe(200);

    // The agent is signed in and online, looking at another window.
    const agent = await suite.signedIn(`agent@${org.id}.test`, { width: 1280, height: 900 }, (context) => recordNotifications(context, suite.svc.url));
    await expect.poll(async () => (await call('GET', '/v1/presence', org.adminKey)).body.agents.filter((a: { status: string }) => a.status === 'online').map((a: { userId: string }) => a.userId), { timeout: 30_000 }).toEqual([org.agentId]);
    const notes = () => agent.page.evaluate(() => (globalThis as unknown as { __notes: { title: string; body: string }[] }).__notes);
    expect(await agent.page.title()).toBe('Switchboard');

    // The business sent the seeded template with its quick replies; the customer reads it in the simulator.
    const phone = '4915112347201';
    const id = `${phone}:${channel.phoneNumberId}`;
    const sent = await call('POST', '/v2/wa/template', org.adminKey, {
      channelId: channel.id,
      to: phone,
      template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: ['Tess', 'A-2001', 'Friday'].map((text) => ({ type: 'text', text })) }] },
    });
    expect(sent.status).toBe(201);
    const sim = await watchedPage(agent.page.context());
    await sim.page.goto(`${suite.svc.url}/simulator`);
    await sim.page.getByLabel('Channel').selectOption({ label: 'Sandbox WhatsApp' });
    await sim.page.getByLabel('Customer phone (digits)').fill(phone);
    await sim.page.getByLabel('Profile name').fill('Tess Tapper');
    await sim.page.getByRole('button', { name: 'Open the phone' }).click();
    const panel = sim.page.getByTestId('customer-panel');
    await panel.getByText('Hi Tess, your order A-2001 has shipped and arrives on Friday.').waitFor();
    await panel.getByRole('button', { name: 'Talk to an agent' }).click();
    await panel.locator('li.mine').getByText('Talk to an agent').waitFor();
    // The rule's reply reaches the customer.
    await panel.getByText('Thanks! An agent will be with you shortly.').waitFor();

    // Queued by the rule, then given to the one online agent.
    await expect
      .poll(async () => {
        const c = await conversation(org, id);
        return c === undefined ? null : { status: c.status, assigneeId: c.assigneeId };
      }, { timeout: 60_000 })
      .toEqual({ status: 'assigned', assigneeId: org.agentId });
    const timeline = (await conversation(org, id)).messages.filter((m: { sender: string }) => m.sender === 'system').map((m: { system?: { event: string } }) => m.system?.event);
    expect(timeline).toEqual(expect.arrayContaining(['rule_fired', 'assigned']));

    // The agent is told: a browser notification, the tab title, and the conversation in Mine.
    // (Named by the customer's profile name once the conversation knows it, else by the number.)
    await expect.poll(notes, { timeout: 60_000 }).toContainEqual({ title: 'Conversation assigned to you', body: expect.stringMatching(new RegExp(`^(Tess Tapper|\\+${phone}) is yours to answer$`)) });
    await agent.page.waitForFunction(() => (globalThis as unknown as { document: { title: string } }).document.title === '(1) Switchboard');
    await agent.page.getByTestId('count-mine').filter({ hasText: /^1$/ }).waitFor();
    await agent.page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: /^Mine/ }).click();
    await row(agent.page, id).waitFor();
    await screenshot(agent.page, 'inbox-auto-assigned');
    expect(agent.problems).toEqual([]);
    expect(sim.problems).toEqual([]);
  });
});
