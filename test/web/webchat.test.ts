import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { identityHash } from '../../src/webchat/index.js';
import { screenshot, type Watched } from './browser.js';
import { useDashboardSuite } from './suite.js';

/** A 1×1 PNG, and a small PDF: files whose bytes say what they are. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

/** A business's site on an origin of its own: a page with the widget's script tag (and, for a signed-in user, its id and HMAC). */
function site(serviceUrl: string, channel: () => string, secret: () => string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const user = url.searchParams.get('user');
    const forged = url.searchParams.get('forged') !== null;
    const identity = user === null ? '' : ` data-user-id="${user}" data-user-hash="${forged ? identityHash('wcs_guessed', user) : identityHash(secret(), user)}"`;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Acme shop</title>
<style>button{all:unset} *{color:red !important; font-size:40px !important}</style></head>
<body><h1>Acme shop</h1><script src="${serviceUrl}/widget.js" data-channel="${channel()}"${identity} async></script></body></html>`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://localhost:${(server.address() as AddressInfo).port}` })));
}

describe('the web chat widget in Chromium', { timeout: 180_000 }, () => {
  const suite = useDashboardSuite('Acme', {}, { widget: true });
  let channel: { id: string; identitySecret: string };
  let shop: { server: Server; origin: string };
  let elsewhere: { server: Server; origin: string };

  beforeAll(async () => {
    shop = await site(suite.svc.url, () => channel.id, () => channel.identitySecret);
    elsewhere = await site(suite.svc.url, () => channel.id, () => channel.identitySecret);
    const ch = await suite.svc.call('POST', `/admin/v1/organizations/${suite.org.id}/channels`, {
      key: OPERATOR_TOKEN,
      body: { kind: 'web_chat', name: 'Acme site', allowedOrigins: [shop.origin], widget: { title: 'Chat with Acme', greeting: 'Hi! How can we help?', color: '#7b1fa2' } },
    });
    expect(ch.status).toBe(201);
    channel = ch.body;
  });
  afterAll(() => {
    shop?.server.close();
    elsewhere?.server.close();
  });

  async function visitor(viewport = { width: 360, height: 740 }): Promise<Watched> {
    return (await suite.open(viewport)).w;
  }

  const agent = async (email = `agent@${suite.org.id}.test`): Promise<Page> => (await suite.signedIn(email)).page;

  const messages = (page: Page) => page.getByTestId('sb-message');

  it('is small: the served widget is at most 30 KB gzipped', async () => {
    const res = await fetch(`${suite.svc.url}/widget.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(readFileSync(join(__dirname, '..', '..', 'dist', 'widget', 'widget.js')))).toBe(true);
    expect(gzipSync(body).length).toBeLessThanOrEqual(30 * 1024);
  });

  it('a visitor writes at 360 px, an agent takes it in the dashboard and replies, the visitor sees it live; a reload keeps the history; unread on the launcher', async () => {
    const v = await visitor();
    await v.page.goto(shop.origin);
    await v.page.getByTestId('sb-launcher').click();
    await v.page.getByText('Hi! How can we help?').waitFor();
    // Themed from the channel's settings, and isolated from the page's CSS (which paints everything red).
    expect(await v.page.getByTestId('sb-launcher').evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor)).toBe('rgb(123, 31, 162)');
    expect(await v.page.getByText('Hi! How can we help?').evaluate((el) => (globalThis as any).getComputedStyle(el).fontSize)).toBe('15px');
    await v.page.getByTestId('sb-input').fill('Where is my order #1042?');
    await v.page.getByTestId('sb-send').click();
    await messages(v.page).filter({ hasText: 'Where is my order #1042?' }).waitFor();
    const box = await v.page.locator('#switchboard-webchat').evaluate((host: any) => host.shadowRoot.querySelector('.panel').getBoundingClientRect().width as number);
    expect(box).toBeLessThanOrEqual(360);
    await screenshot(v.page, 'webchat-visitor');

    const conv = await expect.poll(async () => (await suite.svc.call('GET', '/v1/conversations', { key: suite.org.adminKey })).body.conversations[0]?.audienceExternalId ?? null).toMatch(/^v_[0-9a-f]{24}:/);
    void conv;
    const aeid: string = (await suite.svc.call('GET', '/v1/conversations', { key: suite.org.adminKey })).body.conversations[0].audienceExternalId;
    expect(aeid.endsWith(`:${channel.id}`)).toBe(true);
    expect((await suite.svc.call('POST', '/v1/handover', { key: suite.org.adminKey, body: { audienceExternalId: aeid } })).status).toBe(200);

    const a = await agent();
    await a.goto(`${suite.svc.url}/inbox/${encodeURIComponent(aeid)}`);
    await a.getByTestId('messages').getByText('Where is my order #1042?').waitFor();
    await a.getByRole('button', { name: 'Take' }).click();
    await a.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent (you)' }).waitFor();
    await a.getByLabel('Message', { exact: true }).fill('It ships today.');
    await a.keyboard.press('Enter');
    await messages(v.page).filter({ hasText: 'It ships today.' }).waitFor();
    await screenshot(a, 'webchat-agent');

    // A reload: the same conversation, from the token in local storage.
    await v.page.reload();
    await v.page.getByTestId('sb-launcher').click();
    await messages(v.page).filter({ hasText: 'It ships today.' }).waitFor();
    expect(await messages(v.page).allTextContents()).toEqual(['You: Where is my order #1042?', 'Agent: It ships today.']);

    // Closed panel: a new reply counts on the launcher.
    await v.page.getByRole('button', { name: 'Close chat' }).first().click();
    await a.getByLabel('Message', { exact: true }).fill('Tracking: AC-1042');
    await a.keyboard.press('Enter');
    await v.page.getByRole('button', { name: 'Open chat, 1 unread' }).waitFor();
    await v.page.getByTestId('sb-launcher').click();
    await messages(v.page).filter({ hasText: 'Tracking: AC-1042' }).waitFor();
    await v.page.getByRole('button', { name: 'Close chat' }).first().waitFor();
    expect(v.problems).toEqual([]);
  });

  it('a page on an origin not allowed gets nothing', async () => {
    const v = await visitor();
    // Refused (403, and no CORS headers): the browser reports it failed, or answered without letting the page read it.
    const config = Promise.race([v.page.waitForEvent('requestfailed', (r) => r.url().includes('/config')), v.page.waitForResponse((r) => r.url().includes('/config'))]);
    await v.page.goto(elsewhere.origin);
    await config;
    await expect.poll(() => v.page.locator('#switchboard-webchat').count()).toBe(0);
    expect(await v.page.getByTestId('sb-launcher').count()).toBe(0);
  });

  it('a verified visitor on two browsers is one conversation; a forged identity hash is refused', async () => {
    const first = await visitor();
    await first.page.goto(`${shop.origin}/?user=cust-7`);
    await first.page.getByTestId('sb-launcher').click();
    await first.page.getByTestId('sb-input').fill('Hello from my phone');
    await first.page.getByTestId('sb-send').click();
    await messages(first.page).filter({ hasText: 'Hello from my phone' }).waitFor();

    const second = await visitor({ width: 1280, height: 800 });
    await second.page.goto(`${shop.origin}/?user=cust-7`);
    await second.page.getByTestId('sb-launcher').click();
    await messages(second.page).filter({ hasText: 'Hello from my phone' }).waitFor();
    await second.page.getByTestId('sb-input').fill('and from my laptop');
    await second.page.getByTestId('sb-send').click();
    await messages(first.page).filter({ hasText: 'and from my laptop' }).waitFor();

    const forged = await visitor();
    forged.allow('/visitors', 401);
    const refused = forged.page.waitForResponse((r) => r.url().includes('/visitors'));
    await forged.page.goto(`${shop.origin}/?user=cust-7&forged=1`);
    expect((await refused).status()).toBe(401);
    await forged.page.getByTestId('sb-launcher').click();
    await forged.page.getByText('userHash is not the HMAC-SHA256').waitFor();
    expect(await messages(forged.page).filter({ hasText: 'Hello from my phone' }).count()).toBe(0);
  });

  it('the channel\'s settings: the snippet to copy, the widget\'s look, a new identity secret shown once', async () => {
    const admin = await agent(`admin@${suite.org.id}.test`);
    await admin.goto(`${suite.svc.url}/settings/channels`);
    const card = admin.locator(`article[data-channel="${channel.id}"]`);
    await card.getByRole('button', { name: 'Widget' }).click();
    await card.getByTestId('web-chat-snippet').getByText(`data-channel="${channel.id}"`).waitFor();
    await card.getByLabel('Title').fill('Talk to Acme');
    await card.getByRole('button', { name: 'Save widget settings' }).click();
    await card.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const config = await suite.svc.call('GET', `/webchat/v1/channels/${channel.id}/config`, { headers: { origin: shop.origin } });
    expect(config.body.widget).toMatchObject({ title: 'Talk to Acme', greeting: 'Hi! How can we help?', color: '#7b1fa2' });
    admin.once('dialog', (d) => void d.accept());
    await card.getByRole('button', { name: 'Rotate identity secret' }).click();
    const shown = await card.getByTestId('identity-secret').textContent();
    expect(shown).toMatch(/wcs_/);
    channel.identitySecret = /wcs_[A-Za-z0-9_-]+/.exec(shown!)![0];
  });

  it('works with the keyboard alone: open, write, send, focus kept in the panel, Escape closes', async () => {
    const v = await visitor();
    await v.page.goto(shop.origin);
    await v.page.getByTestId('sb-launcher').waitFor();
    await v.page.keyboard.press('Tab');
    const focused = () => v.page.evaluate<string | null>("document.querySelector('#switchboard-webchat')?.shadowRoot?.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName ?? null");
    await expect.poll(focused).toBe('sb-launcher');
    await v.page.keyboard.press('Enter');
    await expect.poll(focused).toBe('sb-input');
    await v.page.keyboard.type('Typed with keys only');
    await v.page.keyboard.press('Enter');
    await messages(v.page).filter({ hasText: 'Typed with keys only' }).waitFor();
    for (let i = 0; i < 6; i++) {
      await v.page.keyboard.press('Tab');
      expect(await v.page.evaluate('document.activeElement?.id')).toBe('switchboard-webchat');
      expect(await v.page.evaluate("Boolean(document.querySelector('#switchboard-webchat').shadowRoot.activeElement?.closest('.panel'))")).toBe(true);
    }
    await v.page.keyboard.press('Escape');
    await expect.poll(focused).toBe('sb-launcher');
    expect(await v.page.getByRole('dialog').isHidden()).toBe(true);
  });

  /** The conversations of the channel so far, to tell a new visitor's apart. */
  const known = async (): Promise<Set<string>> =>
    new Set(((await suite.svc.call('GET', '/v1/conversations', { key: suite.org.adminKey })).body.conversations as { audienceExternalId: string }[]).map((c) => c.audienceExternalId));
  const newConversation = async (before: Set<string>): Promise<string> => {
    let found: string | undefined;
    await expect
      .poll(async () => {
        found = [...(await known())].find((x) => !before.has(x) && x.endsWith(`:${channel.id}`));
        return found !== undefined;
      }, { timeout: 60_000 })
      .toBe(true);
    return found!;
  };
  /** Whether an image has loaded its picture (a blob the widget fetched with its token, or the agents' media URL). */
  const loaded = (img: ReturnType<Page['locator']>) => img.evaluate((el: any) => el.complete === true && el.naturalWidth > 0);

  it('attachments both ways: the visitor sends a picture, the agent sees it in the thread and sends a document back, the visitor gets it', async () => {
    const before = await known();
    const v = await visitor();
    await v.page.goto(shop.origin);
    await v.page.getByTestId('sb-launcher').click();
    await v.page.getByTestId('sb-input').fill('This is how it arrived');
    await v.page.getByTestId('sb-file').setInputFiles({ name: 'broken.png', mimeType: 'image/png', buffer: PNG });
    const sent = messages(v.page).filter({ has: v.page.getByTestId('sb-attachment') });
    await sent.filter({ hasText: 'This is how it arrived' }).waitFor();
    await expect.poll(() => loaded(sent.locator('img'))).toBe(true);
    // A file the service does not take is refused with its reason, and nothing is sent.
    v.allow('/attachments', 415);
    await v.page.getByTestId('sb-file').setInputFiles({ name: 'page.png', mimeType: 'image/png', buffer: Buffer.from('<html><script>alert(1)</script></html>') });
    await v.page.getByText('is declared image/png but its content is').or(v.page.getByText('this file is none of them')).waitFor();

    const aeid = await newConversation(before);
    expect((await suite.svc.call('POST', '/v1/handover', { key: suite.org.adminKey, body: { audienceExternalId: aeid } })).status).toBe(200);
    const a = await agent();
    await a.goto(`${suite.svc.url}/inbox/${encodeURIComponent(aeid)}`);
    const thread = a.getByTestId('messages');
    await thread.getByText('This is how it arrived').waitFor();
    await expect.poll(() => loaded(thread.locator('img').first())).toBe(true);
    await a.getByRole('button', { name: 'Take' }).click();
    await a.getByTestId('conversation-state').filter({ hasText: 'Taken by Agent (you)' }).waitFor();
    await a.getByRole('tab', { name: 'File' }).click();
    await a.getByLabel(/^Picture or document/).setInputFiles({ name: 'invoice.pdf', mimeType: 'application/pdf', buffer: PDF });
    await a.getByLabel('Caption (optional)').fill('Your invoice');
    await a.getByTestId('composer').getByRole('button', { name: 'Send' }).click();
    await thread.getByRole('link', { name: 'invoice.pdf' }).waitFor();
    await screenshot(a, 'webchat-agent-files');

    const received = messages(v.page).filter({ hasText: 'Your invoice' });
    await received.waitFor();
    expect(await received.getAttribute('data-from')).toBe('agent');
    const link = received.getByTestId('sb-attachment');
    expect(await link.textContent()).toBe('invoice.pdf');
    // Opening it fetches the file with the visitor's token: the download is the agent's PDF.
    const download = v.page.waitForEvent('download');
    await link.click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('invoice.pdf');
    const path = await file.path();
    expect(readFileSync(path).equals(PDF)).toBe(true);
    await screenshot(v.page, 'webchat-visitor-files');
    expect(v.problems).toEqual([]);
  });

  it('the channel settings preview the widget live as its look is edited, without saving and without a visitor', async () => {
    const admin = await agent(`admin@${suite.org.id}.test`);
    const visitorCalls: string[] = [];
    admin.on('request', (r) => {
      if (r.url().includes('/webchat/v1/')) visitorCalls.push(r.url());
    });
    await admin.goto(`${suite.svc.url}/settings/channels`);
    const card = admin.locator(`article[data-channel="${channel.id}"]`);
    await card.getByRole('button', { name: 'Widget' }).click();
    const preview = admin.frameLocator('[data-testid="widget-preview"]');
    await preview.getByRole('dialog').waitFor();
    const saved = (await suite.svc.call('GET', `/webchat/v1/channels/${channel.id}/config`, { headers: { origin: shop.origin } })).body.widget;
    // The saved look first.
    await preview.getByRole('heading', { name: saved.title }).waitFor();
    await card.getByLabel('Title').fill('Ask us anything');
    await preview.getByRole('heading', { name: 'Ask us anything' }).waitFor();
    await card.getByLabel('Greeting').fill('Hello from the preview');
    await preview.getByText('Hello from the preview').waitFor();
    await card.getByLabel('Colour').fill('#00aa44');
    await expect.poll(() => preview.getByTestId('sb-launcher').evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor)).toBe('rgb(0, 170, 68)');
    await card.getByLabel('Position').selectOption('left');
    await expect.poll(() => preview.locator('#switchboard-webchat').getAttribute('data-position')).toBe('left');
    await screenshot(admin, 'webchat-preview');
    // Nothing saved, no visitor made: the preview asked the visitor API nothing.
    expect((await suite.svc.call('GET', `/webchat/v1/channels/${channel.id}/config`, { headers: { origin: shop.origin } })).body.widget).toEqual(saved);
    expect(visitorCalls).toEqual([]);
  });

  it("the customer simulator's web chat mode: the real widget on a test page; its visitor's message reaches the inbox", async () => {
    const before = await known();
    // Tall enough for the test page's frame and the widget at its bottom.
    const admin = (await suite.signedIn(`admin@${suite.org.id}.test`, { width: 1280, height: 1200 })).page;
    await admin.goto(`${suite.svc.url}/simulator`);
    await admin.getByRole('tab', { name: 'Web chat visitor' }).click();
    // The test page is on the dashboard's origin: allowed from here, once.
    await admin.getByRole('button', { name: `Allow ${suite.svc.url} for this channel` }).click();
    const page = admin.frameLocator('[data-testid="web-chat-test-page"]');
    await page.getByTestId('sb-launcher').click();
    await page.getByTestId('sb-input').fill('Hello from the simulator');
    await page.getByTestId('sb-send').click();
    await page.getByTestId('sb-message').filter({ hasText: 'Hello from the simulator' }).waitFor();
    await screenshot(admin, 'webchat-simulator');
    const aeid = await newConversation(before);
    const detail = await suite.svc.call('GET', `/v1/conversations/${encodeURIComponent(aeid)}`, { key: suite.org.adminKey });
    expect(detail.body.conversation.messages.map((m: any) => m.content.text)).toContain('Hello from the simulator');
    // The agent answers from the inbox; the simulated visitor sees it live.
    expect((await suite.svc.call('POST', '/v1/handover', { key: suite.org.adminKey, body: { audienceExternalId: aeid } })).status).toBe(200);
    expect((await suite.svc.call('POST', `/v1/conversations/${encodeURIComponent(aeid)}/take`, { key: suite.org.adminKey })).status).toBe(200);
    expect((await suite.svc.call('POST', `/v1/conversations/${encodeURIComponent(aeid)}/reply`, { key: suite.org.adminKey, body: { type: 'text', text: 'Hi, simulator!' } })).status).toBe(200);
    await page.getByTestId('sb-message').filter({ hasText: 'Hi, simulator!' }).waitFor();
  });
});
