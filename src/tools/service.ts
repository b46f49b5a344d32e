import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Principal } from '../domain/types.js';
import type { ApiKeyCredentials, ConnectedIntegrationId, OAuthCredentials, PaymentEvent, ToolCredentials, ToolRecord, ToolStatus } from '../domain/tools.js';
import { AppError, badRequest } from '../errors.js';
import type { Logger } from '../log.js';
import type { ToolRepo } from '../store/tools/port.js';
import { GoogleOAuthClient, InvalidGrant, pkcePair, type GoogleOAuthEndpoints } from './providers/google-oauth.js';
import { GmailClient } from './providers/gmail.js';
import { CalendarClient } from './providers/gcal.js';
import { StripeClient, verifyStripeSignature } from './providers/stripe.js';
import { credentialsRefused, ProviderUnauthorized } from './providers/http.js';
import { CALENDAR_SCOPE, GMAIL_SCOPE, SANDBOX_CLIENT_ID, type SandboxProviders } from './sandbox/index.js';
import { ToolSession, type ToolAccess } from './session.js';
import { storableCopy } from '../storable-text.js';

export const OAUTH_CALLBACK_PATH = '/v1/tools/oauth/callback';
export const paymentWebhookPath = (toolId: string) => `/v1/tools/${toolId}/payment-webhook`;

/** Refreshed this long before the provider says the access token expires. */
const REFRESH_MARGIN_MS = 60_000;
/** A refresh holds the lock at most this long (a node that dies mid-refresh frees it by then). */
const REFRESH_LOCK_MS = 15_000;
/** lastUsedAt is written at most this often per tool. */
const TOUCH_EVERY_MS = 60_000;

const PROVIDER_NAMES = { email: 'Gmail', calendar: 'Google Calendar', payment: 'Stripe' } as const;

export interface ToolServiceConfig {
  GOOGLE_CLIENT_ID?: string | undefined;
  GOOGLE_CLIENT_SECRET?: string | undefined;
  GOOGLE_AUTH_URL: string;
  GOOGLE_TOKEN_URL: string;
  GOOGLE_REVOKE_URL: string;
  GMAIL_API_BASE_URL: string;
  GOOGLE_CALENDAR_API_BASE_URL: string;
  STRIPE_API_BASE_URL: string;
  TOOLS_ALLOWED_RETURN_ORIGINS: string[];
  TOOLS_OAUTH_STATE_TTL_MS: number;
  TOOLS_HTTP_TIMEOUT_MS: number;
}

export interface ToolServiceOptions {
  repo: ToolRepo;
  log: Logger;
  clock: Clock;
  config: ToolServiceConfig;
  /** The sandbox providers served by this process (their OAuth client secret is read from them); null when off. */
  sandbox: SandboxProviders | null;
  /** Base URL of the sandbox providers (`…/sandbox/providers`) as the adapters reach them. */
  sandboxUrl: () => string;
}

export interface ConnectInput {
  name: string;
  return_url?: string | undefined;
  /** Re-authorize this existing tool (same id and MCP URL) instead of creating one. */
  tool_id?: string | undefined;
  data?: { api_key: string; webhook_secret?: string | undefined; return_url?: string | undefined; merchant_name?: string | undefined } | undefined;
}

export type CallbackOutcome = { redirect: string } | { page: { title: string; message: string; status: 200 | 400 } };

const isOAuth = (i: ConnectedIntegrationId) => i === 'email' || i === 'calendar';

/**
 * Connected tools: connect (OAuth sign-in or an API key), the sign-in
 * callback, list/get/delete, the provider webhooks, and the credentials the
 * MCP tools act with.
 *
 * Guarantees:
 * - A tool is only usable (`session`) while `active`, and only by its organization.
 * - Access tokens are refreshed 60 s before expiry and once after a 401; a
 *   refresh runs under a store lock, so concurrent calls on any number of
 *   nodes refresh once and the others use its result. The old refresh token
 *   is kept when the provider sends none. Only `invalid_grant` marks the
 *   tool `reauthorization_required`.
 * - A sign-in's `state` is single use, expires, and is bound to the
 *   organization and the tool: a forged, replayed or expired one changes
 *   nothing.
 * - Credentials never leave this class except to the provider; errors and
 *   logs never carry them.
 */
