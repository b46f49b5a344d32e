import { describe, expect, it } from 'vitest';
import { screenshot } from './browser.js';
import { useDashboardSuite } from './suite.js';

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe('tickets in the dashboard (Chromium)', { timeout: 120_000 }, () => {
  const suite = useDashboardSuite('Ticket Org');

  it("an agent edits a ticket's subject and status, comments, and sees every change with who made it; the contact shows by name with a link", async () => {
    const contact = await suite.org.contact('4915112340001:100200');
    expect((await suite.svc.call('PATCH', `/v1/contacts/${contact.id}`, { key: suite.org.adminKey, body: { name: 'Rosa Díaz' } })).status).toBe(200);
    const made = await suite.svc.call('POST', '/v1/tickets', { key: suite.org.adminKey, body: { subject: 'Parcel damaged', description: 'Box torn', audienceExternalId: contact.audienceExternalId } });
    expect(made.status).toBe(201);
    const ticketId = made.body.ticketId as string;

    const { w } = await suite.open({ width: 1280, height: 900 });
    const page = w.page;
    await suite.signIn(page, `agent@${suite.org.id}.test`);
    await page.goto(`${suite.svc.url}/tickets/${ticketId}`);

    // The contact by name, linking to its page.
    const link = page.locator('.ticket-contact a[data-contact]');
    await link.filter({ hasText: 'Rosa Díaz' }).waitFor();
    expect(await link.getAttribute('href')).toBe(`/contacts/${encodeURIComponent(contact.id)}`);

    const activity = page.getByRole('list', { name: 'Ticket activity' });
    await activity.locator('li[data-kind="created"]').filter({ hasText: 'Admin via API key' }).waitFor();

    await page.getByLabel('Subject').fill('Parcel damaged in transit');
    await page.getByLabel(/^Status/).selectOption('in_progress');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('heading', { name: 'Parcel damaged in transit' }).waitFor();
    const change = activity.locator('li[data-kind="changed"]');
    await change.filter({ hasText: 'changed the status from open to in progress' }).waitFor();
    expect(await change.textContent()).toContain('Agent (you)');
    expect(await change.textContent()).toContain('changed the subject from “Parcel damaged” to “Parcel damaged in transit”');

    await page.getByLabel(/^Comment/).fill('Courier confirmed the damage; replacement on its way.');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await activity.locator('li[data-kind="comment"]').filter({ hasText: 'Courier confirmed the damage' }).waitFor();
    expect(await page.getByLabel(/^Comment/).inputValue()).toBe('');
    await screenshot(page, 'ticket-activity');

    // The API tells the same story, in order, with the agent's dashboard session as the actor.
    const api = await suite.svc.call('GET', `/v1/tickets/${ticketId}/activity`, { key: suite.org.adminKey });
    expect(api.body.entries.map((e: { kind: string }) => e.kind)).toEqual(['created', 'changed', 'comment']);
    expect(api.body.entries[1].actor).toMatchObject({ kind: 'session', userId: suite.org.agentId, userName: 'Agent' });
    expect(api.body.entries[2]).toMatchObject({ text: 'Courier confirmed the damage; replacement on its way.', actor: { kind: 'session', userId: suite.org.agentId } });
    expect((await suite.svc.call('GET', `/v1/tickets/${ticketId}`, { key: suite.org.adminKey })).body).toMatchObject({ title: 'Parcel damaged in transit', status: 'in_progress' });
    expect(w.problems).toEqual([]);
  });

  it("a teammate's change and comment show on an open ticket at once, and what the agent is typing stays", async () => {
    const made = await suite.svc.call('POST', '/v1/tickets', { key: suite.org.adminKey, body: { subject: 'Refund for order 77', description: 'Asked twice' } });
    expect(made.status).toBe(201);
    const ticketId = made.body.ticketId as string;
    const w = await suite.signedIn(`agent@${suite.org.id}.test`, { width: 1280, height: 900 });
    const page = w.page;
    await page.goto(`${suite.svc.url}/tickets/${ticketId}`);
    const activity = page.getByRole('list', { name: 'Ticket activity' });
    await activity.locator('li[data-kind="created"]').waitFor();
    await page.getByLabel('Subject').fill('Refund for order 77 (partial)');

    // The admin, elsewhere, raises the priority and comments.
    expect((await suite.svc.call('PATCH', `/v1/tickets/${ticketId}`, { key: suite.org.adminKey, body: { priority: 'urgent' } })).status).toBe(200);
    expect((await suite.svc.call('POST', `/v1/tickets/${ticketId}/comments`, { key: suite.org.adminKey, body: { text: 'Customer called again' } })).status).toBe(201);
    await activity.locator('li[data-kind="comment"]').filter({ hasText: 'Customer called again' }).waitFor();
    await activity.locator('li[data-kind="changed"]').filter({ hasText: 'priority' }).waitFor();
    expect(await page.getByLabel(/^Priority/).inputValue()).toBe('urgent');
    expect(await page.getByLabel('Subject').inputValue()).toBe('Refund for order 77 (partial)');
    expect(await page.getByRole('heading', { name: 'Refund for order 77', exact: true }).count()).toBe(1);
    expect(w.problems).toEqual([]);
  });
});
