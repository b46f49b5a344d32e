import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { RequestHandler } from 'express';

/**
 * `/docs`: the OpenAPI document rendered by Swagger UI, served from
 * node_modules (`swagger-ui-dist`): no CDN, so it works on an air-gapped
 * install. No inline script, and the renderer makes no request of its own
 * beyond this service (the online validator badge is off).
 */
export const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/assets/docs.css">
</head><body>
<header class="sb-docs"><strong>Switchboard API reference</strong>
<nav><a href="/openapi.json">OpenAPI (JSON)</a> <a href="/asyncapi.json">AsyncAPI: the live inbox WebSocket</a> <a href="/">Dashboard</a></nav>
<p>Try an operation: press <b>Authorize</b>, paste an API key (<code>org_…</code>) under <i>apiKey</i>, then <b>Try it out</b> on any operation. Every operation shows an example request and response.</p>
</header>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body></html>`;

const initScript = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
  persistAuthorization: true,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 0,
  docExpansion: 'list',
  filter: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout'
});
`;

const docsCss = `body{margin:0;font-family:system-ui,sans-serif}
.sb-docs{background:#1c2430;color:#fff;padding:12px 24px}
.sb-docs nav{display:inline-flex;gap:16px;margin-left:24px;flex-wrap:wrap}
.sb-docs a{color:#9ecbff}.sb-docs p{margin:8px 0 0;font-size:14px;color:#d8dde5}
.sb-docs code{background:#2c3644;padding:1px 4px;border-radius:3px}`;

/** The renderer's files, from the installed package; only these are served. */
const RENDERER_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-32x32.png', 'favicon-16x16.png'];

/** Serves `/docs/assets/*`: the renderer's files and this page's script and style, cached for a day. */
export function docsAssets(): RequestHandler {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const own: Record<string, { type: string; body: string }> = {
    'docs.js': { type: 'text/javascript; charset=utf-8', body: initScript },
    'docs.css': { type: 'text/css; charset=utf-8', body: docsCss },
  };
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const name = req.path.replace(/^\//, '');
    const mine = own[name];
    if (mine) {
      res.setHeader('Cache-Control', 'public, max-age=3600');
      res.type(mine.type).send(mine.body);
      return;
    }
    if (!RENDERER_FILES.includes(name)) return next();
    res.sendFile(join(dir, name), { maxAge: '1d', immutable: false }, (err) => {
      if (err) next(err);
    });
  };
}
