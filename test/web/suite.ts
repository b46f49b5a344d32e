import { afterAll, beforeAll } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { ensureWebBuilt, ensureWidgetBuilt, launchChromium, watchedPage, type Watched } from './browser.js';

export const PASSWORD = 'correct horse battery';

type Viewport = { width: number; height: number };

export interface DashboardSuite {
  svc: TestService;
  browser: Browser;
  /** An organization made for the suite, with its admin and agent (password `PASSWORD`). */
  org: TestOrg;
  /** A fresh browser context and a watched page in it (a visitor's 401 on the session check is allowed). */
  open(viewport?: Viewport, init?: (context: BrowserContext) => Promise<void>): Promise<{ context: BrowserContext; w: Watched }>;
  /** Signs in on the login page and waits for the inbox. */
  signIn(page: Page, email: string): Promise<void>;
  /** `open` and `signIn`, then waits for the live inbox socket. */
  signedIn(email: string, viewport?: Viewport, init?: (context: BrowserContext) => Promise<void>): Promise<Watched>;
}

/**
 * What every dashboard suite sets up: the dashboard built, the service
 * (embedded, in memory) and Chromium started side by side, one organization;
 * and closed again after the suite, with every context it opened. With
 * `widget`, the web chat widget is built too.
 */
export function useDashboardSuite(orgName: string, env: Record<string, string> = {}, options: { widget?: boolean } = {}): DashboardSuite {
  const contexts: BrowserContext[] = [];
  const suite = {} as DashboardSuite;
  beforeAll(async () => {
    await Promise.all([ensureWebBuilt(), options.widget === true ? ensureWidgetBuilt() : undefined]);
    [suite.svc, suite.browser] = await Promise.all([startTestService({ env }), launchChromium()]);
    suite.org = await suite.svc.createOrg(orgName);
  }, 120_000);
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await suite.browser?.close();
    await suite.svc?.close();
  });
  suite.open = async (viewport = { width: 1280, height: 800 }, init) => {
    const context = await suite.browser.newContext({ viewport });
    contexts.push(context);
    await init?.(context);
    const w = await watchedPage(context);
    // The session check of a visitor who is not signed in is a 401 by contract.
    w.allow('/v1/auth/session', 401);
    return { context, w };
  };
  suite.signIn = async (page, email) => {
    await page.goto(`${suite.svc.url}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/inbox$/);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  };
  suite.signedIn = async (email, viewport, init) => {
    const { w } = await suite.open(viewport, init);
    await suite.signIn(w.page, email);
    await w.page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    return w;
  };
  return suite;
}
