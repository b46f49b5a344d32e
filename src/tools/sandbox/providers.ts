import { randomBytes } from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { SandboxProviderRecords } from '../../store/sandbox-providers/port.js';
import type { Logger } from '../../log.js';
import { googleError, type SandboxReply } from './google-errors.js';
import { SandboxIdentity } from './identity.js';
import { SandboxMailbox } from './mailbox.js';
import { SandboxCalendar } from './calendar.js';
import { SandboxPayments, STRIPE_API_VERSION, stripeError, stripeRequestId, type StripeAccount } from './payments.js';
import type { SandboxOutbound } from './outbound.js';
import type { Principal } from '../../domain/types.js';
import { isAppError } from '../../errors.js';
import { unstorableText, unstorableTextMessage } from '../../storable-text.js';

/** Text in the request no store keeps (U+0000, an unpaired surrogate), said as a validation message; null when there is none. */
function unstorableIn(req: Request): string | null {
  const found = unstorableText({ body: req.body as unknown, query: req.query, params: req.params });
  return found === null ? null : unstorableTextMessage(found, 'body');
}

/** Where the sandbox providers are mounted on the service. */
export const SANDBOX_PROVIDERS_PATH = '/sandbox/providers';

export const GMAIL_SCOPE = 'https://www.googleapis.com/auth/gmail.modify';
export const CALENDAR_SCOPE = 'https://www.googleapis.com/auth/calendar';

const q = (req: Request) => req.query as Record<string, unknown>;
const b = (req: Request) => (req.body ?? {}) as Record<string, unknown>;

export type FaultTarget = 'token' | 'gmail' | 'calendar' | 'stripe';

/** A failure the sandbox answers with instead of the next `count` requests to one API (sandbox control, for tests and demos). */
export interface Fault {
  target: FaultTarget;
  status: number;
  count: number;
  retryAfter?: number;
  /** Answer with a body that is not JSON. */
  garbage?: boolean;
}

export interface SandboxProvidersOptions {
  /** Their own records: a database of their own embedded, the node's PostgreSQL clustered. */
  records: SandboxProviderRecords;
  log: Logger;
  /** The base URL people's browsers reach this service under (consent and checkout pages). */
  publicUrl: () => string;
  /** The redirect URIs registered for the service's OAuth client: `redirect_uri` must be one of them exactly, or a loopback one (a developer's program). */
  redirectUris: () => string[];
  /** Where the service itself answers (public and own URLs): no loopback redirect may point there. */
  serviceOrigins?: () => string[];
  /** An API key of an organization of the service (for creating a sandbox Stripe account); throws an AppError. */
  authenticate(key: string | undefined, address?: string): Promise<Principal>;
  /** Where the sandbox may send requests (webhook deliveries), through the address guard. */
  outbound: SandboxOutbound;
  tokenTtlSeconds: number;
}

/**
 * Every sandbox provider of connected tools, on one db: the identity
 * provider (Google OAuth shapes), the mailbox (Gmail API), the calendar
 * (Calendar API) and payments (Stripe API), served over HTTP under
 * `/sandbox/providers` so the production adapters reach them as they reach
 * the real services. Each answer carries `x-sandbox-provider: true`.
 */
export class SandboxProviders {
  readonly identity: SandboxIdentity;
  readonly mailbox: SandboxMailbox;
  readonly calendar: SandboxCalendar;
  readonly payments: SandboxPayments;
  private faults: Fault[] = [];

  /**
   * The providers on their records. The OAuth client secret is made once and
   * kept with them (the first node to start makes it, the others read it);
   * the service reads it from here (same process) or SANDBOX_TOOLS_URL's
   * operator config.
   */
  static async open(opts: SandboxProvidersOptions): Promise<SandboxProviders> {
    await opts.records.putIfAbsent('sbClient', 'secret', randomBytes(24).toString('base64url'));
    const secret = await opts.records.get<string>('sbClient', 'secret');
    if (secret === undefined) throw new Error('the sandbox providers\' client secret could not be stored');
    return new SandboxProviders(opts, secret);
  }

