import { randomUUID } from 'node:crypto';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../errors.js';
import type { Principal } from '../domain/types.js';
import type { Logger } from '../log.js';
import { requireScope } from '../app/principal.js';
import { errorHandler, sendError, validationError } from './errors.js';
import { inUserWords } from '../validation-messages.js';
import type { RouteDef } from './route.js';
import { jsonTooDeep } from '../json-depth.js';
import { unstorableTextInJson, unstorableTextMessage, type UnstorableText } from '../storable-text.js';

export interface HttpAppOptions {
  routes: RouteDef[];
  log: Logger;
  bodyLimit: string;
  /** Resolves a bearer API key to its principal; throws 401. */
  authenticate(key: string | undefined): Promise<Principal>;
  /**
   * Resolves the caller of an `apiKey` or `session` route from the whole
   * request (key or session cookie, CSRF, throttling). Without it, `apiKey`
   * routes use `authenticate` with the bearer key and `session` routes refuse.
   */
  authenticateRequest?(req: Request, kind: 'apiKey' | 'session'): Promise<Principal>;
  /** Checks the operator token; throws 401. */
  authenticateOperator(token: string | undefined): Promise<void>;
  /** Handlers mounted before the catch-all 404, for protocols that are not JSON routes (MCP, sandbox). */
  mounts?: { path: string; handler: RequestHandler }[];
  /** Handlers after every route and before the JSON 404: the dashboard's page fallback. */
  fallbacks?: RequestHandler[];
  /** Public base URL, for `Link` headers. */
  publicUrl?: string | undefined;
  /**
   * Told of every answered request. `route` is a template, never the raw path (a label must not take
   * arbitrary values): the route's path (`/v1/tickets/:ticketId`), a mount's path plus `/*`, `(web)` for
   * the dashboard's pages and files, `(unmatched)` for a 404 no route claimed.
   */
  observeRequest?(method: string, route: string, status: number, seconds: number): void;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The exact bytes of the body, for signature checks. */
    rawBody?: Buffer;
  }
}

