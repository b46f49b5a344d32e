import { randomBytes } from 'node:crypto';
import type { SandboxProviderRecords } from '../../store/sandbox-providers/port.js';
import type { Logger } from '../../log.js';
import { stripeSignature } from '../providers/stripe.js';
import { escapeHtml, sandboxPage, type SandboxReply } from './google-errors.js';
import type { SandboxOutbound } from './outbound.js';

interface Account {
  id: string;
  apiKey: string;
  name: string;
  created: number;
  /** The organization whose API key created it (absent on accounts made before that was required). */
  organizationId?: string;
}

interface Session {
  id: string;
  object: 'checkout.session';
  account: string;
  url: string | null;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'paid' | 'unpaid';
  amount_total: number;
  amount_subtotal: number;
  currency: string;
  created: number;
  expires_at: number;
  mode: 'payment';
  livemode: false;
  customer_email: string | null;
  customer_details: { email: string | null; name: string | null } | null;
  client_reference_id: string | null;
  payment_intent: string | null;
  metadata: Record<string, string>;
  success_url: string | null;
  cancel_url: string | null;
  /** Sandbox bookkeeping, not part of the resource. */
  description: string;
}

interface Endpoint {
  id: string;
  object: 'webhook_endpoint';
  account: string;
  url: string;
  enabled_events: string[];
  secret: string;
  status: 'enabled';
  created: number;
}

const rid = (prefix: string, n = 24) => `${prefix}${randomBytes(n).toString('base64url').replace(/[-_]/g, '').slice(0, n)}`;
const ZERO_DECIMAL = new Set(['jpy', 'krw', 'vnd', 'clp', 'isk', 'ugx', 'xaf', 'xof']);

/** Stripe's error body: `{error: {type, code?, message, param?}}`. */
function stripeError(status: number, message: string, extra: { type?: string; code?: string; param?: string } = {}): SandboxReply {
  return { status, body: { error: { type: extra.type ?? 'invalid_request_error', message, ...(extra.code ? { code: extra.code } : {}), ...(extra.param ? { param: extra.param } : {}) } } };
}

export function formatAmount(amount: number, currency: string): string {
  const minor = ZERO_DECIMAL.has(currency.toLowerCase()) ? 1 : 100;
  return `${(amount / minor).toFixed(minor === 1 ? 0 : 2)} ${currency.toUpperCase()}`;
}

/**
 * The sandbox payment provider: Stripe's REST API shapes (form-encoded
 * requests, `{error: {type, code, message, param}}` errors) for the account
 * (`GET /v1/account`), Checkout Sessions (create, retrieve, expire) and
 * webhook endpoints (create with signing secret, delete). A person pays on
 * the sandbox checkout page (`session.url`); the session turns complete/paid
 * and a `checkout.session.completed` event goes to the account's webhook
 * endpoints, signed `Stripe-Signature: t=…,v1=…` as Stripe signs them.
 * Accounts are made with a sandbox-only call that hands out an API key
 * (`sk_test_sbx_…`), as signing up at Stripe would; the call needs an API
 * key of an organization of the service.
 *
 * Webhook endpoints must be publicly reachable, as Stripe demands, or the
 * service's own callback address; every delivery goes through the customer
 * webhooks' address guard (`SandboxOutbound`).
 */
export class SandboxPayments {
  constructor(
    private readonly db: SandboxProviderRecords,
    private readonly publicUrl: () => string,
    private readonly log: Logger,
    private readonly outbound: SandboxOutbound,
  ) {}

  async createAccount(name: string, organizationId: string): Promise<{ id: string; api_key: string; name: string }> {
    const a: Account = { id: rid('acct_', 16), apiKey: `sk_test_sbx_${randomBytes(24).toString('base64url')}`, name, created: Math.floor(Date.now() / 1000), organizationId };
    await this.db.put('sbStripeAccounts', a.apiKey, a);
    return { id: a.id, api_key: a.apiKey, name: a.name };
  }