export class ToolService implements ToolAccess {
  readonly gmail: { google: GmailClient; sandbox: GmailClient };
  readonly calendar: { google: CalendarClient; sandbox: CalendarClient };
  readonly stripe: { stripe: StripeClient; sandbox: StripeClient };
  private readonly oauth: { google: GoogleOAuthClient; sandbox: GoogleOAuthClient };
  private readonly touched = new Map<string, number>();

  constructor(private readonly opts: ToolServiceOptions) {
    const c = opts.config;
    const t = c.TOOLS_HTTP_TIMEOUT_MS;
    const sb = () => opts.sandboxUrl().replace(/\/+$/, '');
    this.gmail = { google: new GmailClient(() => c.GMAIL_API_BASE_URL, t), sandbox: new GmailClient(() => `${sb()}/google`, t) };
    this.calendar = { google: new CalendarClient(() => c.GOOGLE_CALENDAR_API_BASE_URL, t), sandbox: new CalendarClient(() => `${sb()}/google`, t) };
    this.stripe = { stripe: new StripeClient(() => c.STRIPE_API_BASE_URL, t), sandbox: new StripeClient(() => `${sb()}/stripe`, t) };
    const google = (): GoogleOAuthEndpoints => {
      if (!c.GOOGLE_CLIENT_ID || !c.GOOGLE_CLIENT_SECRET) throw new AppError(503, 'integration_unavailable', 'Google sign-in is not configured on this deployment (GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET)');
      return { authUrl: c.GOOGLE_AUTH_URL, tokenUrl: c.GOOGLE_TOKEN_URL, revokeUrl: c.GOOGLE_REVOKE_URL, clientId: c.GOOGLE_CLIENT_ID, clientSecret: c.GOOGLE_CLIENT_SECRET };
    };
    const sandbox = (): GoogleOAuthEndpoints => {
      if (opts.sandbox === null) throw new AppError(409, 'sandbox_disabled', 'this tool is on the sandbox providers, which are off on this deployment');
      return { authUrl: `${sb()}/google/o/oauth2/v2/auth`, tokenUrl: `${sb()}/google/token`, revokeUrl: `${sb()}/google/revoke`, clientId: SANDBOX_CLIENT_ID, clientSecret: opts.sandbox.identity.clientSecret };
    };
    this.oauth = { google: new GoogleOAuthClient(google, t), sandbox: new GoogleOAuthClient(sandbox, t) };
  }

  private oauthFor(tool: ToolRecord): GoogleOAuthClient {
    return tool.provider === 'sandbox' ? this.oauth.sandbox : this.oauth.google;
  }

  private stripeFor(tool: ToolRecord): StripeClient {
    return tool.provider === 'sandbox' ? this.stripe.sandbox : this.stripe.stripe;
  }

  // ---- return URLs

  async allowedReturnOrigins(): Promise<string[]> {
    return [...new Set([...this.opts.config.TOOLS_ALLOWED_RETURN_ORIGINS, ...(await this.opts.repo.returnOrigins())])].sort();
  }

  /** The origin of a URL as the allow-list holds it; throws 400 for anything but an absolute http(s) URL. */
  static originOf(url: string, field: string): string {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw badRequest('validation_failed', `${field} must be an absolute URL`, [{ field, message: 'must be an absolute http(s) URL' }]);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw badRequest('validation_failed', `${field} must be an http(s) URL`, [{ field, message: 'must be an absolute http(s) URL' }]);
    return u.origin.toLowerCase();
  }

