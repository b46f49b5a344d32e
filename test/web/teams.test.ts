import { beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { screenshot } from './browser.js';
import { useDashboardSuite } from './suite.js';

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe('teams and availability in the dashboard (Chromium)', { timeout: 180_000 }, () => {
  const suite = useDashboardSuite('Teams Org', { SANDBOX_STATUS_DELAY_MS: '0' });
  let channel: { id: string; phoneNumberId: string };
  beforeAll(async () => {
    channel = (await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'whatsapp_cloud', name: 'Teams line', network: 'sandbox' } })).body;
  });

  async function refusalOf(page: Page, input: Locator): Promise<string | null> {
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    const id = await input.getAttribute('aria-describedby');
    expect(id).toBeTruthy();
    return page.locator(`[id="${id!}"]`).textContent();
  }

  it("an admin creates, renames and deletes a team, seeing the API's refusals; a rule made in the UI queues a customer for the team", async () => {
    const { w } = await suite.open({ width: 1280, height: 900 });
    w.allow('/v1/teams', 400, 409);
    await suite.signIn(w.page, `admin@${suite.org.id}.test`);
    const page = w.page;
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Teams' }).click();
    await page.getByText('No team yet.').waitFor();

    await page.getByRole('button', { name: 'New team' }).click();
    let form = page.getByTestId('team-form');
    await form.getByLabel('Team name').fill('Billing');
    await form.getByRole('checkbox', { name: 'Agent', exact: true }).check();
    await form.getByRole('checkbox', { name: /^Give the team's queue out/ }).check();
    await form.getByLabel('Capacity per member').fill('0');
    await form.getByRole('button', { name: 'Create team' }).click();
    await form.getByRole('alert').waitFor();
    expect(await refusalOf(page, form.getByLabel('Capacity per member'))).toMatch(/1/);
    await form.getByLabel('Capacity per member').fill('2');
    await form.getByRole('button', { name: 'Create team' }).click();
    const teams = page.getByTestId('teams');
    let billing = teams.getByRole('listitem', { name: 'Team Billing' });
    await billing.getByText('Auto-assigns its queue, up to 2 open conversations each').waitFor();
    await billing.getByText('Agent', { exact: true }).waitFor();
    const stored = (await suite.svc.call('GET', '/v1/teams', { key: suite.org.adminKey })).body.teams;
    expect(stored).toEqual([expect.objectContaining({ name: 'Billing', memberIds: [suite.org.agentId], autoAssign: { enabled: true, capacity: 2 } })]);
    const teamId = stored[0].id as string;

    // A second team of the same name, in another case, is refused.
    await page.getByRole('button', { name: 'New team' }).click();
    form = page.getByTestId('team-form');
    await form.getByLabel('Team name').fill('billing');
    await form.getByRole('button', { name: 'Create team' }).click();
    await form.getByRole('alert').waitFor();
    await form.getByRole('button', { name: 'Cancel' }).click();

    await billing.getByRole('button', { name: 'Edit' }).click();
    form = teams.getByTestId('team-form');
    await form.getByLabel('Team name').fill('Billing desk');
    await form.getByRole('checkbox', { name: 'Admin', exact: true }).check();
    await form.getByRole('button', { name: 'Save team' }).click();
    billing = teams.getByRole('listitem', { name: 'Team Billing desk' });
    await billing.getByText('Agent, Admin').waitFor();
    await screenshot(page, 'settings-teams');

    // A rule's assign to the team, picked in the editor, queues the customer in the team's queue.
    await page.getByRole('link', { name: 'Automation rules' }).click();
    await page.getByRole('button', { name: 'New rule' }).click();
    const editor = page.getByTestId('rule-editor');
    await editor.getByLabel('Rule name').fill('Invoices to billing');
    await editor.getByRole('button', { name: 'Add condition' }).click();
    await editor.getByLabel('Condition 1 values (one per line)').fill('invoice');
    await editor.getByLabel('Action 1', { exact: true }).selectOption('assign');
    await editor.getByLabel('Action 1 assignee').selectOption({ label: 'Team Billing desk' });
    await editor.getByRole('button', { name: 'Create rule' }).click();
    await page.getByTestId('rules').getByText('queue for team Billing desk').waitFor();
    expect((await suite.svc.call('GET', '/v1/automation-rules', { key: suite.org.adminKey })).body.rules[0].actions).toEqual([{ type: 'assign', teamId }]);

    const phone = '4915112340301';
    const id = `${phone}:${channel.phoneNumberId}`;
    expect((await suite.svc.call('POST', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: suite.org.adminKey, body: { text: 'A question about my invoice' } })).status).toBe(201);
    await expect
      .poll(async () => {
        const c = (await suite.svc.call('GET', `/v1/conversations/${encodeURIComponent(id)}`, { key: suite.org.adminKey })).body.conversation;
        // Queued for the team; the team auto-assigns, so a member online (the admin, on this page) may get it at once.
        return c === undefined ? null : { teamId: c.teamId, holder: c.status === 'assigned' ? c.assigneeId : c.status };
      }, { timeout: 30_000 })
      .toEqual({ teamId, holder: expect.stringMatching(new RegExp(`^(queued|${suite.org.agentId}|${suite.org.adminId})$`)) });

    // Deleting the team.
    await page.getByRole('link', { name: 'Teams' }).click();
    page.once('dialog', (d) => void d.accept());
    await teams.getByRole('listitem', { name: 'Team Billing desk' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No team yet.').waitFor();
    expect((await suite.svc.call('GET', '/v1/teams', { key: suite.org.adminKey })).body.teams).toEqual([]);
    expect(w.problems).toEqual([]);
  });

  it('an agent sets their availability to offline in the top bar; it stays across a reload and teammates see it', async () => {
    const agent = await suite.signedIn(`agent@${suite.org.id}.test`);
    const status = agent.page.getByRole('combobox', { name: 'Your status' });
    const teamStatus = async () => (await suite.svc.call('GET', '/v1/presence', { key: suite.org.adminKey })).body.agents.find((a: { userId: string }) => a.userId === suite.org.agentId).status;
    await expect.poll(teamStatus, { timeout: 30_000 }).toBe('online');
    await status.selectOption('offline');
    await expect.poll(teamStatus, { timeout: 30_000 }).toBe('offline');
    await agent.page.reload();
    await agent.page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    await expect.poll(() => status.inputValue(), { timeout: 30_000 }).toBe('offline');
    await status.selectOption('online');
    await expect.poll(teamStatus, { timeout: 30_000 }).toBe('online');
    expect(agent.problems).toEqual([]);
  });
});
