import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler } from 'express';

/**
 * Paths the dashboard's page fallback never answers, so a typo in an API path
 * stays a JSON 404 and no protocol endpoint is shadowed by the web app.
 */
export const RESERVED_PREFIXES = ['/v1', '/v2', '/api', '/admin', '/ws', '/mcp', '/docs', '/openapi.json', '/asyncapi.json', '/healthz', '/readyz', '/metrics', '/webhooks', '/sandbox', '/assets', '/webchat', '/widget.js'];

/** Where `vite build` writes the dashboard: `<package root>/dist/web` from both `src/http` and `dist/http`. */
export const DEFAULT_WEB_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'web');

function reserved(path: string): boolean {
  return RESERVED_PREFIXES.some((p) => path === p || path.startsWith(p.endsWith('.json') ? p : `${p}/`));
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Switchboard</title></head>
<body style="font:16px system-ui,sans-serif;margin:40px"><h1>The dashboard is not built</h1>
<p><code>npm start</code> builds it on its first run; <code>npm run build:web</code> builds it by hand.</p></body></html>`;

/**
 * The dashboard's static files and its page routes.
 *
 * Guarantees:
 * - hashed files under `/assets/` are served with a one-year `immutable` cache; `index.html` with
 *   `no-cache`, so a new build is picked up on the next page load;
 * - any other GET/HEAD that asks for HTML and is not under a reserved prefix gets `index.html`
 *   (the browser-side router draws the screen); everything else falls through to the JSON 404;
 * - a missing build answers 503 with a page saying how to build it, never a stack trace.
 */
export function webAppHandlers(webDir: string = DEFAULT_WEB_DIR): { assets: RequestHandler; pages: RequestHandler } {
  const assets = express.static(join(webDir, 'assets'), {
    index: false,
    fallthrough: true,
    immutable: true,
    maxAge: '365d',
  });
  let index: Buffer | undefined;
  const readIndex = (): Buffer | undefined => {
    // Read once it exists: a build made while the service runs is still picked up.
    if (index === undefined && existsSync(join(webDir, 'index.html'))) index = readFileSync(join(webDir, 'index.html'));
    return index;
  };
  const staticRoot = express.static(webDir, { index: false, fallthrough: true, maxAge: '1h' });
  const pages: RequestHandler = (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (reserved(req.path)) return next();
    // Top-level files of the build (favicon) by exact name; not index.html (served below with no-cache).
    if (/^\/[\w.-]+\.(ico|png|svg|webmanifest|txt)$/.test(req.path)) return staticRoot(req, res, next);
    if (!req.accepts('html')) return next();
    const html = readIndex();
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Content-Security-Policy', "default-src 'self'; img-src 'self' data: https:; media-src 'self' https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    if (html === undefined) return void res.status(503).type('html').send(NOT_BUILT);
    res.status(200).type('html').send(html);
  };
  return { assets, pages };
}