  private async checkReturnUrl(url: string | undefined, field: string): Promise<void> {
    if (url === undefined) return;
    const origin = ToolService.originOf(url, field);
    if (!(await this.allowedReturnOrigins()).includes(origin)) {
      throw new AppError(400, 'return_url_not_allowed', `${field}: the origin ${origin} is not allowed by the operator (TOOLS_ALLOWED_RETURN_ORIGINS, or: npm run admin -- tools allow-origin --origin ${origin})`, [{ field, message: `origin ${origin} is not allowed` }]);
    }
  }

  // ---- connect

  /**
   * Creates (or, with `tool_id`, re-authorizes) a tool. OAuth integrations
   * answer with `redirectUrl`; payment checks the API key at the provider
   * first, so a tool with a refused key is never stored.
   */
  async connect(principal: Principal, integration: ConnectedIntegrationId, input: ConnectInput, serviceBaseUrl: string): Promise<{ tool: ToolRecord; redirectUrl?: string }> {
    await this.checkReturnUrl(input.return_url, 'return_url');
    const now = new Date(this.opts.clock.now()).toISOString();
    let existing: ToolRecord | null = null;
    if (input.tool_id !== undefined) {
      existing = await this.opts.repo.get(principal.organizationId, input.tool_id);
      if (existing === null) throw new AppError(404, 'not_found', `tool ${input.tool_id} not found`);
      if (existing.integration !== integration) throw badRequest('validation_failed', `tool ${input.tool_id} is a ${existing.integration} tool, not ${integration}`, [{ field: 'tool_id', message: `belongs to the ${existing.integration} integration` }]);
    }
    if (isOAuth(integration)) {
      if (input.data !== undefined) throw badRequest('validation_failed', `the ${integration} integration signs in through redirect_url and takes no data`, [{ field: 'data', message: 'not accepted for this integration' }]);
      const provider = this.opts.config.GOOGLE_CLIENT_ID ? 'google' : this.opts.sandbox !== null ? 'sandbox' : null;
      if (provider === null) throw new AppError(503, 'integration_unavailable', `the ${integration} integration needs GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET on this deployment (or the sandbox providers)`);
      const tool: ToolRecord = existing
        ? { ...existing, name: input.name, status: 'pending_authorization', statusReason: 'waiting for the user to sign in at redirect_url', returnUrl: input.return_url ?? null, provider, updatedAt: now }
        : {
            id: `tool_${randomBytes(12).toString('base64url')}`,
            organizationId: principal.organizationId,
            integration,
            name: input.name,
            status: 'pending_authorization',
            statusReason: 'waiting for the user to sign in at redirect_url',
            provider,
            account: null,
            returnUrl: input.return_url ?? null,
            createdByKeyId: principal.keyId,
            createdAt: now,
            updatedAt: now,
            lastUsedAt: null,
          };
      if (existing) await this.opts.repo.update(tool);
      else await this.opts.repo.create(tool, null);
      const pkce = pkcePair();
      const state = randomBytes(24).toString('base64url');
      const redirectUri = `${serviceBaseUrl.replace(/\/+$/, '')}${OAUTH_CALLBACK_PATH}`;
      await this.opts.repo.putState({ state, organizationId: tool.organizationId, toolId: tool.id, codeVerifier: pkce.verifier, redirectUri, expiresAt: Date.now() + this.opts.config.TOOLS_OAUTH_STATE_TTL_MS });
      const redirectUrl = this.oauthFor(tool).authorizeUrl({ redirectUri, scopes: [integration === 'email' ? GMAIL_SCOPE : CALENDAR_SCOPE], state, codeChallenge: pkce.challenge });
      return { tool, redirectUrl };
    }
    // Payment: an API key in the body.
    const data = input.data;
    if (data === undefined) throw badRequest('validation_failed', 'the payment integration needs data.api_key', [{ field: 'data.api_key', message: 'required' }]);
    await this.checkReturnUrl(data.return_url, 'data.return_url');
    const provider = this.opts.sandbox !== null && data.api_key.startsWith('sk_test_sbx_') ? 'sandbox' : 'stripe';
    const probe = { provider } as ToolRecord;
    let account: { id: string; displayName: string | null };
    try {
      account = await this.stripeFor(probe).account(data.api_key);
    } catch (err) {
      if (err instanceof ProviderUnauthorized) throw badRequest('invalid_api_key', 'Stripe refused data.api_key (401): check the secret key (sk_live_… / sk_test_… or a restricted rk_ key)', [{ field: 'data.api_key', message: 'refused by Stripe' }]);
      throw err;
    }
    const id = existing?.id ?? `tool_${randomBytes(12).toString('base64url')}`;
    const creds: ApiKeyCredentials = { kind: 'api_key', apiKey: data.api_key, webhookSecret: data.webhook_secret ?? null, webhookEndpointId: null, returnUrl: data.return_url ?? null, merchantName: data.merchant_name ?? account.displayName };
    const tool: ToolRecord = {
      id,
      organizationId: principal.organizationId,
      integration,
      name: input.name,
      status: 'active',
      statusReason: null,
      provider,
      account: data.merchant_name ?? account.displayName ?? account.id,
      returnUrl: input.return_url ?? null,
      createdByKeyId: existing?.createdByKeyId ?? principal.keyId,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
      lastUsedAt: existing?.lastUsedAt ?? null,
    };
    if (existing) {
      await this.revokeAtProvider(existing);
      await this.opts.repo.update(tool);
      await this.opts.repo.putCredentials(id, creds);
    } else await this.opts.repo.create(tool, creds);
    if (creds.webhookSecret === null) {
      // Without a secret of the user's own, register an endpoint for this tool: its secret comes back once, here.
      try {
        const ep = await this.stripeFor(tool).createWebhookEndpoint(data.api_key, `${serviceBaseUrl.replace(/\/+$/, '')}${paymentWebhookPath(id)}`, ['checkout.session.completed', 'checkout.session.expired']);
        if (!(await this.opts.repo.putCredentials(id, { ...creds, webhookSecret: ep.secret, webhookEndpointId: ep.id }))) await this.stripeFor(tool).deleteWebhookEndpoint(data.api_key, ep.id).catch(() => {});
      } catch (err) {
        this.opts.log.warn('payment tool: could not register a webhook endpoint; payment status is read from the provider instead', { toolId: id, code: err instanceof AppError ? err.code : 'error' });
      }
    }
    return { tool: (await this.opts.repo.get(principal.organizationId, id)) ?? tool };
  }

