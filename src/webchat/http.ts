import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';
import type { WebChatService } from './service.js';

/** Where the widget's build lands: `<package root>/dist/widget` from both `src/webchat` and `dist/webchat`. */
export const DEFAULT_WIDGET_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'widget');

const CHANNEL_PATH = /^\/v1\/channels\/([^/]+)\//;

/**
 * Cross-origin access to `/webchat`: the widget runs on the business's pages
 * and calls this service. A request whose Origin is an allowed origin of the
 * channel in its path gets the CORS headers that let the browser read the
 * answer (and preflights are answered here); any other origin gets none, so
 * its page reads nothing (the routes also refuse it, 403).
 */
export function webChatCors(service: WebChatService): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    const m = CHANNEL_PATH.exec(req.path);
    if (origin === undefined || m === null) return req.method === 'OPTIONS' ? void res.status(204).end() : next();
    service.channelFor(decodeURIComponent(m[1]!), origin).then(
      () => {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Vary', 'Origin');
        if (req.method !== 'OPTIONS') return next();
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST');
        res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type');
        res.setHeader('Access-Control-Max-Age', '600');
        res.status(204).end();
      },
      () => (req.method === 'OPTIONS' ? void res.status(204).end() : next()),
    );
  };
}

/**
 * `GET /widget.js`: the widget's one file, for any page to load (what it may
 * do is decided by the channel's allowed origins, not by who loads the
 * script). Cached for five minutes; 503 when it is not built.
 */
export function widgetScript(dir: string = DEFAULT_WIDGET_DIR): RequestHandler {
  let cached: { mtime: number; body: Buffer } | undefined;
  return (req, res, next) => {
    if (req.path !== '/' || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    const file = join(dir, 'widget.js');
    if (!existsSync(file)) {
      res.status(503).type('application/javascript').send('/* the web chat widget is not built: npm run build:web */');
      return;
    }
    const mtime = statSync(file).mtimeMs;
    if (cached === undefined || cached.mtime !== mtime) cached = { mtime, body: readFileSync(file) };
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    res.status(200).type('application/javascript').send(cached.body);
  };
}

/**
 * `GET /widget-test?channel=ch_…`: a plain page of this service's own origin
 * with the real widget's script tag, for the customer simulator (the widget
 * there talks to the channel as on any site, so the channel must allow this
 * origin). With `&preview`, the widget makes no request and takes its look
 * from the dashboard page that frames it (the channel settings' preview).
 * Framed only by pages of this origin.
 */
export function widgetTestPage(): RequestHandler {
  return (req, res, next) => {
    if (req.path !== '/' || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    const channel = typeof req.query.channel === 'string' && /^ch_[0-9A-Za-z]{8,40}$/.test(req.query.channel) ? req.query.channel : null;
    const preview = req.query.preview !== undefined;
    if (channel === null && !preview) {
      res.status(400).json({ success: false, error: { code: 'validation_failed', message: 'channel is required: /widget-test?channel=ch_…' } });
      return;
    }
    res.setHeader('Content-Security-Policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' blob: data:; connect-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'");
    res.setHeader('X-Frame-Options', 'SAMEORIGIN');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    const attrs = `data-channel="${channel ?? 'ch_preview0'}"${preview ? ' data-preview' : ''}`;
    res.status(200).type('html').send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${preview ? 'Widget preview' : 'Web chat test page'}</title>
<style>body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#334;background:${preview ? '#eef1f5' : '#fafafa'}}main{padding:24px;max-width:640px}h1{font-size:22px;margin:0 0 8px}</style></head>
<body><main>${preview ? '' : '<h1>Test shop</h1><p>A page with the web chat widget, as a customer sees it on the business&rsquo;s site. Open the chat at the bottom.</p>'}</main>
<script src="/widget.js" ${attrs} async></script></body></html>`);
  };
}
