/**
 * `npm run bench -- dashboard`: the dashboard in headless Chromium against the
 * real service (embedded, in memory):
 * - time to interactive of the inbox with 1,000 queued conversations;
 * - time to interactive of a conversation with 2,000 messages;
 * - the JavaScript shipped to the browser, gzipped.
 *
 * "Interactive" here: from the navigation's start until the list (or the
 * messages) is on screen and the main thread has finished a frame after it,
 * so the next click is handled at once. Each figure is the median of RUNS
 * fresh page loads (warm HTTP cache for the hashed assets, as an agent has).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { OPERATOR_TOKEN, startTestService, type TestService } from '../test/harness/service.js';
import { ensureWebBuilt, launchChromium, WEB_DIR } from '../test/web/browser.js';

const QUEUED = Number(process.env.BENCH_QUEUED ?? 1000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const PASSWORD = 'correct horse battery';

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function must(svc: TestService, method: string, path: string, opts: Parameters<TestService['call']>[2]): Promise<any> {
  const r = await svc.call(method, path, opts);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

// These functions run in the page, where `document` exists.
const queueReady = (_: null) => {
  const d = (globalThis as any).document;
  return d.querySelectorAll('[data-testid=queue] li').length > 0 && d.querySelector('[data-testid=connection]')?.textContent === 'Live';
};
const messagesReady = (n: number) => (globalThis as any).document.querySelectorAll('[data-testid=messages] li.msg').length >= n;

/**
 * ms since the navigation started, once `ready` holds and one more frame has been drawn.
 * The predicates are functions, not strings: the dashboard's CSP forbids eval, which string predicates use.
 */
async function interactiveAt<A extends number | null>(page: Page, ready: (arg: A) => boolean, arg: A): Promise<number> {
  await page.waitForFunction(ready as (arg: number | null) => boolean, arg, { timeout: 120_000, polling: 'raf' });
  return page.evaluate<number>('new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0)))');
}

export function shippedJs(): { files: number; raw: number; gzip: number } {
  const dir = join(WEB_DIR, 'assets');
  let raw = 0;
  let gzip = 0;
  let files = 0;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.js'))) {
    const b = readFileSync(join(dir, f));
    raw += b.length;
    gzip += gzipSync(b, { level: 9 }).length;
    files++;
  }
  return { files, raw, gzip };
}

export async function run(): Promise<void> {
  await ensureWebBuilt();
  const js = shippedJs();
  const svc = await startTestService({ env: { SANDBOX_STATUS_DELAY_MS: '0', SANDBOX_MAX_MPS: '100000' } });
  const browser = await launchChromium();
  try {
    const org = await svc.createOrg('Bench');
    const op = { key: OPERATOR_TOKEN };
    const channel = await must(svc, 'POST', `/admin/v1/organizations/${org.id}/channels`, { ...op, body: { kind: 'whatsapp_cloud', name: 'Bench sandbox', network: 'sandbox' } });
    const pnid: string = channel.phoneNumberId;
    const customer = (phone: string) => `/v1/sandbox/channels/${channel.id}/customers/${phone}/messages`;

    let t0 = Date.now();
    const phones = Array.from({ length: QUEUED }, (_, i) => String(4915100000000 + i));
    await pool(phones, 8, async (phone) => {
      await must(svc, 'POST', customer(phone), { key: org.adminKey, body: { text: 'I need a human', profileName: `Customer ${phone.slice(-4)}` } });
      await must(svc, 'POST', '/v1/handover', { key: org.adminKey, body: { audienceExternalId: `${phone}:${pnid}` } });
    });
    console.log(`seeded ${QUEUED} queued conversations in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    t0 = Date.now();
    const long = '4915199999999';
    const longId = `${long}:${pnid}`;
    for (let i = 0; i < MESSAGES / 2; i++) {
      await must(svc, 'POST', customer(long), { key: org.adminKey, body: { text: `question ${i}: ${'lorem ipsum '.repeat(1 + (i % 6))}`, profileName: 'Long Talker' } });
      await must(svc, 'POST', '/v1/messages/text', { key: org.adminKey, body: { audienceExternalId: longId, text: { body: `answer ${i}` } } });
    }
    const history = await must(svc, 'GET', `/v1/conversations/${encodeURIComponent(longId)}`, { key: org.adminKey });
    const sessionMessages = await must(svc, 'GET', `/v1/sessions/${encodeURIComponent(history.conversation.sessionId)}/messages`, { key: org.adminKey });
    console.log(`seeded a conversation with ${sessionMessages.length} messages in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const login = await context.request.post(`${svc.url}/v1/auth/login`, { data: { email: `admin@${org.id}.test`, password: PASSWORD } });
    if (!login.ok()) throw new Error(`login: ${login.status()}`);

    const inbox: number[] = [];
    const conversation: number[] = [];
    let shown = 0;
    for (let i = 0; i < RUNS + 1; i++) {
      const page = await context.newPage();
      await page.goto(`${svc.url}/inbox`, { waitUntil: 'commit' });
      const a = await interactiveAt(page, queueReady, null);
      shown = await page.evaluate<number>(`document.querySelectorAll('[data-testid=queue] li').length`);
      await page.goto(`${svc.url}/inbox/${encodeURIComponent(longId)}`, { waitUntil: 'commit' });
      const b = await interactiveAt(page, messagesReady, sessionMessages.length as number);
      if (process.env.BENCH_TRACE) {
        const entries = await page.evaluate<{ name: string; startTime: number; responseEnd: number }[]>(
          `performance.getEntriesByType('resource').map((e) => ({ name: e.name.replace(location.origin, ''), startTime: Math.round(e.startTime), responseEnd: Math.round(e.responseEnd) }))`,
        );
        console.log(`ready at ${b.toFixed(0)} ms`, entries);
      }
      await page.close();
      // The first load fills the HTTP cache; an agent's browser has the hashed files already.
      if (i === 0) continue;
      inbox.push(a);
      conversation.push(b);
    }
    await context.close();

    console.log('\n## Dashboard (headless Chromium)\n');
    console.log(`JavaScript shipped: ${js.files} file(s), ${(js.raw / 1024).toFixed(1)} KB minified, ${(js.gzip / 1024).toFixed(1)} KB gzipped`);
    console.log(`inbox with ${QUEUED} queued (first page of ${shown} rows, total shown in the header): median ${median(inbox).toFixed(0)} ms (runs: ${inbox.map((x) => x.toFixed(0)).join(', ')})`);
    console.log(`conversation with ${sessionMessages.length} messages: median ${median(conversation).toFixed(0)} ms (runs: ${conversation.map((x) => x.toFixed(0)).join(', ')})`);
  } finally {
    await browser.close();
    await svc.close();
  }
}
