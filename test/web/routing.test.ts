import { beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { isWithinBusinessHours } from '../../src/domain/routing.js';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { screenshot, type Watched } from './browser.js';
import { useDashboardSuite } from './suite.js';

interface Channel {
  id: string;
  phoneNumberId: string;
}

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe("a channel's routing and the automation rules in the dashboard's settings (Chromium)", { timeout: 180_000 }, () => {
  const suite = useDashboardSuite('Routing Org', { SANDBOX_STATUS_DELAY_MS: '0' });
  let agentsLine: Channel;
  let rulesLine: Channel;
  beforeAll(async () => {
    const make = async (name: string) => (await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'whatsapp_cloud', name, network: 'sandbox' } })).body as Channel;
    agentsLine = await make('Agents line');
    rulesLine = await make('Rules line');
  });

  async function admin(path: string): Promise<Watched> {
    const { w } = await suite.open({ width: 1280, height: 900 });
    await suite.signIn(w.page, `admin@${suite.org.id}.test`);
    await w.page.goto(`${suite.svc.url}${path}`);
    return w;
  }

  /** The refusal an input points at (`aria-describedby`), which must say it is invalid. */
  async function refusalOf(page: Page, input: Locator): Promise<string | null> {
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    const id = await input.getAttribute('aria-describedby');
    expect(id).toBeTruthy();
    return page.locator(`[id="${id!}"]`).textContent();
  }

  const customerWrites = async (channel: Channel, phone: string, text: string) => {
    expect((await suite.svc.call('POST', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: suite.org.adminKey, body: { text } })).status).toBe(201);
  };
  /** The customer writes; their conversation once the message is stored (rules and routing act in the same step that stores it). */
  const conversationAfter = async (channel: Channel, phone: string, text: string) => {
    await customerWrites(channel, phone, text);
    const id = `${phone}:${channel.phoneNumberId}`;
    let conversation: { status: string; messages: { sender: string; content: { text?: string } }[] } | undefined;
    await expect
      .poll(
        async () => {
        const r = await suite.svc.call('GET', `/v1/conversations/${encodeURIComponent(id)}`, { key: suite.org.adminKey });
        conversation = r.body.conversation;
        return r.status === 200 && conversation!.messages.some((m) => m.sender === 'contact' && m.content.text === text);
        },
        { timeout: 30_000 },
      )
      .toBe(true);
    return { id, conversation: conversation! };
  };

  it("an admin sets a channel to agents first with auto-assignment and business hours, sees the API's refusals next to the fields, and the next customer is queued", async () => {
    const w = await admin('/settings/channels');
    w.allow(`/v1/channels/${agentsLine.id}`, 400);
    const card = w.page.getByTestId('channels').locator('article', { has: w.page.getByText('Agents line', { exact: true }) });
    await card.getByText('Routing: bot first').waitFor();
    await card.getByRole('button', { name: 'Routing' }).click();
    const form = card.getByTestId('routing-settings');
    await form.getByRole('radio', { name: /^Agents/ }).check();
    await form.getByLabel('Assign queued conversations automatically').check();
    await form.getByLabel('Capacity per agent').fill('0');
    await form.getByLabel('Use business hours').check();
    await form.getByLabel('Time zone').fill('Mars/Olympus_Mons');
    // Weekdays start open 09:00–17:00; a Monday closing before its opening is refused.
    await form.getByLabel('Monday opening 1 to').fill('08:00');
    await form.getByRole('button', { name: 'Save routing' }).click();
    await form.getByRole('alert').waitFor();
    expect(await refusalOf(w.page, form.getByLabel('Capacity per agent'))).toMatch(/1/);
    expect(await refusalOf(w.page, form.getByLabel('Time zone'))).toContain('an IANA time zone such as Europe/Berlin');
    expect(await refusalOf(w.page, form.getByLabel('Monday opening 1 to'))).toContain('to must be after from');
    expect(await form.getByTestId('field-error').count()).toBe(3);
    await form.evaluate((e) => (e as unknown as { scrollIntoView(): void }).scrollIntoView());
    await screenshot(w.page, 'settings-routing');
    // Nothing was changed.
    expect((await suite.svc.call('GET', `/v1/channels/${agentsLine.id}`, { key: suite.org.adminKey })).body.routing.firstResponder).toBe('bot');

    await form.getByLabel('Capacity per agent').fill('3');
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    await form.getByLabel('Monday opening 1 to').fill('12:30');
    await form.getByRole('button', { name: 'Add an opening on Monday' }).click();
    await form.getByLabel('Monday opening 2 from').fill('13:30');
    await form.getByLabel('Monday opening 2 to').fill('18:00');
    await form.getByRole('button', { name: 'Copy Monday to Tuesday–Friday' }).click();
    await form.getByRole('button', { name: 'Remove Friday opening 2' }).click();
    await form.getByRole('button', { name: 'Add an opening on Saturday' }).click();
    await form.getByLabel('Saturday opening 1 to').fill('24:00');
    await form.getByLabel('Holiday', { exact: true }).fill('2026-12-24');
    await form.getByRole('button', { name: 'Add holiday' }).click();
    await form.getByLabel('Holiday', { exact: true }).fill('2026-12-25');
    await form.getByRole('button', { name: 'Add holiday' }).click();
    await form.getByRole('button', { name: 'Remove holiday 2026-12-24' }).click();
    await form.getByLabel(/^Away reply/).fill('We are closed; we answer from 9:00.');
    await form.getByRole('button', { name: 'Save routing' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await form.getByTestId('field-error').count()).toBe(0);
    await card.getByText('Routing: agents first · auto-assign (up to 3 each) · business hours (Europe/Berlin)').waitFor();

    const split = [{ from: '09:00', to: '12:30' }, { from: '13:30', to: '18:00' }];
    const hours = {
      timeZone: 'Europe/Berlin',
      weekly: { mon: split, tue: split, wed: split, thu: split, fri: [{ from: '09:00', to: '12:30' }], sat: [{ from: '09:00', to: '24:00' }] },
      holidays: ['2026-12-25'],
      awayReply: 'We are closed; we answer from 9:00.',
    };
    expect((await suite.svc.call('GET', `/v1/channels/${agentsLine.id}`, { key: suite.org.adminKey })).body.routing).toEqual({
      firstResponder: 'agents',
      botFallbackSeconds: null,
      autoAssign: { enabled: true, capacity: 3 },
      businessHours: hours,
      sla: { firstResponseSeconds: null, nextResponseSeconds: null, byPriority: {}, clock: 'calendar' },
    });

    // The form shows what is stored after a reload.
    await w.page.reload();
    await card.getByRole('button', { name: 'Routing' }).click();
    expect(await form.getByRole('radio', { name: /^Agents/ }).isChecked()).toBe(true);
    expect(await form.getByLabel('Time zone').inputValue()).toBe('Europe/Berlin');
    expect(await form.getByLabel('Saturday opening 1 to').inputValue()).toBe('24:00');
    expect(await form.getByTestId('holidays').textContent()).toContain('2026-12-25');
    expect(await form.getByLabel('Sunday opening 1 from').count()).toBe(0);

    // It takes effect: a customer's new conversation goes straight to the agents' queue, with no bot,
    // where auto-assignment may already have given it to the signed-in admin; outside the hours just
    // set (the test runs on the wall clock) it waits with the bot for the next opening. The clock is
    // read on both sides of the message so a run across an opening or closing accepts either side.
    const statusesWhen = (open: boolean) => (open ? ['queued', 'assigned'] : ['bot']);
    const before = isWithinBusinessHours(hours, new Date());
    const { conversation } = await conversationAfter(agentsLine, '4915112340101', 'Hello, anyone there?');
    const after = isWithinBusinessHours(hours, new Date());
    expect([...statusesWhen(before), ...statusesWhen(after)]).toContain(conversation.status);

    // And back to the bot, with its fallback: switching business hours off sends null.
    await form.getByRole('radio', { name: /^The bot/ }).check();
    await form.getByLabel('Queue the conversation when the bot has not answered').check();
    await form.getByLabel('Bot fallback (seconds)').fill('90');
    await form.getByLabel('Use business hours').uncheck();
    await form.getByRole('button', { name: 'Save routing' }).click();
    await card.getByText('Routing: bot first, queued after 90 s without an answer · auto-assign (up to 3 each)').waitFor();
    expect((await suite.svc.call('GET', `/v1/channels/${agentsLine.id}`, { key: suite.org.adminKey })).body.routing).toMatchObject({ firstResponder: 'bot', botFallbackSeconds: 90, businessHours: null });
    expect(w.problems).toEqual([]);
  });

  it('an admin adds rules in the UI and the first fires on the next customer message; edits, reorders, switches off and deletes them', async () => {
    const w = await admin('/settings/automation');
    w.allow('/v1/automation-rules', 400);
    const page = w.page;
    await page.getByText('No rule yet').waitFor();

    await page.getByRole('button', { name: 'New rule' }).click();
    let editor = page.getByTestId('rule-editor');
    await editor.getByLabel('Rule name').fill('Refunds');
    await editor.getByRole('button', { name: 'Add condition' }).click();
    await editor.getByLabel('Condition 1 field').selectOption('text');
    await editor.getByLabel('Condition 1 operator').selectOption('contains');
    await editor.getByLabel('Condition 1 values (one per line)').fill('refund\nmoney back');
    await editor.getByLabel('Action 1', { exact: true }).selectOption('request_handover');
    await editor.getByRole('button', { name: 'Add action' }).click();
    await editor.getByLabel('Action 2', { exact: true }).selectOption('auto_reply');
    await editor.getByLabel('Action 2 reply text (inside the 24-hour window)').fill('A person will look at your refund.');
    await editor.getByRole('checkbox', { name: /^Stop here/ }).check();
    await editor.getByRole('button', { name: 'Create rule' }).click();
    const rules = page.getByTestId('rules');
    const refunds = rules.getByRole('listitem', { name: 'Rule 1: Refunds' });
    await refunds.getByText('message text contains any of “refund”, “money back”').waitFor();
    await refunds.getByText('queue for an agent; reply “A person will look at your refund.”').waitFor();

    // A second rule, first refused by the API next to the condition and the action it names.
    await page.getByRole('button', { name: 'New rule' }).click();
    editor = page.getByTestId('rule-editor');
    await editor.getByLabel('Rule name').fill('VIP');
    await editor.getByRole('button', { name: 'Add condition' }).click();
    await editor.getByLabel('Condition 1 field').selectOption('attribute');
    await editor.getByLabel('Condition 1 attribute name').fill('plan');
    await editor.getByLabel('Condition 1 operator').selectOption('matches');
    await editor.getByLabel('Condition 1 pattern (a regular expression, case-insensitive)').fill('^(gold');
    await editor.getByLabel('Action 1', { exact: true }).selectOption('assign');
    await editor.getByRole('button', { name: 'Create rule' }).click();
    await editor.getByRole('alert').waitFor();
    expect(await refusalOf(page, editor.getByLabel('Condition 1 pattern (a regular expression, case-insensitive)'))).toContain('not a valid regular expression');
    expect(await refusalOf(page, editor.getByLabel('Action 1 assignee'))).toMatch(/agentId/);
    await editor.getByLabel('Condition 1 pattern (a regular expression, case-insensitive)').fill('^(gold|platinum)$');
    await editor.getByLabel('Action 1 assignee').selectOption({ label: 'Agent (agent)' });
    await editor.getByRole('button', { name: 'Add action' }).click();
    await editor.getByLabel('Action 2', { exact: true }).selectOption('webhook');
    await editor.getByLabel('Action 2 event name').fill('vip_message');
    await editor.getByRole('button', { name: 'Create rule' }).click();
    const vip = rules.getByRole('listitem', { name: 'Rule 2: VIP' });
    await vip.getByText('attribute plan matches the pattern “^(gold|platinum)$”').waitFor();
    await vip.getByText('assign to Agent; webhook event “vip_message”').waitFor();
    await screenshot(page, 'settings-automation');

    const stored = (await suite.svc.call('GET', '/v1/automation-rules', { key: suite.org.adminKey })).body.rules;
    expect(stored.map((r: { name: string; position: number; enabled: boolean; stop: boolean }) => [r.name, r.position, r.enabled, r.stop])).toEqual([['Refunds', 0, true, true], ['VIP', 1, true, false]]);
    expect(stored[0].conditions).toEqual([{ field: 'text', operator: 'contains', value: ['refund', 'money back'] }]);
    expect(stored[1].actions).toEqual([{ type: 'assign', agentId: suite.org.agentId }, { type: 'webhook', event: 'vip_message' }]);

    // It takes effect: a customer on a channel whose bot answers first is queued by the rule and told so.
    const first = await conversationAfter(rulesLine, '4915112340201', 'I want my money back');
    expect(first.conversation.status).toBe('queued');
    await expect
      .poll(async () => (await suite.svc.call('GET', `/v1/conversations/${encodeURIComponent(first.id)}`, { key: suite.org.adminKey })).body.conversation.messages.filter((m: { sender: string; direction: string }) => m.sender === 'system' && m.direction === 'outbound').map((m: { content: { text?: string } }) => m.content.text), { timeout: 30_000 })
      .toEqual(['A person will look at your refund.']);
    await page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(first.id)}`);
    await page.getByText('Automation rule “Refunds” fired').waitFor();
    await page.goto(`${suite.svc.url}/settings/automation`);

    // Reorder: VIP first.
    await rules.getByRole('button', { name: 'Move VIP up' }).click();
    await rules.getByRole('listitem', { name: 'Rule 1: VIP' }).waitFor();
    await rules.getByRole('listitem', { name: 'Rule 2: Refunds' }).waitFor();

    // Edit: a new name, and the stop taken off.
    await rules.getByRole('listitem', { name: 'Rule 2: Refunds' }).getByRole('button', { name: 'Edit' }).click();
    editor = rules.getByTestId('rule-editor');
    await editor.getByLabel('Rule name').fill('Refund requests');
    await editor.getByRole('checkbox', { name: /^Stop here/ }).uncheck();
    await editor.getByRole('button', { name: 'Save rule' }).click();
    const renamed = rules.getByRole('listitem', { name: 'Rule 2: Refund requests' });
    await renamed.waitFor();

    // Switched off, it no longer fires: the next customer stays with the bot.
    await renamed.getByLabel('Enabled').uncheck();
    await renamed.getByText('off', { exact: true }).waitFor();
    const after = (await suite.svc.call('GET', '/v1/automation-rules', { key: suite.org.adminKey })).body.rules;
    expect(after.map((r: { name: string; enabled: boolean; stop: boolean }) => [r.name, r.enabled, r.stop])).toEqual([['VIP', true, false], ['Refund requests', false, false]]);
    const second = await conversationAfter(rulesLine, '4915112340202', 'refund please');
    expect(second.conversation.status).toBe('bot');

    page.once('dialog', (d) => void d.accept());
    await renamed.getByRole('button', { name: 'Delete' }).click();
    await renamed.waitFor({ state: 'detached' });
    expect((await suite.svc.call('GET', '/v1/automation-rules', { key: suite.org.adminKey })).body.rules.map((r: { name: string }) => r.name)).toEqual(['VIP']);
    expect(w.problems).toEqual([]);
  });

  it("an admin sets response targets by priority counted in business hours only, and an agent's own capacity; refusals stand next to the fields", async () => {
    const w = await admin('/settings/channels');
    w.allow(`/v1/channels/${rulesLine.id}`, 400);
    const card = w.page.getByTestId('channels').locator('article', { has: w.page.getByText('Rules line', { exact: true }) });
    await card.getByRole('button', { name: 'Routing' }).click();
    const form = card.getByTestId('routing-settings');
    await form.getByLabel('First response (seconds; empty: none)').fill('3600');
    await form.getByLabel('Urgent first response (seconds)').fill('5');
    await form.getByLabel('High next response (seconds)').fill('600');
    await form.getByRole('checkbox', { name: /Count only business hours/ }).check();
    await form.getByRole('button', { name: 'Save routing' }).click();
    await form.getByRole('alert').waitFor();
    expect(await refusalOf(w.page, form.getByLabel('Urgent first response (seconds)'))).toMatch(/10/);
    expect((await suite.svc.call('GET', `/v1/channels/${rulesLine.id}`, { key: suite.org.adminKey })).body.routing.sla.byPriority).toEqual({});

    await form.getByLabel('Urgent first response (seconds)').fill('60');
    await form.getByRole('button', { name: 'Save routing' }).click();
    await card.getByText(/targets by priority \(high, urgent\) · targets count business hours only/).waitFor();
    expect((await suite.svc.call('GET', `/v1/channels/${rulesLine.id}`, { key: suite.org.adminKey })).body.routing.sla).toEqual({
      firstResponseSeconds: 3600,
      nextResponseSeconds: null,
      byPriority: { high: { firstResponseSeconds: null, nextResponseSeconds: 600 }, urgent: { firstResponseSeconds: 60, nextResponseSeconds: null } },
      clock: 'business_hours',
    });
    // After a reload the form shows what is stored; emptying a priority removes it.
    await w.page.reload();
    await card.getByRole('button', { name: 'Routing' }).click();
    expect(await form.getByLabel('Urgent first response (seconds)').inputValue()).toBe('60');
    expect(await form.getByRole('checkbox', { name: /Count only business hours/ }).isChecked()).toBe(true);
    await form.getByLabel('High next response (seconds)').fill('');
    await form.getByRole('button', { name: 'Save routing' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(Object.keys((await suite.svc.call('GET', `/v1/channels/${rulesLine.id}`, { key: suite.org.adminKey })).body.routing.sla.byPriority)).toEqual(['urgent']);

    // An agent's own capacity, from the users' table.
    await w.page.goto(`${suite.svc.url}/settings/users`);
    w.allow(`/v1/users/${suite.org.agentId}`, 400);
    const capacity = w.page.getByTestId('users').getByLabel(/^Capacity of Agent/);
    await capacity.fill('0');
    await capacity.press('Enter');
    await w.page.getByRole('alert').waitFor();
    await capacity.fill('2');
    await capacity.press('Enter');
    await expect.poll(async () => ((await suite.svc.call('GET', '/v1/users', { key: suite.org.adminKey })).body.users as { id: string; capacity: number | null }[]).find((u) => u.id === suite.org.agentId)!.capacity, { timeout: 30_000 }).toBe(2);
    await w.page.reload();
    expect(await w.page.getByTestId('users').getByLabel(/^Capacity of Agent/).inputValue()).toBe('2');
    expect(w.problems).toEqual([]);
  });

  it('an agent is refused the automation rules, in the dashboard as by the API', async () => {
    const { w } = await suite.open();
    await suite.signIn(w.page, `agent@${suite.org.id}.test`);
    await w.page.goto(`${suite.svc.url}/settings/automation`);
    await w.page.getByRole('heading', { name: 'Settings are for admins' }).waitFor();
    expect(await w.page.getByRole('link', { name: 'Settings' }).count()).toBe(0);
    // The agent's own session is refused the rules (scope settings:manage is an admin's).
    w.allow('/v1/automation-rules', 403);
    expect(await w.page.evaluate(async () => (await fetch('/v1/automation-rules')).status)).toBe(403);
    expect(w.problems).toEqual([]);
  });
});