  async authenticate(authorization: string | undefined): Promise<Account | SandboxReply> {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!m) return stripeError(401, "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').");
    const a = await this.db.get<Account>('sbStripeAccounts', m[1]!);
    if (a === undefined) return stripeError(401, `Invalid API Key provided: ${m[1]!.slice(0, 8)}${'*'.repeat(8)}${m[1]!.slice(-4)}`);
    return a;
  }

  account(a: Account): SandboxReply {
    return { status: 200, body: { id: a.id, object: 'account', business_profile: { name: a.name }, settings: { dashboard: { display_name: a.name } }, charges_enabled: true, country: 'DE', default_currency: 'eur', created: a.created } };
  }

  private fresh(s: Session): Session {
    if (s.status === 'open' && s.expires_at <= Math.floor(Date.now() / 1000)) {
      const expired: Session = { ...s, status: 'expired', url: null };
      void this.db.put('sbStripeSessions', s.id, expired).then(() => this.emit(expired, 'checkout.session.expired'));
      return expired;
    }
    return s;
  }

  private view(s: Session): Record<string, unknown> {
    const { account: _a, description: _d, ...rest } = s;
    return rest;
  }

  async createSession(a: Account, f: Record<string, unknown>, idempotencyKey: string | undefined): Promise<SandboxReply> {
    if (idempotencyKey) {
      const prev = await this.db.get<string>('sbStripeIdem', `${a.id}/${idempotencyKey}`);
      const s = prev === undefined ? undefined : await this.db.get<Session>('sbStripeSessions', prev);
      if (s !== undefined) return { status: 200, body: this.view(this.fresh(s)), headers: { 'idempotent-replayed': 'true' } };
    }
    if (f.mode !== 'payment') return stripeError(400, f.mode === undefined ? 'Missing required param: mode.' : `Invalid mode: ${String(f.mode)}`, { code: 'parameter_missing', param: 'mode' });
    const items = Array.isArray(f.line_items) ? (f.line_items as Record<string, unknown>[]) : f.line_items && typeof f.line_items === 'object' ? Object.values(f.line_items as Record<string, Record<string, unknown>>) : [];
    if (items.length !== 1) return stripeError(400, 'Missing required param: line_items.', { code: 'parameter_missing', param: 'line_items' });
    const item = items[0]!;
    const pd = (item.price_data ?? {}) as Record<string, unknown>;
    const currency = String(pd.currency ?? '').toLowerCase();
    if (!/^[a-z]{3}$/.test(currency)) return stripeError(400, 'Missing required param: line_items[0][price_data][currency].', { code: 'parameter_missing', param: 'line_items[0][price_data][currency]' });
    const unit = Number(pd.unit_amount);
    const quantity = item.quantity === undefined ? 1 : Number(item.quantity);
    if (!Number.isInteger(unit) || unit < 0) return stripeError(400, 'Invalid integer: line_items[0][price_data][unit_amount]', { code: 'parameter_invalid_integer', param: 'line_items[0][price_data][unit_amount]' });
    if (!Number.isInteger(quantity) || quantity < 1) return stripeError(400, 'Invalid integer: line_items[0][quantity]', { param: 'line_items[0][quantity]' });
    const total = unit * quantity;
    const minimum = ZERO_DECIMAL.has(currency) ? 50 : 50;
    if (total < minimum) return stripeError(400, `The Checkout Session's total amount due must add up to at least ${formatAmount(minimum, currency)}`, { code: 'amount_too_small' });
    const name = String(((pd.product_data ?? {}) as Record<string, unknown>).name ?? '');
    if (name === '') return stripeError(400, 'Missing required param: line_items[0][price_data][product_data][name].', { code: 'parameter_missing' });
    const now = Math.floor(Date.now() / 1000);
    let expiresAt = now + 86_400;
    if (f.expires_at !== undefined) {
      expiresAt = Number(f.expires_at);
      if (!Number.isInteger(expiresAt) || expiresAt < now + 30 * 60 || expiresAt > now + 86_400) {
        return stripeError(400, 'The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.', { param: 'expires_at' });
      }
    }
    const url = (k: string) => (typeof f[k] === 'string' && /^https?:\/\//.test(f[k] as string) ? (f[k] as string) : null);
    if (f.success_url !== undefined && url('success_url') === null) return stripeError(400, 'Not a valid URL', { param: 'success_url', code: 'url_invalid' });
    const id = rid('cs_test_a1', 48);
    const s: Session = {
      id,
      object: 'checkout.session',
      account: a.id,
      url: `${this.publicUrl()}/sandbox/providers/stripe/pay/${id}`,
      status: 'open',
      payment_status: 'unpaid',
      amount_total: total,
      amount_subtotal: total,
      currency,
      created: now,
      expires_at: expiresAt,
      mode: 'payment',
      livemode: false,
      customer_email: typeof f.customer_email === 'string' ? f.customer_email : null,
      customer_details: null,
      client_reference_id: typeof f.client_reference_id === 'string' ? f.client_reference_id : null,
      payment_intent: null,
      metadata: f.metadata && typeof f.metadata === 'object' ? Object.fromEntries(Object.entries(f.metadata as Record<string, unknown>).map(([k, v]) => [k, String(v)])) : {},
      success_url: url('success_url'),
      cancel_url: url('cancel_url'),
      description: quantity > 1 ? `${quantity} × ${name}` : name,
    };
    await this.db.put('sbStripeSessions', id, s);
    if (idempotencyKey) await this.db.put('sbStripeIdem', `${a.id}/${idempotencyKey}`, id);
    return { status: 200, body: this.view(s) };
  }

  private async session(a: Account, id: string): Promise<Session | SandboxReply> {
    const s = await this.db.get<Session>('sbStripeSessions', id);
    if (s === undefined || s.account !== a.id) return stripeError(404, `No such checkout.session: '${id}'`, { code: 'resource_missing', param: 'session' });
    return this.fresh(s);
  }

  async retrieve(a: Account, id: string): Promise<SandboxReply> {
    const s = await this.session(a, id);
    return 'status' in s && typeof s.status === 'number' ? (s as SandboxReply) : { status: 200, body: this.view(s as Session) };
  }

  async expire(a: Account, id: string): Promise<SandboxReply> {
    const found = await this.session(a, id);
    if (typeof found.status === 'number') return found as SandboxReply;
    const s = found as Session;
    if (s.status !== 'open') return stripeError(400, `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${s.status}".`, { code: 'checkout_session_not_open' } as never);
    const expired: Session = { ...s, status: 'expired', url: null };
    await this.db.put('sbStripeSessions', id, expired);
    void this.emit(expired, 'checkout.session.expired');
    return { status: 200, body: this.view(expired) };
  }

  async createEndpoint(a: Account, f: Record<string, unknown>): Promise<SandboxReply> {
    const url = typeof f.url === 'string' ? f.url : '';
    if (!/^https?:\/\/\S+$/.test(url)) return stripeError(400, 'Invalid URL: URL must be publicly accessible.', { param: 'url', code: 'url_invalid' });
    const refused = this.outbound.refusal(url);
    if (refused !== null) return stripeError(400, `Invalid URL: URL must be publicly accessible (${refused}).`, { param: 'url', code: 'url_invalid' });
    const events = Array.isArray(f.enabled_events) ? f.enabled_events.map(String) : f.enabled_events && typeof f.enabled_events === 'object' ? Object.values(f.enabled_events).map(String) : [];
    if (events.length === 0) return stripeError(400, 'Missing required param: enabled_events.', { code: 'parameter_missing', param: 'enabled_events' });
    const e: Endpoint = { id: rid('we_', 24), object: 'webhook_endpoint', account: a.id, url, enabled_events: events, secret: `whsec_${randomBytes(24).toString('base64url')}`, status: 'enabled', created: Math.floor(Date.now() / 1000) };
    await this.db.put('sbStripeEndpoints', e.id, e);
    const { account: _a, ...view } = e;
    return { status: 200, body: view };
  }

  async deleteEndpoint(a: Account, id: string): Promise<SandboxReply> {
    const e = await this.db.get<Endpoint>('sbStripeEndpoints', id);
    if (e === undefined || e.account !== a.id) return stripeError(404, `No such webhook endpoint: '${id}'`, { code: 'resource_missing', param: 'id' });
    await this.db.delete('sbStripeEndpoints', id);
    return { status: 200, body: { id, object: 'webhook_endpoint', deleted: true } };
  }

  /** Endpoints of an account (sandbox statistics: a deleted tool leaves none). */
  async endpoints(accountId: string): Promise<number> {
    return (await this.endpointUrls(accountId)).length;
  }

  /** Where an account's endpoints point (sandbox statistics). */
  async endpointUrls(accountId: string): Promise<string[]> {
    return (await this.db.values<Endpoint>('sbStripeEndpoints')).filter((e) => e.account === accountId).map((e) => e.url);
  }

  async checkoutPage(id: string, actionUrl: string): Promise<SandboxReply> {
    const raw = await this.db.get<Session>('sbStripeSessions', id);
    if (raw === undefined) return { status: 404, html: sandboxPage('Not found', '<h1>This payment link does not exist</h1>') };
    const s = this.fresh(raw);
    const merchant = (await this.db.values<Account>('sbStripeAccounts')).find((a) => a.id === s.account)?.name ?? 'Merchant';
    if (s.status === 'complete') return { status: 200, html: sandboxPage('Paid', `<h1>Paid</h1><p>${escapeHtml(formatAmount(s.amount_total, s.currency))} to ${escapeHtml(merchant)} was paid. Thank you.</p>`) };
    if (s.status === 'expired') return { status: 200, html: sandboxPage('Expired', '<h1>This payment request has expired</h1><p>Ask the merchant for a new link.</p>') };
    return {
      status: 200,
      html: sandboxPage(
        `Pay ${merchant}`,
        `<h1>Pay ${escapeHtml(merchant)}</h1><p><strong>${escapeHtml(formatAmount(s.amount_total, s.currency))}</strong> — ${escapeHtml(s.description)}</p>
<form method="post" action="${escapeHtml(actionUrl)}">
<label for="email">Email</label><input id="email" name="email" type="email" value="${escapeHtml(s.customer_email ?? 'customer@example.com')}" required>
<label for="card">Card number (sandbox: any test number)</label><input id="card" name="card" value="4242 4242 4242 4242" inputmode="numeric">
<p><button class="primary" type="submit">Pay ${escapeHtml(formatAmount(s.amount_total, s.currency))}</button></p>
</form>`,
      ),
    };
  }

  /** A person paid on the checkout page. Card 4000 0000 0000 0002 is declined, as in Stripe's test mode. */
  async pay(id: string, form: Record<string, unknown>): Promise<SandboxReply> {
    const raw = await this.db.get<Session>('sbStripeSessions', id);
    if (raw === undefined) return { status: 404, html: sandboxPage('Not found', '<h1>This payment link does not exist</h1>') };
    const s = this.fresh(raw);
    if (s.status !== 'open') return this.checkoutPage(id, '');
    const card = String(form.card ?? '').replace(/\s+/g, '');
    if (card === '4000000000000002') return { status: 402, html: sandboxPage('Declined', '<h1>Your card was declined</h1><p>Try another card.</p>') };
    const email = String(form.email ?? '').trim();
    const paid: Session = { ...s, status: 'complete', payment_status: 'paid', payment_intent: rid('pi_', 24), customer_details: { email: email === '' ? null : email, name: null }, url: null };
    await this.db.put('sbStripeSessions', id, paid);
    await this.emit(paid, 'checkout.session.completed');
    if (paid.success_url) return { status: 303, redirect: paid.success_url.replace('{CHECKOUT_SESSION_ID}', id) };
    return this.checkoutPage(id, '');
  }

  /** Sends the event to every endpoint of the account that wants it; a failed delivery is retried a few times. */
  private async emit(s: Session, type: string): Promise<void> {
    const event = { id: rid('evt_', 24), object: 'event', api_version: '2025-10-29.clover', created: Math.floor(Date.now() / 1000), livemode: false, pending_webhooks: 1, type, data: { object: this.view(s) } };
    const body = JSON.stringify(event);
    const targets = (await this.db.values<Endpoint>('sbStripeEndpoints')).filter((e) => e.account === s.account && (e.enabled_events.includes(type) || e.enabled_events.includes('*')));
    await Promise.all(
      targets.map(async (e) => {
        let error: string | null = null;
        for (let attempt = 0; attempt < 4; attempt++) {
          const out = await this.outbound.post(e.url, body, { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': stripeSignature(e.secret, body, Math.floor(Date.now() / 1000)) });
          if (out.ok) return;
          error = out.error;
          // An address the guard refuses stays refused: retrying would only knock again.
          if (out.forbidden) break;
          await new Promise((r) => setTimeout(r, 200 * 4 ** attempt));
        }
        this.log.warn('sandbox payments: webhook delivery failed', { endpoint: e.id, type, error });
      }),
    );
  }
}
