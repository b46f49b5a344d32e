import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { signHubSignature } from '../../src/network/index.js';
import type { WhatsAppChannel } from '../../src/store/channels/port.js';
import { screenshot } from './browser.js';
import { PASSWORD, useDashboardSuite } from './suite.js';

// Browser flows on a shared 2-core machine: a generous per-test limit (no timing is asserted).
describe('a conversation in Chromium: its timeline, notes, labels, and taking it from the bot', { timeout: 120_000 }, () => {
  const suite = useDashboardSuite('Conversation Org');
  let channel: { id: string; phoneNumberId: string };
  const customerWrites = async (phone: string, text: string) => {
    const r = await suite.svc.call('POST', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: suite.org.adminKey, body: { text, profileName: 'Cleo' } });
    expect(r.status).toBe(201);
  };
  /** What the sandbox customer's phone shows. */
  const phoneShows = async (phone: string) => JSON.stringify((await suite.svc.call('GET', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: suite.org.adminKey })).body.messages);

  beforeAll(async () => {
    const ch = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/channels`, { key: OPERATOR_TOKEN, body: { kind: 'whatsapp_cloud', name: 'Sandbox WhatsApp', network: 'sandbox' } });
    expect(ch.status).toBe(201);
    channel = ch.body;
    expect((await suite.svc.call('POST', '/v1/labels', { key: suite.org.adminKey, body: { name: 'refund', color: '#e11d48' } })).status).toBe(201);
    const bob = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/users`, { key: OPERATOR_TOKEN, body: { email: `bob@${suite.org.id}.test`, name: 'Bob', role: 'agent', password: PASSWORD } });
    expect(bob.status).toBe(201);
  });

  it('a customer who hides their number: the head says so and shows their username and BSUID; the agent asks for the number, the customer shares it from their phone, and the head shows it', async () => {
    const made = await suite.svc.call('POST', `/v1/sandbox/channels/${channel.id}/customers`, { key: suite.org.adminKey, body: { phone: '4915112359999', username: 'quiet.cleo', hidePhone: true } });
    expect(made.status).toBe(201);
    const userId = made.body.customer.userId as string;
    await customerWrites(userId, 'Please call me back');
    const id = `${userId}:${channel.phoneNumberId}`;
    const ann = await suite.signedIn(`agent@${suite.org.id}.test`);
    const page = ann.page;
    await page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await page.getByTestId('phone-hidden').waitFor();
    expect(await page.getByTestId('conv-username').textContent()).toContain('@quiet.cleo');
    expect(await page.getByTestId('conv-user-id').textContent()).toBe(userId);
    // Asked by the agent who holds the conversation.
    expect(await page.getByRole('button', { name: 'Ask for their number' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Take' }).click();
    await page.getByRole('button', { name: 'Ask for their number' }).click();
    await page.getByTestId('customer-panel').getByRole('button', { name: 'Share my number' }).click();
    await page.getByTestId('phone-hidden').waitFor({ state: 'detached' });
    await page.locator('.conv-head .sub').filter({ hasText: '+4915112359999' }).waitFor();
    await screenshot(page, 'conversation-shared-number');
  });

  it('moves a bot conversation to the queue and takes it, with system entries in the thread; a private note the customer never receives; a label put on, filtered by, taken off', async () => {
    const phone = '4915112350001';
    const id = `${phone}:${channel.phoneNumberId}`;
    await customerWrites(phone, 'My refund has not arrived');
    const ann = await suite.signedIn(`agent@${suite.org.id}.test`);
    const page = ann.page;
    await page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await page.getByTestId('conversation-state').filter({ hasText: 'with the bot' }).waitFor();

    // Out of the bot's hands: into the queue, then taken; each change is a line in the thread.
    await page.getByRole('button', { name: 'Move to queue' }).click();
    await page.getByTestId('conversation-state').filter({ hasText: 'waiting for an agent' }).waitFor();
    const thread = page.getByTestId('messages');
    await thread.locator('li.system-entry[data-event="handover_requested"]').filter({ hasText: 'Handover requested by Agent (you)' }).waitFor();
    await page.getByRole('button', { name: 'Take' }).click();
    await page.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent (you)' }).waitFor();
    await thread.locator('li.system-entry[data-event="taken"]').waitFor();
    const order = await thread.locator('li[data-entry]').evaluateAll((els) => els.map((e) => e.getAttribute('data-event') ?? e.getAttribute('data-sender')));
    expect(order).toEqual(['contact', 'handover_requested', 'taken']);

    // A private note: in the thread, styled apart; never on the customer's phone, nor in the customer-facing history.
    await page.getByRole('tab', { name: 'Note' }).click();
    await page.getByLabel('Note', { exact: true }).fill('Checked the bank: the refund left on Monday');
    await page.getByRole('button', { name: 'Add note' }).click();
    await thread.locator('li.msg.note').filter({ hasText: 'Checked the bank: the refund left on Monday' }).waitFor();
    await screenshot(page, 'conversation-note');
    await page.getByRole('tab', { name: 'Text' }).click();
    await page.getByLabel('Message', { exact: true }).fill('It is on its way, Cleo');
    await page.keyboard.press('Enter');
    await page.getByTestId('customer-panel').getByText('It is on its way, Cleo').waitFor();
    expect(await page.getByTestId('customer-panel').getByText('refund left on Monday').count()).toBe(0);
    const shown = await phoneShows(phone);
    expect(shown).toContain('It is on its way, Cleo');
    expect(shown).not.toContain('refund left on Monday');
    const sessionId = (await suite.svc.call('GET', `/v1/conversations/${id}`, { key: suite.org.adminKey })).body.conversation.sessionId;
    const history = (await suite.svc.call('GET', `/v1/sessions/${sessionId}/messages`, { key: suite.org.adminKey })).body as { content: { text?: string } }[];
    expect(history.map((m) => m.content.text)).not.toContain('Checked the bank: the refund left on Monday');

    // A label: a chip in the conversation and on its row; the API's label filter finds it; taken off again.
    await page.getByRole('combobox', { name: 'Add a label' }).selectOption({ label: 'refund' });
    const chip = page.getByTestId('labels').locator('.chip[data-label="refund"]');
    await chip.waitFor();
    const listed = async () => (await suite.svc.call('GET', '/v1/conversations?view=all&label=refund', { key: suite.org.adminKey })).body.conversations.map((c: { id: string }) => c.id);
    expect(await listed()).toEqual([id]);
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: /^Mine/ }).click();
    await page.getByTestId('conversations').locator(`a[data-conversation="${id}"] .chip[data-label="refund"]`).waitFor();
    await screenshot(page, 'conversation-labels');
    await page.getByRole('button', { name: 'Remove label refund' }).click();
    await chip.waitFor({ state: 'detached' });
    expect(await listed()).toEqual([]);
  });

  it("an open conversation catches up on what changed before its page's socket said welcome", async () => {
    const phone = '4915112350003';
    const id = `${phone}:${channel.phoneNumberId}`;
    await customerWrites(phone, 'Is the blue one back in stock?');
    // Bob's next inbox sockets are held back from the server until released.
    const held: { connectToServer(): unknown }[] = [];
    let hold = false;
    const bob = await suite.signedIn(`bob@${suite.org.id}.test`, undefined, (context) =>
      context.routeWebSocket(/\/ws/, (ws) => {
        if (hold) held.push(ws);
        else ws.connectToServer();
      }),
    );
    const ann = await suite.signedIn(`agent@${suite.org.id}.test`);
    await ann.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await ann.page.getByTestId('conversation-state').filter({ hasText: 'with the bot' }).waitFor();
    hold = true;
    await bob.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await bob.page.getByTestId('conversation-state').filter({ hasText: 'with the bot' }).waitFor();
    // Taken while Bob's view is loaded and his socket not yet connected: no event reaches him for it.
    await ann.page.getByRole('button', { name: 'Take' }).click();
    await ann.page.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent (you)' }).waitFor();
    expect(held.length).toBeGreaterThan(0);
    hold = false;
    for (const ws of held) ws.connectToServer();
    await bob.page.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent' }).waitFor();
  });

  it('takes a conversation straight from the bot; a teammate sees the system entry live, and leaves a note without holding it', async () => {
    const phone = '4915112350002';
    const id = `${phone}:${channel.phoneNumberId}`;
    await customerWrites(phone, 'Quick question about sizes');
    const ann = await suite.signedIn(`agent@${suite.org.id}.test`);
    const bob = await suite.signedIn(`bob@${suite.org.id}.test`);
    await ann.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await bob.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await ann.page.getByTestId('conversation-state').filter({ hasText: 'with the bot' }).waitFor();
    await ann.page.getByRole('button', { name: 'Take' }).click();
    await ann.page.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent (you)' }).waitFor();
    // The teammate's thread shows it live; the bot is refused while Ann has it.
    await bob.page.getByTestId('messages').locator('li.system-entry[data-event="taken"]').filter({ hasText: 'Taken by Agent' }).waitFor();
    const bot = await suite.svc.call('POST', '/v1/messages/text', { key: suite.org.adminKey, body: { channelId: channel.id, to: phone, text: { body: 'bot reply' } } });
    expect([bot.status, bot.body.error.code]).toEqual([409, 'conversation_with_agent']);
    // Bob does not hold it: his composer offers the note only.
    await bob.page.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent' }).waitFor();
    expect(await bob.page.getByTestId('composer').getByRole('tab').allTextContents()).toEqual(['Note']);
    await bob.page.getByLabel('Note', { exact: true }).fill('Sizes run small in this brand');
    await bob.page.getByRole('button', { name: 'Add note' }).click();
    // Ann sees the note arrive in her thread (the note's event reaches the inbox socket), written by Bob.
    await ann.page.getByTestId('messages').locator('li.msg.note').filter({ hasText: 'Sizes run small in this brand' }).filter({ hasText: 'Bob · private note' }).waitFor();
    expect(await phoneShows(phone)).not.toContain('Sizes run small');
    // A label Ann puts on shows on the row in Bob's list without a reload.
    await bob.page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: /^Others/ }).click();
    const bobRow = bob.page.getByTestId('conversations').locator(`a[data-conversation="${id}"]`);
    await bobRow.waitFor();
    await ann.page.getByRole('combobox', { name: 'Add a label' }).selectOption({ label: 'refund' });
    await bobRow.locator('.chip[data-label="refund"]').waitFor();
  });

  it("shows what the customer shares beyond text: a location with its map, a contact card, a reaction on the message reacted to", async () => {
    const phone = '4915112350003';
    const id = `${phone}:${channel.phoneNumberId}`;
    const base = `/v1/sandbox/channels/${channel.id}/customers/${phone}`;
    const share = async (path: string, body: unknown) => {
      const r = await suite.svc.call('POST', `${base}/${path}`, { key: suite.org.adminKey, body });
      expect(r.status).toBe(201);
      return r.body.messageId as string;
    };
    const asked = await share('messages', { text: 'Can you pick it up here?', profileName: 'Cleo' });
    await share('locations', { latitude: 52.5219, longitude: 13.4132, name: 'Alexanderplatz', address: 'Alexanderplatz 1, Berlin' });
    await share('contacts', { contacts: [{ name: { formatted_name: 'Ben Lee' }, org: { company: 'Parcel Co' }, phones: [{ phone: '+49 151 2345678', type: 'CELL', wa_id: '491512345678' }] }] });
    await share('reactions', { messageId: asked, emoji: '🙏' });

    const ann = await suite.signedIn(`agent@${suite.org.id}.test`);
    await ann.page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    const thread = ann.page.getByTestId('messages');
    const location = thread.getByTestId('location');
    await location.filter({ hasText: 'Alexanderplatz 1, Berlin' }).waitFor();
    expect(await location.getByRole('link', { name: '52.5219, 13.4132 on the map' }).getAttribute('href')).toBe('https://www.openstreetmap.org/?mlat=52.5219&mlon=13.4132#map=17/52.5219/13.4132');
    const card = thread.getByTestId('contact-card');
    await card.filter({ hasText: 'Ben Lee' }).filter({ hasText: 'Parcel Co' }).waitFor();
    expect(await card.getByRole('link', { name: '+49 151 2345678' }).getAttribute('href')).toBe('tel:+491512345678');
    // The reaction: a line naming the message, and the emoji on that message itself.
    await thread.getByTestId('reaction').filter({ hasText: 'Reacted 🙏 to “Can you pick it up here?”' }).waitFor();
    await thread.locator(`li[data-message-id="${asked}"]`).getByTestId('reacted').filter({ hasText: '🙏' }).waitFor();
    await screenshot(ann.page, 'conversation-shared-location-contact-reaction');

    // One that arrives while the thread is open shows live; a type the service does not model says so.
    await share('reactions', { messageId: asked, emoji: '' });
    await thread.getByTestId('reaction').filter({ hasText: 'Took back the reaction to “Can you pick it up here?”' }).waitFor();
    await thread.locator(`li[data-message-id="${asked}"]`).getByTestId('reacted').waitFor({ state: 'detached' });
    const ch = (await suite.svc.running.services.messaging.stores.channels.get(suite.org.id, channel.id)) as WhatsAppChannel;
    const order = { from: phone, id: 'wamid.order-in-dashboard', timestamp: String(Math.floor(Date.now() / 1000)), type: 'order', order: { catalog_id: '1', product_items: [{ product_retailer_id: 'lid', quantity: 2 }] } };
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: ch.businessAccountId, changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: ch.phoneNumberId }, messages: [order] } }] }] });
    expect((await suite.svc.call('POST', `/webhooks/whatsapp/${channel.id}`, { rawBody: body, headers: { 'x-hub-signature-256': signHubSignature(ch.credentials.appSecret, body) } })).status).toBe(200);
    await thread.getByTestId('unsupported').filter({ hasText: 'Unsupported message type order: Order: 1 item' }).waitFor();
  });

  it('the agent sends a location and a contact card from the composer, and reacts to a customer message', async () => {
    const phone = '4915112350004';
    const id = `${phone}:${channel.phoneNumberId}`;
    const asked = (await suite.svc.call('POST', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: suite.org.adminKey, body: { text: 'Where is your shop?', profileName: 'Cleo' } })).body.messageId as string;
    const ann = await suite.signedIn(`agent@${suite.org.id}.test`);
    const page = ann.page;
    await page.goto(`${suite.svc.url}/inbox/${encodeURIComponent(id)}`);
    await page.getByRole('button', { name: 'Take' }).click();
    await page.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent (you)' }).waitFor();
    const thread = page.getByTestId('messages');

    await page.getByRole('tab', { name: 'Location' }).click();
    await page.getByLabel('Latitude').fill('52.5219');
    await page.getByLabel('Longitude').fill('13.4132');
    await page.getByLabel('Place name (optional)').fill('Our shop');
    await page.getByLabel('Address (optional)').fill('Karl-Marx-Allee 1, Berlin');
    await page.getByTestId('composer').getByRole('button', { name: 'Send' }).click();
    await thread.locator('li.msg.outbound').getByTestId('location').filter({ hasText: 'Our shop' }).waitFor();

    await page.getByRole('tab', { name: 'Contact' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Ben Lee');
    await page.getByLabel('Phone (optional)').fill('+49 151 2345678');
    await page.getByLabel('Company (optional)').fill('Parcel Co');
    await page.getByTestId('composer').getByRole('button', { name: 'Send' }).click();
    await thread.locator('li.msg.outbound').getByTestId('contact-card').filter({ hasText: 'Ben Lee' }).waitFor();

    const customerMessage = thread.locator(`li[data-message-id="${asked}"]`);
    await customerMessage.getByRole('button', { name: 'React 👍' }).click();
    await customerMessage.getByTestId('reacted-by-agent').filter({ hasText: '👍' }).waitFor();

    const shown = (await suite.svc.call('GET', `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`, { key: suite.org.adminKey })).body.messages as { type: string; message: Record<string, unknown> }[];
    expect(shown.filter((m) => m.type !== 'text').map((m) => [m.type, m.message])).toEqual([
      ['location', { type: 'location', location: { latitude: 52.5219, longitude: 13.4132, name: 'Our shop', address: 'Karl-Marx-Allee 1, Berlin' } }],
      ['contacts', { type: 'contacts', contacts: [{ name: { formatted_name: 'Ben Lee' }, phones: [{ phone: '+49 151 2345678', wa_id: '491512345678' }], org: { company: 'Parcel Co' } }] }],
      ['reaction', { type: 'reaction', reaction: { message_id: asked, emoji: '👍' } }],
    ]);
    await screenshot(page, 'conversation-agent-location-contact-reaction');
  });
});