  private constructor(
    private readonly opts: SandboxProvidersOptions,
    clientSecret: string,
  ) {
    this.mailbox = new SandboxMailbox(opts.records);
    this.calendar = new SandboxCalendar(opts.records, opts.publicUrl);
    this.payments = new SandboxPayments(opts.records, opts.publicUrl, opts.log, opts.outbound);
    this.identity = new SandboxIdentity(opts.records, clientSecret, opts.tokenTtlSeconds, async (email) => {
      await this.mailbox.seed(email);
      await this.calendar.seed(email);
    });
  }

  /** The redirect URIs registered for the sandbox OAuth client (besides loopback ones, which any port may use). */
  registeredRedirectUris(): string[] {
    return this.opts.redirectUris();
  }

  addFault(f: Fault): void {
    this.faults.push(f);
  }

  private takeFault(target: FaultTarget): Fault | undefined {
    const f = this.faults.find((x) => x.target === target && x.count > 0);
    if (f === undefined) return undefined;
    f.count--;
    this.faults = this.faults.filter((x) => x.count > 0);
    return f;
  }

  /** Parses bodies (JSON, form) and marks every answer as the sandbox's. */
  private base(): Router {
    const r = Router();
    r.use(express.json({ limit: '25mb' }), express.urlencoded({ extended: true, limit: '1mb' }));
    r.use((_req, res, next) => {
      res.setHeader('x-sandbox-provider', 'true');
      next();
    });
    return r;
  }

  private send(res: Response, out: SandboxReply): void {
    for (const [k, v] of Object.entries(out.headers ?? {})) res.setHeader(k, v);
    if (out.redirect !== undefined) return res.redirect(out.status, out.redirect);
    if (out.html !== undefined) return void res.status(out.status).type('html').send(out.html);
    if (out.body === undefined) return void res.status(out.status).end();
    res.status(out.status).json(out.body);
  }

  private fault(target: FaultTarget) {
    return (_req: Request, res: Response, next: NextFunction) => {
      const f = this.takeFault(target);
      if (f === undefined) return next();
      if (f.retryAfter !== undefined) res.setHeader('retry-after', String(f.retryAfter));
      if (f.garbage) return res.status(f.status).type('html').send('<html><body>502 Bad Gateway</body></html>');
      if (target === 'stripe') return this.send(res, stripeError(f.status, `sandbox fault ${f.status}`, { type: f.status === 429 ? 'rate_limit_error' : f.status === 401 ? 'invalid_request_error' : 'api_error' }));
      if (target === 'token') return res.status(f.status).json({ error: f.status === 400 ? 'invalid_grant' : 'internal_failure', error_description: `sandbox fault ${f.status}` });
      this.send(res, googleError(f.status, `sandbox fault ${f.status}`));
    };
  }

  /**
   * Runs a handler; a failure becomes the provider's own 500 (`failed`).
   * Text the sandbox's records cannot keep is the provider's own 400
   * (`refused`): the records are in PostgreSQL when clustered.
   */
  private wrap(
    fn: (req: Request, res: Response) => Promise<SandboxReply> | SandboxReply,
    failed: () => SandboxReply = () => googleError(500, 'Internal error'),
    refused: (message: string) => SandboxReply = (m) => googleError(400, m),
  ) {
    return async (req: Request, res: Response) => {
      const unstorable = unstorableIn(req);
      if (unstorable !== null) return this.send(res, refused(unstorable));
      try {
        this.send(res, await fn(req, res));
      } catch (err) {
        this.opts.log.error('sandbox provider failed', { err });
        this.send(res, failed());
      }
    };
  }