  // ---- the OAuth callback

  /** Where the user goes after the identity provider: back to the return URL with `tool_id` and `status`, or a page saying how it went. */
  async callback(q: { state?: string | undefined; code?: string | undefined; error?: string | undefined }): Promise<CallbackOutcome> {
    if (!q.state) throw badRequest('invalid_state', 'the sign-in callback came without state; start again with connect');
    const st = await this.opts.repo.takeState(q.state, Date.now());
    if (st === null) throw badRequest('invalid_state', 'this sign-in link is unknown, was already used, or expired; start again with connect');
    const tool = await this.opts.repo.get(st.organizationId, st.toolId);
    if (tool === null) throw badRequest('invalid_state', 'the tool this sign-in was for was deleted; connect again');
    const finish = async (status: ToolStatus, reason: string | null, account?: string): Promise<CallbackOutcome> => {
      const next: ToolRecord = { ...tool, status, statusReason: reason, account: account ?? tool.account, updatedAt: new Date(this.opts.clock.now()).toISOString() };
      await this.opts.repo.update(next);
      if (tool.returnUrl !== null) {
        const u = new URL(tool.returnUrl);
        u.searchParams.set('tool_id', tool.id);
        u.searchParams.set('status', status);
        if (status !== 'active' && q.error) u.searchParams.set('error', q.error);
        return { redirect: u.toString() };
      }
      return status === 'active'
        ? { page: { status: 200, title: 'Connected', message: `${tool.name} (${tool.integration}${account ? `, ${account}` : ''}) is connected. You can close this window.` } }
        : { page: { status: 400, title: 'Not connected', message: `${tool.name} was not connected: ${reason ?? status}. Connect again to retry.` } };
    };
    if (q.error !== undefined) {
      return q.error === 'access_denied'
        ? finish('authorization_denied', 'the user declined access at the identity provider; connect again to retry')
        : finish('authorization_failed', `the identity provider reported ${q.error.slice(0, 100)}; connect again to retry`);
    }
    if (!q.code) return finish('authorization_failed', 'the identity provider sent no authorization code; connect again to retry');
    let creds: OAuthCredentials;
    try {
      const t = await this.oauthFor(tool).exchangeCode(q.code, st.codeVerifier, st.redirectUri);
      creds = { kind: 'oauth', accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: Date.now() + t.expiresInSeconds * 1000, scope: t.scope };
    } catch (err) {
      this.opts.log.warn('tool sign-in: code exchange failed', { toolId: tool.id, code: err instanceof AppError ? err.code : err instanceof InvalidGrant ? 'invalid_grant' : 'error' });
      return finish('authorization_failed', err instanceof InvalidGrant ? 'the sign-in code was refused (expired or already used); connect again' : 'the identity provider could not be reached to finish sign-in; connect again');
    }
    if (!(await this.opts.repo.putCredentials(tool.id, creds))) throw badRequest('invalid_state', 'the tool this sign-in was for was deleted; connect again');
    let account: string | undefined;
    try {
      account = tool.integration === 'email' ? (await this.gmailFor(tool).profile(creds.accessToken)).emailAddress : (await this.calendarFor(tool).listCalendars(creds.accessToken)).find((c) => c.primary)?.id;
    } catch {
      // The account name is a nicety; the tool works without it.
    }
    return finish('active', null, account);
  }

