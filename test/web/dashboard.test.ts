import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestService, type TestService } from '../harness/service.js';
import { ensureWebBuilt, launchChromium, screenshot, watchedPage } from './browser.js';

describe('the dashboard in Chromium', () => {
  let svc: TestService;
  let browser: Browser;
  beforeAll(async () => {
    await ensureWebBuilt();
    [svc, browser] = await Promise.all([startTestService(), launchChromium()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  it('sends a visitor who is not signed in from / to /login, at 360 px and on a desktop', async () => {
    for (const viewport of [{ width: 360, height: 740 }, { width: 1280, height: 800 }]) {
      const context = await browser.newContext({ viewport });
      const w = await watchedPage(context);
      w.allow('/v1/auth/session', 401, 404);
      await w.page.goto(`${svc.url}/`);
      await w.page.getByRole('heading', { name: 'Sign in to Switchboard' }).waitFor();
      expect(new URL(w.page.url()).pathname).toBe('/login');
      // Keyboard: the email field has focus, tab reaches the password and the button.
      await w.page.keyboard.type('someone@example.com');
      await w.page.keyboard.press('Tab');
      expect(await w.page.evaluate('document.activeElement?.getAttribute("name")')).toBe('password');
      if (viewport.width === 360) await screenshot(w.page, 'login-360');
      else await screenshot(w.page, 'login');
      expect(w.problems).toEqual([]);
      await context.close();
    }
  });
});