  /** Google's OAuth 2.0 endpoints at `/o/oauth2/v2/auth`, `/token`, `/revoke` of `r`; `authUrl` is where the consent page posts back. */
  private oauthRoutes(r: Router, authUrl: () => string): void {
    const authPath = '/o/oauth2/v2/auth';
    // Google's OAuth endpoints refuse a malformed request with `invalid_request`.
    const refused = (m: string): SandboxReply => ({ status: 400, body: { error: 'invalid_request', error_description: m } });
    const failed = () => googleError(500, 'Internal error');
    r.get(authPath, this.wrap((req) => this.identity.authorize(q(req), authUrl(), this.opts.redirectUris(), this.opts.serviceOrigins?.() ?? []), failed, refused));
    r.post(authPath, this.wrap((req) => this.identity.decide(b(req)), failed, refused));
    r.post('/token', this.fault('token'), this.wrap((req) => this.identity.token(b(req)), failed, refused));
    r.post('/revoke', this.wrap((req) => this.identity.revoke({ ...q(req), ...b(req) }), failed, refused));
  }

  /** Gmail API v1 (`/gmail/v1/…`) and Calendar API v3 (`/calendar/v3/…`) on `r`. */
  private googleApiRoutes(r: Router): void {
    const authFailure = (who: null | 'scope'): SandboxReply =>
      who === null ? googleError(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.') : googleError(403, 'Request had insufficient authentication scopes.');
    const gmail = (fn: (email: string, req: Request) => Promise<SandboxReply> | SandboxReply) =>
      this.wrap((req) => {
        if (req.params.user !== 'me') return googleError(403, 'Delegation denied for the sandbox user');
        const who = this.identity.authenticate(req.headers.authorization, 'https://www.googleapis.com/auth/gmail');
        if (who === null || who === 'scope') return authFailure(who);
        return fn(who.email, req);
      });
    const g = '/gmail/v1/users/:user';
    const fg = this.fault('gmail');
    r.get(`${g}/profile`, fg, gmail((e) => this.mailbox.profile(e)));
    r.get(`${g}/messages`, fg, gmail((e, req) => this.mailbox.list(e, q(req))));
    r.post(`${g}/messages/send`, fg, gmail((e, req) => this.mailbox.send(e, b(req))));
    r.get(`${g}/messages/:id`, fg, gmail((e, req) => this.mailbox.get(e, String(req.params.id), q(req))));
    r.get(`${g}/messages/:id/attachments/:attachmentId`, fg, gmail((e, req) => this.mailbox.attachment(e, String(req.params.id), String(req.params.attachmentId))));
    r.post(`${g}/messages/:id/modify`, fg, gmail((e, req) => this.mailbox.modify(e, String(req.params.id), b(req))));
    r.get(`${g}/threads/:id`, fg, gmail((e, req) => this.mailbox.thread(e, String(req.params.id), q(req))));
    r.post(`${g}/drafts`, fg, gmail((e, req) => this.mailbox.createDraft(e, b(req))));
    r.get(`${g}/labels`, fg, gmail((e) => this.mailbox.labels(e)));

    const cal = (fn: (email: string, req: Request) => Promise<SandboxReply> | SandboxReply) =>
      this.wrap((req) => {
        const who = this.identity.authenticate(req.headers.authorization, CALENDAR_SCOPE);
        if (who === null || who === 'scope') return authFailure(who);
        return fn(who.email, req);
      });
    const c = '/calendar/v3';
    const fc = this.fault('calendar');
    r.get(`${c}/users/me/calendarList`, fc, cal((e) => this.calendar.calendarList(e)));
    r.post(`${c}/freeBusy`, fc, cal((e, req) => this.calendar.freeBusy(e, b(req))));
    r.get(`${c}/calendars/:cal/events`, fc, cal((e, req) => this.calendar.list(e, String(req.params.cal), q(req))));
    r.post(`${c}/calendars/:cal/events`, fc, cal((e, req) => this.calendar.insert(e, String(req.params.cal), b(req), q(req))));
    r.get(`${c}/calendars/:cal/events/:id`, fc, cal((e, req) => this.calendar.get(e, String(req.params.cal), String(req.params.id), q(req))));
    r.patch(`${c}/calendars/:cal/events/:id`, fc, cal((e, req) => this.calendar.patch(e, String(req.params.cal), String(req.params.id), b(req))));
    r.delete(`${c}/calendars/:cal/events/:id`, fc, cal((e, req) => this.calendar.remove(e, String(req.params.cal), String(req.params.id))));
  }

  /** Stripe's API (`/v1/…`) on `r`, every answer with a `Request-Id`, unknown paths in Stripe's error shape. */
  private stripeApiRoutes(r: Router): void {
    r.use((req, res, next) => {
      res.setHeader('request-id', stripeRequestId());
      res.setHeader('stripe-version', req.get('stripe-version') ?? STRIPE_API_VERSION);
      next();
    });
    const failed = () => stripeError(500, 'An unknown error occurred', { type: 'api_error' });
    const stripe = (fn: (a: StripeAccount, req: Request) => Promise<SandboxReply> | SandboxReply) =>
      this.wrap(async (req) => {
        const a = await this.payments.authenticate(req.headers.authorization);
        if ('status' in a) return a;
        return fn(a, req);
      }, failed, (m) => stripeError(400, m, { type: 'invalid_request_error' }));
    const fs = this.fault('stripe');
    const id = (req: Request) => String(req.params.id);
    r.get('/v1/account', fs, stripe((a) => this.payments.account(a)));
    r.post('/v1/checkout/sessions', fs, stripe((a, req) => this.payments.createSession(a, b(req), req.get('idempotency-key'))));
    r.get('/v1/checkout/sessions', fs, stripe((a, req) => this.payments.listSessions(a, q(req))));
    r.get('/v1/checkout/sessions/:id', fs, stripe((a, req) => this.payments.retrieve(a, id(req))));
    r.post('/v1/checkout/sessions/:id/expire', fs, stripe((a, req) => this.payments.expire(a, id(req))));
    r.get('/v1/payment_intents/:id', fs, stripe((a, req) => this.payments.paymentIntent(a, id(req))));
    r.post('/v1/refunds', fs, stripe((a, req) => this.payments.createRefund(a, b(req), req.get('idempotency-key'), String(req.res?.getHeader('request-id') ?? ''))));
    r.get('/v1/refunds', fs, stripe((a, req) => this.payments.listRefunds(a, q(req))));
    r.get('/v1/refunds/:id', fs, stripe((a, req) => this.payments.refund(a, id(req))));
    r.get('/v1/events', fs, stripe((a, req) => this.payments.listEvents(a, q(req))));
    r.get('/v1/events/:id', fs, stripe((a, req) => this.payments.event(a, id(req))));
    r.post('/v1/webhook_endpoints', fs, stripe((a, req) => this.payments.createEndpoint(a, b(req))));
    r.get('/v1/webhook_endpoints', fs, stripe((a, req) => this.payments.listEndpoints(a, q(req))));
    r.get('/v1/webhook_endpoints/:id', fs, stripe((a, req) => this.payments.endpoint(a, id(req))));
    r.delete('/v1/webhook_endpoints/:id', fs, stripe((a, req) => this.payments.deleteEndpoint(a, id(req))));
  }

  private stripeFallbacks(r: Router): void {
    r.use((req, res) => this.send(res, stripeError(404, `Unrecognized request URL (${req.method}: ${req.originalUrl.split('?')[0]}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`)));
    r.use((_err: unknown, _req: Request, res: Response, _next: NextFunction) => this.send(res, stripeError(400, 'Invalid request: the body could not be read.')));
  }

  private googleFallbacks(r: Router): void {
    r.use((req, res) => this.send(res, googleError(404, `The requested URL ${req.originalUrl.split('?')[0]} was not found on this server.`)));
    r.use((_err: unknown, _req: Request, res: Response, _next: NextFunction) => this.send(res, googleError(400, 'Invalid JSON payload received.')));
  }

  /** The Google APIs at the root of an origin of their own: googleapis' `rootUrl`. */
  googleApisRouter(): Router {
    const r = this.base();
    this.googleApiRoutes(r);
    this.googleFallbacks(r);
    return r;
  }

  /** Google's OAuth endpoints at the root of an origin of their own (`baseUrl`, where the consent page posts back). */
  googleOAuthRouter(baseUrl: () => string): Router {
    const r = this.base();
    this.oauthRoutes(r, () => `${baseUrl()}/o/oauth2/v2/auth`);
    this.googleFallbacks(r);
    return r;
  }

  /** Stripe's API at the root of an origin of its own: the `stripe` client's `host`/`port`/`protocol`. */
  stripeRouter(): Router {
    const r = this.base();
    this.stripeApiRoutes(r);
    this.stripeFallbacks(r);
    return r;
  }

  /**
   * Everything under `/sandbox/providers` of the service (how the service's
   * own adapters reach the sandbox): `/google/…` (OAuth and APIs),
   * `/stripe/…` (API, checkout pages, account sign-up), `/control/…`.
   */
  router(): Router {
    const r = this.base();
    const google = Router();
    this.oauthRoutes(google, () => `${this.opts.publicUrl()}${SANDBOX_PROVIDERS_PATH}/google/o/oauth2/v2/auth`);
    this.googleApiRoutes(google);
    this.googleFallbacks(google);
    r.use('/google', google);

    const stripe = Router();
    stripe.get('/pay/:id', this.wrap((req) => this.payments.checkoutPage(String(req.params.id), `${this.opts.publicUrl()}${SANDBOX_PROVIDERS_PATH}/stripe/pay/${encodeURIComponent(String(req.params.id))}`)));
    stripe.post('/pay/:id', this.wrap((req) => this.payments.pay(String(req.params.id), b(req))));
    // Sandbox-only: anyone could otherwise make an account and have the service's own origin redirect and deliver for it.
    stripe.post('/accounts', this.wrap(async (req) => {
      let principal: Principal;
      try {
        principal = await this.opts.authenticate(/^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1], req.ip);
      } catch (err) {
        if (!isAppError(err)) throw err;
        return { status: err.status, body: { success: false, error: { code: err.code, message: `${err.message} (creating a sandbox Stripe account needs an API key of your organization: Authorization: Bearer <key>)` } }, headers: { ...(err.status === 401 ? { 'www-authenticate': 'Bearer realm="switchboard"' } : {}), ...(err.retryAfterSeconds !== undefined ? { 'retry-after': String(err.retryAfterSeconds) } : {}) } };
      }
      return { status: 201, body: await this.payments.createAccount(typeof b(req).name === 'string' && b(req).name !== '' ? String(b(req).name) : 'Sandbox Shop', principal.organizationId) };
    }));
    this.stripeApiRoutes(stripe);
    this.stripeFallbacks(stripe);
    r.use('/stripe', stripe);

    // Sandbox-only controls.
    r.post('/control/faults', this.wrap((req) => {
      const f = b(req);
      const target = String(f.target) as FaultTarget;
      const status = Number(f.status);
      if (!['token', 'gmail', 'calendar', 'stripe'].includes(target) || !Number.isInteger(status) || status < 200 || status > 599) return { status: 400, body: { error: 'target must be token, gmail, calendar or stripe; status an HTTP status' } };
      this.addFault({ target, status, count: Number.isInteger(Number(f.count)) && Number(f.count) > 0 ? Number(f.count) : 1, ...(f.retryAfter !== undefined ? { retryAfter: Number(f.retryAfter) } : {}), ...(f.garbage === true || f.garbage === 'true' ? { garbage: true } : {}) });
      return { status: 204 };
    }));
    r.post('/control/google/users/:email/expire-tokens', this.wrap((req) => ({ status: 200, body: { expired: this.identity.expireAccessTokens(String(req.params.email).toLowerCase()) } })));
    r.post('/control/google/users/:email/revoke', this.wrap(async (req) => ({ status: 200, body: { revoked: await this.identity.revokeUser(String(req.params.email).toLowerCase()) } })));
    r.get('/control/stats', this.wrap(() => ({ status: 200, body: { refreshGrants: this.identity.refreshGrants } })));

    this.googleFallbacks(r);
    return r;
  }
}
