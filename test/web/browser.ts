import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WEB_DIR = join(root, 'dist', 'web');
/** Screenshots of each main screen land here (git-ignored); the README shows copies from docs/screenshots. */
export const ARTIFACTS = join(root, 'test-artifacts');

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * Runs `vite build` with `config` when `stale()` says the output is older
 * than its sources, once even when test files run in parallel: a lock
 * directory under dist makes the others wait for the first.
 */
async function buildOnce(what: string, config: string, stale: () => boolean): Promise<void> {
  if (!stale()) return;
  const lock = join(root, 'dist', `.${what}-build.lock`);
  mkdirSync(join(root, 'dist'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another worker builds; a lock older than two minutes is a crashed build's.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    if (!stale()) return;
    const r = spawnSync(process.execPath, [join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', config, '--logLevel', 'warn'], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
    if (r.status !== 0) throw new Error(`${what} build failed:\n${r.stdout}\n${r.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds the dashboard into dist/web when its sources are newer than the build (what `npm start` does). */
export function ensureWebBuilt(): Promise<void> {
  const index = join(WEB_DIR, 'index.html');
  return buildOnce('web', 'web/vite.config.ts', () => !existsSync(index) || Math.max(newest(join(root, 'web')), statSync(join(root, 'src', 'domain', 'scopes.ts')).mtimeMs) > statSync(index).mtimeMs);
}

/**
 * Builds the web chat widget into dist/widget when its sources are newer
 * than the build (what `npm start` does); the build fails past its size limit.
 */
export function ensureWidgetBuilt(): Promise<void> {
  const file = join(root, 'dist', 'widget', 'widget.js');
  return buildOnce('widget', 'widget/vite.config.ts', () => !existsSync(file) || newest(join(root, 'widget')) > statSync(file).mtimeMs);
}

export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface Watched {
  page: Page;
  /** Uncaught exceptions and console errors, except the expected refusals listed with `allow`. */
  problems: string[];
  /** Accepts a browser "Failed to load resource" line for these statuses at URLs containing `path`. */
  allow(path: string, ...statuses: number[]): void;
}

/** A page whose uncaught errors and console errors are collected, to assert none happened. */
export async function watchedPage(context: BrowserContext): Promise<Watched> {
  const page = await context.newPage();
  // Waits, not assertions: on a loaded shared machine a live update can take longer than 30 s.
  page.setDefaultTimeout(60_000);
  const problems: string[] = [];
  const allowed: { path: string; statuses: number[] }[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const url = m.location().url ?? '';
    const status = /status of (\d{3})/.exec(m.text())?.[1];
    if (status !== undefined && allowed.some((a) => url.includes(a.path) && a.statuses.includes(Number(status)))) return;
    problems.push(`console: ${m.text()} (${url})`);
  });
  return { page, problems, allow: (path, ...statuses) => allowed.push({ path, statuses }) };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
}