export function bearerToken(req: Request): string | undefined {
  const h = req.headers.authorization;
  if (h === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}


/** A `details` entry for text no store keeps, shaped as a validation issue's. */
function textDetail(where: 'body', found: UnstorableText): { field: string; message: string; code: string } {
  return { field: [where, ...found.path.map(String)].join('.'), message: unstorableTextMessage(found, where), code: 'invalid_text' };
}

function decodeQueryName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

export function createHttpApp(opts: HttpAppOptions): Express {
  // Parsed per route, after authentication: a caller without access learns
  // nothing from how its body was judged.
  const jsonParserOf = (limit: string | number, checkText: boolean) =>
    express.json({
      limit,
      type: ['application/json', 'application/*+json'],
      verify: (req, _res, buf) => {
        // Checked before JSON.parse: nothing downstream recurses on a value deeper than this.
        if (jsonTooDeep(buf)) throw Object.assign(new Error('too deep'), { type: 'entity.too.deep' });
        const found = checkText ? unstorableTextInJson(buf) : null;
        if (found !== null) throw new AppError(400, 'validation_failed', unstorableTextMessage(found, 'body'), [textDetail('body', found)]);
        (req as Request).rawBody = buf;
      },
    });
  const jsonParser = jsonParserOf(opts.bodyLimit, true);
  // Routes that take larger bodies (files as base64), or check text themselves, get a parser of their own.
  const parsers = new Map<string, ReturnType<typeof jsonParserOf>>();
  const parseJson = (req: Request, res: Response, limit: number | undefined, checkText: boolean) => {
    let parser = jsonParser;
    if (limit !== undefined || !checkText) {
      const name = `${limit ?? opts.bodyLimit}:${checkText}`;
      parser = parsers.get(name) ?? jsonParserOf(limit ?? opts.bodyLimit, checkText);
      parsers.set(name, parser);
    }
    return new Promise<void>((resolve, reject) => parser(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      opts.log.info('request', {
        requestId,
        method: req.method,
        path: req.path,
        status: res.statusCode,
        ms,
        organizationId: res.locals.organizationId,
      });
      opts.observeRequest?.(req.method, (res.locals.routeTemplate as string | undefined) ?? '(unmatched)', res.statusCode, ms / 1000);
    });
    next();
  });
  // A NUL in the URL (`%00`) is refused before anything reads it: no id or filter holds one, and
  // PostgreSQL could not even compare with it.
  app.use((req, _res, next) => {
    const q = req.url.indexOf('?');
    const path = q === -1 ? req.url : req.url.slice(0, q);
    if (path.includes('%00')) return next(new AppError(404, 'not_found', 'no such resource: the path must not contain the NUL character (U+0000)'));
    if (q === -1 || !req.url.includes('%00', q)) return next();
    const pair = req.url.slice(q + 1).split('&').find((p) => p.includes('%00'))!;
    const rawName = pair.split('=')[0]!;
    const name = rawName.includes('%00') ? '(a parameter name)' : decodeQueryName(rawName);
    const message = `${name} must not contain the NUL character (U+0000)`;
    next(new AppError(400, 'validation_failed', message, [{ field: `query.${name}`, message, code: 'invalid_text' }]));
  });
  const named =
    (template: string, handler: RequestHandler): RequestHandler =>
    (req, res, next) => {
      res.locals.routeTemplate = template;
      handler(req, res, (err?: unknown) => {
        // Not claimed after all: whatever answers next names itself (or stays unmatched).
        if (err === undefined) res.locals.routeTemplate = undefined;
        next(err);
      });
    };

  for (const m of opts.mounts ?? []) app.use(m.path, named(`${m.path}/*`, m.handler));

  for (const route of opts.routes) {
    const serve = async (req: Request, res: Response) => {
      const log = opts.log.child({ requestId: res.locals.requestId });
      let principal: Principal | undefined;
      if (route.auth === 'apiKey' || route.auth === 'session') {
        if (opts.authenticateRequest) principal = await opts.authenticateRequest(req, route.auth);
        else if (route.auth === 'apiKey') principal = await opts.authenticate(bearerToken(req));
        else throw new AppError(401, 'not_signed_in', 'sign in first');
        res.locals.organizationId = principal.organizationId;
        if (route.scope) requireScope(principal, route.scope);
        if (route.preValidate) await route.preValidate({ principal, req, res });
      } else if (route.auth === 'operator') {
        await opts.authenticateOperator(bearerToken(req));
      }
      const params = route.params ? route.params.safeParse(req.params, { error: inUserWords }) : { success: true as const, data: req.params };
      if (!params.success) {
        // Still a 404 (no resource has such an id), but saying which id is malformed and why.
        const v = validationError(params.error, 'params');
        throw new AppError(404, 'not_found', `no such resource: ${v.message}`, v.details);
      }
      const query = route.query ? route.query.safeParse(req.query ?? {}, { error: inUserWords }) : { success: true as const, data: req.query };
      if (!query.success) throw validationError(query.error, 'query');
      let body: unknown = undefined;
      if (route.body) {
        const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
        if (hasBody && !req.is(['application/json', 'application/*+json'])) {
          throw new AppError(415, 'unsupported_media_type', 'send the body as application/json');
        }
        await parseJson(req, res, route.bodyLimit, route.keepsUnstorableText !== true);
        const parsed = route.body.safeParse(req.body ?? {}, { error: inUserWords });
        if (!parsed.success) throw validationError(parsed.error, 'body');
        body = parsed.data;
      }
      const result = await route.handler({
        body,
        query: query.data,
        params: params.data,
        principal: principal as Principal,
        req,
        res,
        log,
        requestId: res.locals.requestId as string,
      });
      for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v);
      if (result.body === undefined) res.status(result.status ?? 204).end();
      else if (Buffer.isBuffer(result.body)) res.status(result.status ?? 200).send(result.body);
      else res.status(result.status ?? 200).json(result.body);
    };
    app[route.method](route.path, async (req: Request, res: Response) => {
      res.locals.routeTemplate = route.path;
      // Set first, so that refusals carry them too.
      if (route.deprecated) {
        res.setHeader('Deprecation', 'true');
        res.setHeader('Link', `<${(opts.publicUrl ?? '').replace(/\/$/, '')}${route.deprecated.successor}>; rel="successor-version"`);
      }
      if (!route.opaqueFailures) return serve(req, res);
      try {
        await serve(req, res);
      } catch (err) {
        if (res.headersSent) return void res.destroy();
        if (!(err instanceof AppError)) opts.log.error('unhandled error', { err, method: req.method, path: req.path, requestId: res.locals.requestId });
        res.removeHeader('Retry-After');
        sendError(res, new AppError(500, 'internal_error', 'the request failed'));
      }
    });
  }

  for (const f of opts.fallbacks ?? []) app.use(named('(web)', f));
  app.use((_req, _res, next) => next(new AppError(404, 'not_found', 'no such endpoint')));
  app.use(errorHandler(opts.log));
  return app;
}