  gmailFor(tool: ToolRecord): GmailClient {
    return tool.provider === 'sandbox' ? this.gmail.sandbox : this.gmail.google;
  }

  calendarFor(tool: ToolRecord): CalendarClient {
    return tool.provider === 'sandbox' ? this.calendar.sandbox : this.calendar.google;
  }

  // ---- manage

  list(principal: Principal): Promise<ToolRecord[]> {
    return this.opts.repo.list(principal.organizationId);
  }

  async get(principal: Principal, id: string): Promise<ToolRecord> {
    const t = await this.opts.repo.get(principal.organizationId, id);
    if (t === null) throw new AppError(404, 'not_found', `tool ${id} not found`);
    return t;
  }

  /** Revokes at the provider where it can (best effort), then deletes the tool and its credentials for good. */
  async delete(principal: Principal, id: string): Promise<{ tool: ToolRecord; revoked: boolean }> {
    const tool = await this.get(principal, id);
    const revoked = await this.revokeAtProvider(tool);
    if (!(await this.opts.repo.delete(principal.organizationId, id))) throw new AppError(404, 'not_found', `tool ${id} not found`);
    this.touched.delete(id);
    return { tool, revoked };
  }

  private async revokeAtProvider(tool: ToolRecord): Promise<boolean> {
    let creds: ToolCredentials | null;
    try {
      creds = await this.opts.repo.getCredentials(tool.id);
    } catch {
      return false;
    }
    if (creds === null) return false;
    try {
      if (creds.kind === 'oauth') await this.oauthFor(tool).revoke(creds.refreshToken ?? creds.accessToken);
      else if (creds.webhookEndpointId !== null) await this.stripeFor(tool).deleteWebhookEndpoint(creds.apiKey, creds.webhookEndpointId);
      else return false;
      return true;
    } catch (err) {
      this.opts.log.warn('tool delete: revoking at the provider failed; credentials are deleted here anyway', { toolId: tool.id, code: err instanceof AppError ? err.code : 'error' });
      return false;
    }
  }

