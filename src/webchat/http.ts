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
