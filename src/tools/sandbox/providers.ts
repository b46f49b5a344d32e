import { randomBytes } from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { SandboxProviderRecords } from '../../store/sandbox-providers/port.js';
import type { Logger } from '../../log.js';
import { googleError, type SandboxReply } from './google-errors.js';
import { SandboxIdentity } from './identity.js';
import { SandboxMailbox } from './mailbox.js';
import { SandboxCalendar } from './calendar.js';
import { SandboxPayments } from './payments.js';
import type { SandboxOutbound } from './outbound.js';
import type { Principal } from '../../domain/types.js';
import { isAppError } from '../../errors.js';

/** Where the sandbox providers are mounted on the service. */
export const SANDBOX_PROVIDERS_PATH = '/sandbox/providers';

export const GMAIL_SCOPE = 'https://www.googleapis.com/auth/gmail.modify';
export const CALENDAR_SCOPE = 'https://www.googleapis.com/auth/calendar';

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
  /** The redirect URIs registered for the service's OAuth client: `redirect_uri` must be one of them exactly. */
  redirectUris: () => string[];
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

  router(): Router {
    const r = Router();
    r.use(express.json({ limit: '25mb' }), express.urlencoded({ extended: true, limit: '1mb' }));
    r.use((_req, res, next) => {
      res.setHeader('x-sandbox-provider', 'true');
      next();
    });
    const send = (res: Response, out: SandboxReply) => {
      for (const [k, v] of Object.entries(out.headers ?? {})) res.setHeader(k, v);
      if (out.redirect !== undefined) return res.redirect(out.status, out.redirect);
      if (out.html !== undefined) return res.status(out.status).type('html').send(out.html);
      if (out.body === undefined) return res.status(out.status).end();
      res.status(out.status).json(out.body);
    };
    const fault = (target: FaultTarget) => (_req: Request, res: Response, next: NextFunction) => {
      const f = this.takeFault(target);
      if (f === undefined) return next();
      if (f.retryAfter !== undefined) res.setHeader('retry-after', String(f.retryAfter));
      if (f.garbage) return res.status(f.status).type('html').send('<html><body>502 Bad Gateway</body></html>');
      if (target === 'stripe') return res.status(f.status).json({ error: { type: f.status === 429 ? 'rate_limit_error' : f.status === 401 ? 'invalid_request_error' : 'api_error', message: `sandbox fault ${f.status}` } });
      if (target === 'token') return res.status(f.status).json({ error: f.status === 400 ? 'invalid_grant' : 'internal_failure', error_description: `sandbox fault ${f.status}` });
      send(res, googleError(f.status, `sandbox fault ${f.status}`));
    };
    const q = (req: Request) => req.query as Record<string, unknown>;
    const b = (req: Request) => (req.body ?? {}) as Record<string, unknown>;
    const wrap = (fn: (req: Request, res: Response) => Promise<SandboxReply> | SandboxReply) => async (req: Request, res: Response) => {
      try {
        send(res, await fn(req, res));
      } catch (err) {
        this.opts.log.error('sandbox provider failed', { err });
        send(res, googleError(500, 'Internal error'));
      }
    };

    // Identity provider (Google OAuth 2.0 shapes).
    const authPath = '/google/o/oauth2/v2/auth';
    r.get(authPath, wrap((req) => this.identity.authorize(q(req), `${this.opts.publicUrl()}${SANDBOX_PROVIDERS_PATH}${authPath}`, this.opts.redirectUris())));
    r.post(authPath, wrap((req) => this.identity.decide(b(req))));
    r.post('/google/token', fault('token'), wrap((req) => this.identity.token(b(req))));
    r.post('/google/revoke', wrap((req) => this.identity.revoke({ ...q(req), ...b(req) })));

    // Gmail API v1.
    const gmail = (fn: (email: string, req: Request) => Promise<SandboxReply> | SandboxReply) =>
      wrap((req) => {
        if (req.params.user !== 'me') return googleError(403, 'Delegation denied for the sandbox user');
        const who = this.identity.authenticate(req.headers.authorization, 'https://www.googleapis.com/auth/gmail');
        if (who === null) return googleError(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
        if (who === 'scope') return googleError(403, 'Request had insufficient authentication scopes.');
        return fn(who.email, req);
      });
    const g = '/google/gmail/v1/users/:user';
    r.get(`${g}/profile`, fault('gmail'), gmail((e) => this.mailbox.profile(e)));
    r.get(`${g}/messages`, fault('gmail'), gmail((e, req) => this.mailbox.list(e, q(req))));
    r.post(`${g}/messages/send`, fault('gmail'), gmail((e, req) => this.mailbox.send(e, b(req))));
    r.get(`${g}/messages/:id`, fault('gmail'), gmail((e, req) => this.mailbox.get(e, String(req.params.id), q(req))));
    r.post(`${g}/messages/:id/modify`, fault('gmail'), gmail((e, req) => this.mailbox.modify(e, String(req.params.id), b(req))));
    r.post(`${g}/drafts`, fault('gmail'), gmail((e, req) => this.mailbox.createDraft(e, b(req))));
    r.get(`${g}/labels`, fault('gmail'), gmail((e) => this.mailbox.labels(e)));

    // Google Calendar API v3.
    const cal = (fn: (email: string, req: Request) => Promise<SandboxReply> | SandboxReply) =>
      wrap((req) => {
        const who = this.identity.authenticate(req.headers.authorization, CALENDAR_SCOPE);
        if (who === null) return googleError(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
        if (who === 'scope') return googleError(403, 'Request had insufficient authentication scopes.');
        return fn(who.email, req);
      });
    const c = '/google/calendar/v3';
    r.get(`${c}/users/me/calendarList`, fault('calendar'), cal((e) => this.calendar.calendarList(e)));
    r.post(`${c}/freeBusy`, fault('calendar'), cal((e, req) => this.calendar.freeBusy(e, b(req))));
    r.get(`${c}/calendars/:cal/events`, fault('calendar'), cal((e, req) => this.calendar.list(e, String(req.params.cal), q(req))));
    r.post(`${c}/calendars/:cal/events`, fault('calendar'), cal((e, req) => this.calendar.insert(e, String(req.params.cal), b(req), q(req))));
    r.get(`${c}/calendars/:cal/events/:id`, fault('calendar'), cal((e, req) => this.calendar.get(e, String(req.params.cal), String(req.params.id), q(req))));
    r.patch(`${c}/calendars/:cal/events/:id`, fault('calendar'), cal((e, req) => this.calendar.patch(e, String(req.params.cal), String(req.params.id), b(req))));
    r.delete(`${c}/calendars/:cal/events/:id`, fault('calendar'), cal((e, req) => this.calendar.remove(e, String(req.params.cal), String(req.params.id))));

    // Stripe API.
    const stripe = (fn: (a: Parameters<SandboxPayments['account']>[0], req: Request) => Promise<SandboxReply> | SandboxReply) =>
      wrap(async (req) => {
        const a = await this.payments.authenticate(req.headers.authorization);
        if ('status' in a) return a;
        return fn(a, req);
      });
    const s = '/stripe/v1';
    r.get(`${s}/account`, fault('stripe'), stripe((a) => this.payments.account(a)));
    r.post(`${s}/checkout/sessions`, fault('stripe'), stripe((a, req) => this.payments.createSession(a, b(req), req.get('idempotency-key'))));
    r.get(`${s}/checkout/sessions/:id`, fault('stripe'), stripe((a, req) => this.payments.retrieve(a, String(req.params.id))));
    r.post(`${s}/checkout/sessions/:id/expire`, fault('stripe'), stripe((a, req) => this.payments.expire(a, String(req.params.id))));
    r.post(`${s}/webhook_endpoints`, fault('stripe'), stripe((a, req) => this.payments.createEndpoint(a, b(req))));
    r.delete(`${s}/webhook_endpoints/:id`, fault('stripe'), stripe((a, req) => this.payments.deleteEndpoint(a, String(req.params.id))));
    r.get('/stripe/pay/:id', wrap((req) => this.payments.checkoutPage(String(req.params.id), `${this.opts.publicUrl()}${SANDBOX_PROVIDERS_PATH}/stripe/pay/${encodeURIComponent(String(req.params.id))}`)));
    r.post('/stripe/pay/:id', wrap((req) => this.payments.pay(String(req.params.id), b(req))));

    // Sandbox-only controls.
    // Anyone could otherwise make an account and have the service's own origin redirect and deliver for it.
    r.post('/stripe/accounts', wrap(async (req) => {
      let principal: Principal;
      try {
        principal = await this.opts.authenticate(/^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1], req.ip);
      } catch (err) {
        if (!isAppError(err)) throw err;
        return { status: err.status, body: { success: false, error: { code: err.code, message: `${err.message} (creating a sandbox Stripe account needs an API key of your organization: Authorization: Bearer <key>)` } }, headers: { ...(err.status === 401 ? { 'www-authenticate': 'Bearer realm="switchboard"' } : {}), ...(err.retryAfterSeconds !== undefined ? { 'retry-after': String(err.retryAfterSeconds) } : {}) } };
      }
      return { status: 201, body: await this.payments.createAccount(typeof b(req).name === 'string' && b(req).name !== '' ? String(b(req).name) : 'Sandbox Shop', principal.organizationId) };
    }));
    r.post('/control/faults', wrap((req) => {
      const f = b(req);
      const target = String(f.target) as FaultTarget;
      const status = Number(f.status);
      if (!['token', 'gmail', 'calendar', 'stripe'].includes(target) || !Number.isInteger(status) || status < 200 || status > 599) return { status: 400, body: { error: 'target must be token, gmail, calendar or stripe; status an HTTP status' } };
      this.addFault({ target, status, count: Number.isInteger(Number(f.count)) && Number(f.count) > 0 ? Number(f.count) : 1, ...(f.retryAfter !== undefined ? { retryAfter: Number(f.retryAfter) } : {}), ...(f.garbage === true || f.garbage === 'true' ? { garbage: true } : {}) });
      return { status: 204 };
    }));
    r.post('/control/google/users/:email/expire-tokens', wrap((req) => ({ status: 200, body: { expired: this.identity.expireAccessTokens(String(req.params.email).toLowerCase()) } })));
    r.post('/control/google/users/:email/revoke', wrap(async (req) => ({ status: 200, body: { revoked: await this.identity.revokeUser(String(req.params.email).toLowerCase()) } })));
    r.get('/control/stats', wrap(() => ({ status: 200, body: { refreshGrants: this.identity.refreshGrants } })));

    r.use((req, res) => send(res, googleError(404, `The sandbox providers have no ${req.method} ${req.path}`)));
    r.use((_err: unknown, _req: Request, res: Response, _next: NextFunction) => send(res, googleError(400, 'The request body could not be read')));
    return r;
  }
}