  // ---- MCP

  /**
   * The session for `/mcp/{id}`: undefined for unknown ids and other
   * organizations' tools (answered like unknown ones); a 409 naming the
   * status for a tool that is not active.
   */
  async session(principal: Principal, id: string): Promise<ToolSession | undefined> {
    if (!id.startsWith('tool_')) return undefined;
    const tool = await this.opts.repo.get(principal.organizationId, id);
    if (tool === null) return undefined;
    if (tool.status !== 'active') {
      throw new AppError(409, 'tool_not_active', `tool ${id} is ${tool.status}${tool.statusReason ? `: ${tool.statusReason}` : ''}`);
    }
    const last = this.touched.get(id) ?? (tool.lastUsedAt ? Date.parse(tool.lastUsedAt) : 0);
    const now = this.opts.clock.now();
    if (now - last >= TOUCH_EVERY_MS) {
      this.touched.set(id, now);
      void this.opts.repo.touch(tool.organizationId, id, new Date(now).toISOString()).catch(() => {});
    }
    return new ToolSession(tool, this, this.gmailFor(tool), this.calendarFor(tool), this.stripeFor(tool));
  }

  // ---- credentials (ToolAccess)

  private reauthorize(tool: ToolRecord, reason: string): Promise<boolean> {
    return this.opts.repo.update({ ...tool, status: 'reauthorization_required', statusReason: reason, updatedAt: new Date(this.opts.clock.now()).toISOString() });
  }

  private async oauthCreds(tool: ToolRecord): Promise<OAuthCredentials> {
    const c = await this.opts.repo.getCredentials(tool.id);
    if (c === null || c.kind !== 'oauth') throw new AppError(409, 'tool_not_active', `tool ${tool.id} has no credentials (it was deleted or never signed in)`);
    return c;
  }

  /**
   * A valid access token: the stored one while it has more than a minute
   * left (and is not `rejected`), else a refreshed one. One refresh at a time
   * per tool across nodes: the lock holder refreshes; the others wait for
   * the new token to appear.
   */
  async accessToken(tool: ToolRecord, rejected?: string): Promise<string> {
    const usable = (c: OAuthCredentials) => c.accessToken !== rejected && c.expiresAt - Date.now() > REFRESH_MARGIN_MS;
    const first = await this.oauthCreds(tool);
    if (usable(first)) return first.accessToken;
    const owner = randomUUID();
    const deadline = Date.now() + REFRESH_LOCK_MS + 5_000;
    while (Date.now() < deadline) {
      if (await this.opts.repo.tryLock(tool.id, owner, REFRESH_LOCK_MS)) {
        try {
          const cur = await this.oauthCreds(tool);
          // Another node refreshed while this one waited for the lock.
          if (usable(cur) && cur.accessToken !== first.accessToken) return cur.accessToken;
          if (cur.refreshToken === null) {
            await this.reauthorize(tool, 'the access expired and the provider issued no refresh token; connect again');
            throw credentialsRefused(PROVIDER_NAMES[tool.integration], tool.integration);
          }
          let t;
          try {
            t = await this.oauthFor(tool).refresh(cur.refreshToken);
          } catch (err) {
            if (err instanceof InvalidGrant) {
              await this.reauthorize(tool, 'the provider revoked or expired the grant (invalid_grant); connect again and sign in');
              throw credentialsRefused(PROVIDER_NAMES[tool.integration], tool.integration);
            }
            throw err;
          }
          const next: OAuthCredentials = { kind: 'oauth', accessToken: t.accessToken, refreshToken: t.refreshToken ?? cur.refreshToken, expiresAt: Date.now() + t.expiresInSeconds * 1000, scope: t.scope || cur.scope };
          if (!(await this.opts.repo.putCredentials(tool.id, next))) throw new AppError(409, 'tool_not_active', `tool ${tool.id} was deleted`);
          return next.accessToken;
        } finally {
          await this.opts.repo.unlock(tool.id, owner);
        }
      }
      await new Promise((r) => setTimeout(r, 25 + Math.random() * 50));
      const cur = await this.oauthCreds(tool);
      if (usable(cur) && cur.accessToken !== first.accessToken) return cur.accessToken;
    }
    throw new AppError(503, 'provider_unavailable', 'refreshing the access token takes too long; try again in a few seconds', undefined, { retryAfterSeconds: 5 });
  }

  async withToken<T>(tool: ToolRecord, fn: (token: string) => Promise<T>): Promise<T> {
    const token = await this.accessToken(tool);
    try {
      return await fn(token);
    } catch (err) {
      if (!(err instanceof ProviderUnauthorized)) throw err;
    }
    const again = await this.accessToken(tool, token);
    try {
      return await fn(again);
    } catch (err) {
      if (err instanceof ProviderUnauthorized) throw credentialsRefused(PROVIDER_NAMES[tool.integration], tool.integration);
      throw err;
    }
  }

  async withApiKey<T>(tool: ToolRecord, fn: (creds: ApiKeyCredentials) => Promise<T>): Promise<T> {
    const c = await this.opts.repo.getCredentials(tool.id);
    if (c === null || c.kind !== 'api_key') throw new AppError(409, 'tool_not_active', `tool ${tool.id} has no credentials`);
    try {
      return await fn(c);
    } catch (err) {
      if (!(err instanceof ProviderUnauthorized)) throw err;
      await this.reauthorize(tool, 'Stripe refused the API key (revoked or rolled); connect again with a new api_key');
      throw credentialsRefused('Stripe', 'payment');
    }
  }

  paymentEvents(tool: ToolRecord, paymentId: string): Promise<PaymentEvent[]> {
    return this.opts.repo.paymentEvents(tool.id, paymentId);
  }

  // ---- provider webhooks

  /**
   * A Stripe event for a payment tool, verified on the raw body with the
   * tool's webhook secret (fails closed without one). Records paid/expired
   * Checkout Sessions once per event id.
   */
  async paymentWebhook(toolId: string, raw: Buffer | undefined, signature: string | undefined): Promise<{ received: true; recorded: boolean }> {
    const tool = await this.opts.repo.getGlobal(toolId);
    const creds = tool === null ? null : await this.opts.repo.getCredentials(tool.id);
    const secret = creds?.kind === 'api_key' ? creds.webhookSecret : null;
    if (tool === null || secret === null || raw === undefined || !verifyStripeSignature(secret, raw, signature, Math.floor(Date.now() / 1000))) {
      throw new AppError(400, 'invalid_signature', 'missing or invalid Stripe-Signature');
    }
    let event: { id?: unknown; type?: unknown; data?: { object?: { id?: unknown; object?: unknown; payment_status?: unknown } } };
    try {
      event = storableCopy(JSON.parse(raw.toString('utf8')) as typeof event);
    } catch {
      throw badRequest('validation_failed', 'the event is not JSON');
    }
    const obj = event.data?.object;
    if (typeof event.id !== 'string' || obj?.object !== 'checkout.session' || typeof obj.id !== 'string') return { received: true, recorded: false };
    let status: PaymentEvent['status'] | null = null;
    if (event.type === 'checkout.session.completed' && obj.payment_status === 'paid') status = 'paid';
    else if (event.type === 'checkout.session.async_payment_succeeded') status = 'paid';
    else if (event.type === 'checkout.session.expired') status = 'expired';
    if (status === null) return { received: true, recorded: false };
    const recorded = await this.opts.repo.recordPaymentEvent(tool.id, { paymentId: obj.id, status, eventId: event.id, at: new Date(this.opts.clock.now()).toISOString() });
    return { received: true, recorded };
  }
}
