import { randomBytes } from 'node:crypto';
import type { SandboxProviderRecords } from '../../store/sandbox-providers/port.js';
import type { Logger } from '../../log.js';
import { stripeSignature } from '../providers/stripe.js';
import { escapeHtml, sandboxPage, type SandboxReply } from './google-errors.js';
import type { SandboxOutbound } from './outbound.js';

/** The Stripe API version the sandbox answers as (the `stripe` package's pinned one when this was written). */
export const STRIPE_API_VERSION = '2026-10-28.endive';

export interface StripeAccount {
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
  /** Set at creation (sessions made before it was kept get one derived from the id). */
  client_secret?: string;
  locale?: string | null;
  submit_type?: string | null;
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
  description?: string | null;
  metadata?: Record<string, string>;
  api_version?: string | null;
}

interface PaymentIntent {
  id: string;
  account: string;
  amount: number;
  currency: string;
  created: number;
  description: string;
  receipt_email: string | null;
  metadata: Record<string, string>;
  payment_method: string;
  latest_charge: string;
  client_secret: string;
}

interface Refund {
  id: string;
  account: string;
  amount: number;
  currency: string;
  created: number;
  payment_intent: string;
  charge: string;
  payment_method: string;
  reason: 'duplicate' | 'fraudulent' | 'requested_by_customer' | null;
  metadata: Record<string, string>;
}

interface StoredEvent {
  account: string;
  event: Record<string, unknown> & { id: string; type: string; created: number };
}

const rid = (prefix: string, n = 24) => `${prefix}${randomBytes(n).toString('base64url').replace(/[-_]/g, '').slice(0, n)}`;
const ZERO_DECIMAL = new Set(['jpy', 'krw', 'vnd', 'clp', 'isk', 'ugx', 'xaf', 'xof']);

/** Stripe's `Request-Id` header value: `req_` and 14 letters and digits. */
export function stripeRequestId(): string {
  return rid('req_', 14);
}

/** Stripe's error body: `{error: {type, code?, message, param?}}`. */
export function stripeError(status: number, message: string, extra: { type?: string; code?: string; param?: string } = {}): SandboxReply {
  return { status, body: { error: { type: extra.type ?? 'invalid_request_error', message, ...(extra.code ? { code: extra.code } : {}), ...(extra.param ? { param: extra.param } : {}) } } };
}

/** The string values of a form-encoded hash (`metadata[key]=value`), at most Stripe's 50 keys. */
function stringMap(v: unknown): Record<string, string> | null {
  if (v === undefined || v === '') return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > 50 || entries.some(([k, x]) => k.length > 40 || typeof x !== 'string' || x.length > 500)) return null;
  return Object.fromEntries(entries as [string, string][]);
}

/** A list page as Stripe answers it: newest first, `limit` (1-100, default 10), `starting_after`. */
function listPage<T extends { id: string }>(url: string, all: T[], q: Record<string, unknown>): SandboxReply {
  const limit = q.limit === undefined ? 10 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return stripeError(400, 'This value must be greater than or equal to 1 and less than or equal to 100.', { param: 'limit', code: 'parameter_invalid_integer' });
  let start = 0;
  if (typeof q.starting_after === 'string') {
    const i = all.findIndex((x) => x.id === q.starting_after);
    if (i < 0) return stripeError(400, `No such object: '${q.starting_after}'`, { param: 'starting_after', code: 'resource_missing' });
    start = i + 1;
  }
  const data = all.slice(start, start + limit);
  return { status: 200, body: { object: 'list', data, has_more: start + limit < all.length, url } };
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
    const a: StripeAccount = { id: rid('acct_', 16), apiKey: `sk_test_sbx_${randomBytes(24).toString('base64url')}`, name, created: Math.floor(Date.now() / 1000), organizationId };
    await this.db.put('sbStripeAccounts', a.apiKey, a);
    return { id: a.id, api_key: a.apiKey, name: a.name };
  }

  async authenticate(authorization: string | undefined): Promise<StripeAccount | SandboxReply> {
    // Bearer, or Basic with the key as user name (`curl -u sk_test_…:`), as Stripe takes it.
    const basic = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
    const m = basic ? /^([^:]+):?$/.exec(Buffer.from(basic[1]!, 'base64').toString('utf8')) : /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!m) return stripeError(401, "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').");
    const a = await this.db.get<StripeAccount>('sbStripeAccounts', m[1]!);
    if (a === undefined) return stripeError(401, `Invalid API Key provided: ${m[1]!.slice(0, 8)}${'*'.repeat(8)}${m[1]!.slice(-4)}`);
    return a;
  }

  account(a: StripeAccount): SandboxReply {
    // What a card statement shows: Stripe takes 5 to 22 latin characters.
    const named = a.name.replace(/[^A-Za-z0-9 .-]/g, '').trim().toUpperCase();
    const descriptor = (named.length >= 5 ? named : 'SANDBOX SHOP').slice(0, 22).trim();
    return {
      status: 200,
      body: {
        id: a.id,
        object: 'account',
        business_profile: { mcc: '5734', minority_owned_business_designation: null, name: a.name, specified_commercial_transactions_act_url: null, support_address: null, support_email: null, support_phone: null, support_url: null, url: null },
        business_type: 'company',
        capabilities: { card_payments: 'active', transfers: 'active' },
        charges_enabled: true,
        country: 'DE',
        created: a.created,
        default_currency: 'eur',
        details_submitted: true,
        email: `owner@${a.id.slice(5).toLowerCase()}.sandbox.example`,
        payouts_enabled: true,
        settings: {
          branding: { icon: null, logo: null, primary_color: null, secondary_color: null },
          card_payments: { decline_on: { avs_failure: false, cvc_failure: false }, statement_descriptor_prefix: descriptor.slice(0, 10).trim(), statement_descriptor_prefix_kana: null, statement_descriptor_prefix_kanji: null },
          dashboard: { display_name: a.name, timezone: 'Etc/UTC' },
          payments: { statement_descriptor: descriptor, statement_descriptor_kana: null, statement_descriptor_kanji: null, statement_descriptor_prefix_kana: null, statement_descriptor_prefix_kanji: null },
        },
        type: 'standard',
      },
    };
  }

  private fresh(s: Session): Session {
    if (s.status === 'open' && s.expires_at <= Math.floor(Date.now() / 1000)) {
      const expired: Session = { ...s, status: 'expired', url: null };
      void this.db.put('sbStripeSessions', s.id, expired).then(() => this.emit(expired, 'checkout.session.expired'));
      return expired;
    }
    return s;
  }

  /** The session as Stripe returns it: every field Stripe always returns, with the values a plain one-off payment has. */
  private view(s: Session): Record<string, unknown> {
    const paid = s.payment_status === 'paid';
    return {
      id: s.id,
      object: 'checkout.session',
      adaptive_pricing: { enabled: false },
      after_expiration: null,
      allow_promotion_codes: null,
      allowed_payment_method_types: null,
      amount_subtotal: s.amount_subtotal,
      amount_total: s.amount_total,
      automatic_tax: { enabled: false, liability: null, provider: null, status: null },
      billing_address_collection: null,
      cancel_url: s.cancel_url,
      client_reference_id: s.client_reference_id,
      client_secret: null,
      collected_information: paid ? { business_name: null, individual_name: null, shipping_details: null } : null,
      consent: null,
      consent_collection: null,
      created: s.created,
      currency: s.currency,
      currency_conversion: null,
      custom_fields: [],
      custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
      customer: null,
      customer_account: null,
      customer_creation: 'if_required',
      customer_details: s.customer_details === null ? null : { address: null, business_name: null, email: s.customer_details.email, individual_name: null, name: s.customer_details.name, phone: null, tax_exempt: 'none', tax_ids: [] },
      customer_email: s.customer_email,
      discounts: [],
      expires_at: s.expires_at,
      integration_identifier: null,
      invoice: null,
      invoice_creation: { enabled: false, invoice_data: { account_tax_ids: null, custom_fields: null, description: null, footer: null, issuer: null, metadata: {}, rendering_options: null } },
      livemode: false,
      locale: s.locale ?? null,
      managed_payments: null,
      metadata: s.metadata,
      mode: s.mode,
      origin_context: null,
      payment_intent: s.payment_intent,
      payment_link: null,
      payment_method_collection: 'if_required',
      payment_method_configuration_details: null,
      payment_method_options: { card: { request_three_d_secure: 'automatic' } },
      payment_method_types: ['card'],
      payment_status: s.payment_status,
      permissions: null,
      phone_number_collection: { enabled: false },
      recovered_from: null,
      saved_payment_method_options: null,
      setup_intent: null,
      shipping_address_collection: null,
      shipping_cost: null,
      shipping_options: [],
      status: s.status,
      submit_type: s.submit_type ?? null,
      subscription: null,
      success_url: s.success_url,
      total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
      ui_mode: 'hosted',
      url: s.url,
      wallet_options: null,
    };
  }

  async createSession(a: StripeAccount, f: Record<string, unknown>, idempotencyKey: string | undefined): Promise<SandboxReply> {
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
    const metadata = stringMap(f.metadata);
    if (metadata === null) return stripeError(400, 'Invalid metadata: at most 50 keys of up to 40 characters, string values of up to 500.', { param: 'metadata' });
    const locale = f.locale === undefined ? null : String(f.locale);
    if (locale !== null && !/^(auto|[a-z]{2}(-[A-Z]{2})?)$/.test(locale)) return stripeError(400, `Invalid locale: ${locale}`, { param: 'locale' });
    const submitType = f.submit_type === undefined ? null : String(f.submit_type);
    if (submitType !== null && !['auto', 'book', 'donate', 'pay', 'subscribe'].includes(submitType)) return stripeError(400, `Invalid submit_type: ${submitType}`, { param: 'submit_type' });
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
      metadata,
      locale,
      submit_type: submitType,
      success_url: url('success_url'),
      cancel_url: url('cancel_url'),
      description: quantity > 1 ? `${quantity} × ${name}` : name,
    };
    await this.db.put('sbStripeSessions', id, s);
    if (idempotencyKey) await this.db.put('sbStripeIdem', `${a.id}/${idempotencyKey}`, id);
    return { status: 200, body: this.view(s) };
  }

  private async session(a: StripeAccount, id: string): Promise<Session | SandboxReply> {
    const s = await this.db.get<Session>('sbStripeSessions', id);
    if (s === undefined || s.account !== a.id) return stripeError(404, `No such checkout.session: '${id}'`, { code: 'resource_missing', param: 'session' });
    return this.fresh(s);
  }

  async retrieve(a: StripeAccount, id: string): Promise<SandboxReply> {
    const s = await this.session(a, id);
    return 'status' in s && typeof s.status === 'number' ? (s as SandboxReply) : { status: 200, body: this.view(s as Session) };
  }

  async expire(a: StripeAccount, id: string): Promise<SandboxReply> {
    const found = await this.session(a, id);
    if (typeof found.status === 'number') return found as SandboxReply;
    const s = found as Session;
    if (s.status !== 'open') return stripeError(400, `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${s.status}".`, { code: 'checkout_session_not_open' } as never);
    const expired: Session = { ...s, status: 'expired', url: null };
    await this.db.put('sbStripeSessions', id, expired);
    void this.emit(expired, 'checkout.session.expired');
    return { status: 200, body: this.view(expired) };
  }

  private endpointView(e: Endpoint, withSecret: boolean): Record<string, unknown> {
    return { id: e.id, object: 'webhook_endpoint', api_version: e.api_version ?? null, application: null, created: e.created, description: e.description ?? null, enabled_events: e.enabled_events, livemode: false, metadata: e.metadata ?? {}, ...(withSecret ? { secret: e.secret } : {}), status: e.status, url: e.url };
  }

  async createEndpoint(a: StripeAccount, f: Record<string, unknown>): Promise<SandboxReply> {
    const url = typeof f.url === 'string' ? f.url : '';
    if (!/^https?:\/\/\S+$/.test(url)) return stripeError(400, 'Invalid URL: URL must be publicly accessible.', { param: 'url', code: 'url_invalid' });
    const refused = this.outbound.refusal(url);
    if (refused !== null) return stripeError(400, `Invalid URL: URL must be publicly accessible (${refused}).`, { param: 'url', code: 'url_invalid' });
    const events = Array.isArray(f.enabled_events) ? f.enabled_events.map(String) : f.enabled_events && typeof f.enabled_events === 'object' ? Object.values(f.enabled_events).map(String) : [];
    if (events.length === 0) return stripeError(400, 'Missing required param: enabled_events.', { code: 'parameter_missing', param: 'enabled_events' });
    const metadata = stringMap(f.metadata);
    if (metadata === null) return stripeError(400, 'Invalid metadata: at most 50 keys of up to 40 characters, string values of up to 500.', { param: 'metadata' });
    if (f.description !== undefined && (typeof f.description !== 'string' || f.description.length > 5000)) return stripeError(400, 'Invalid string: description', { param: 'description' });
    if (f.api_version !== undefined && (typeof f.api_version !== 'string' || !/^\d{4}-\d{2}-\d{2}(\.\w+)?$/.test(f.api_version))) return stripeError(400, `Invalid api_version: ${String(f.api_version)}`, { param: 'api_version' });
    const e: Endpoint = {
      id: rid('we_', 24),
      object: 'webhook_endpoint',
      account: a.id,
      url,
      enabled_events: events,
      secret: `whsec_${randomBytes(24).toString('base64url')}`,
      status: 'enabled',
      created: Math.floor(Date.now() / 1000),
      description: typeof f.description === 'string' && f.description !== '' ? f.description : null,
      metadata,
      api_version: typeof f.api_version === 'string' ? f.api_version : null,
    };
    await this.db.put('sbStripeEndpoints', e.id, e);
    // Only the answer to the creation shows the signing secret, as at Stripe.
    return { status: 200, body: this.endpointView(e, true) };
  }

  async endpoint(a: StripeAccount, id: string): Promise<SandboxReply> {
    const e = await this.db.get<Endpoint>('sbStripeEndpoints', id);
    if (e === undefined || e.account !== a.id) return stripeError(404, `No such webhook endpoint: '${id}'`, { code: 'resource_missing', param: 'id' });
    return { status: 200, body: this.endpointView(e, false) };
  }

  async listEndpoints(a: StripeAccount, q: Record<string, unknown>): Promise<SandboxReply> {
    const all = (await this.db.values<Endpoint>('sbStripeEndpoints')).filter((e) => e.account === a.id).sort((x, y) => y.created - x.created || y.id.localeCompare(x.id));
    return listPage('/v1/webhook_endpoints', all.map((e) => this.endpointView(e, false) as Record<string, unknown> & { id: string }), q);
  }

  async deleteEndpoint(a: StripeAccount, id: string): Promise<SandboxReply> {
    const e = await this.db.get<Endpoint>('sbStripeEndpoints', id);
    if (e === undefined || e.account !== a.id) return stripeError(404, `No such webhook endpoint: '${id}'`, { code: 'resource_missing', param: 'id' });
    await this.db.delete('sbStripeEndpoints', id);
    return { status: 200, body: { id, object: 'webhook_endpoint', deleted: true } };
  }

  async listSessions(a: StripeAccount, q: Record<string, unknown>): Promise<SandboxReply> {
    const all = (await this.db.values<Session>('sbStripeSessions')).filter((s) => s.account === a.id).map((s) => this.fresh(s)).sort((x, y) => y.created - x.created || y.id.localeCompare(x.id));
    const filtered = all.filter((s) => (typeof q.payment_intent !== 'string' || s.payment_intent === q.payment_intent) && (typeof q.status !== 'string' || s.status === q.status));
    return listPage('/v1/checkout/sessions', filtered.map((s) => this.view(s) as Record<string, unknown> & { id: string }), q);
  }

  /** The payment intent a paid session made: succeeded, paid by card. */
  private intentView(p: PaymentIntent): Record<string, unknown> {
    return {
      id: p.id,
      object: 'payment_intent',
      allowed_payment_method_types: null,
      amount: p.amount,
      amount_capturable: 0,
      amount_details: { tip: {} },
      amount_received: p.amount,
      application: null,
      application_fee_amount: null,
      automatic_payment_methods: null,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: 'automatic_async',
      client_secret: p.client_secret,
      confirmation_method: 'automatic',
      created: p.created,
      currency: p.currency,
      customer: null,
      customer_account: null,
      description: p.description,
      excluded_payment_method_types: null,
      last_payment_error: null,
      latest_charge: p.latest_charge,
      livemode: false,
      managed_payments: null,
      metadata: p.metadata,
      next_action: null,
      on_behalf_of: null,
      payment_method: p.payment_method,
      payment_method_configuration_details: null,
      payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
      payment_method_types: ['card'],
      payment_record: null,
      processing: null,
      receipt_email: p.receipt_email,
      review: null,
      setup_future_usage: null,
      shipping: null,
      source: null,
      statement_descriptor: null,
      statement_descriptor_suffix: null,
      status: 'succeeded',
      transfer_group: null,
    };
  }

  // ------------------------------------------------------------------ refunds

  /**
   * `POST /v1/refunds`: all of a paid session's payment intent (or its
   * charge), or `amount` of what is left; succeeds at once, as test-mode
   * card refunds do, and announces `refund.created`.
   */
  async createRefund(a: StripeAccount, f: Record<string, unknown>, idempotencyKey: string | undefined, requestId: string): Promise<SandboxReply> {
    if (idempotencyKey) {
      const prev = await this.db.get<string>('sbStripeIdem', `${a.id}/refund/${idempotencyKey}`);
      if (prev !== undefined) return this.refund(a, prev);
    }
    let intent: PaymentIntent | undefined;
    if (typeof f.payment_intent === 'string') {
      intent = await this.db.get<PaymentIntent>('sbStripeIntents', f.payment_intent);
      if (intent === undefined || intent.account !== a.id) return stripeError(404, `No such payment_intent: '${f.payment_intent}'`, { code: 'resource_missing', param: 'payment_intent' });
    } else if (typeof f.charge === 'string') {
      const charge = f.charge;
      intent = (await this.db.values<PaymentIntent>('sbStripeIntents')).find((p) => p.account === a.id && p.latest_charge === charge);
      if (intent === undefined) return stripeError(404, `No such charge: '${charge}'`, { code: 'resource_missing', param: 'charge' });
    } else {
      return stripeError(400, 'One of the following params should be provided for this request: payment_intent or charge.', { code: 'parameter_missing' });
    }
    const refunded = (await this.db.values<Refund>('sbStripeRefunds')).filter((r) => r.payment_intent === intent.id).reduce((sum, r) => sum + r.amount, 0);
    const left = intent.amount - refunded;
    if (left <= 0) return stripeError(400, `Charge ${intent.latest_charge} has already been refunded.`, { code: 'charge_already_refunded' });
    const amount = f.amount === undefined ? left : Number(f.amount);
    if (!Number.isInteger(amount) || amount < 1) return stripeError(400, 'Invalid positive integer', { code: 'parameter_invalid_integer', param: 'amount' });
    if (amount > left) {
      return stripeError(400, `Refund amount (${formatAmount(amount, intent.currency)}) is greater than unrefunded amount on charge (${formatAmount(left, intent.currency)})`, { code: 'amount_too_large', param: 'amount' });
    }
    const reason = f.reason === undefined || f.reason === '' ? null : f.reason;
    if (reason !== null && reason !== 'duplicate' && reason !== 'fraudulent' && reason !== 'requested_by_customer') {
      return stripeError(400, `Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer`, { code: 'parameter_invalid_string', param: 'reason' });
    }
    const metadata = stringMap(f.metadata);
    if (metadata === null) return stripeError(400, 'Invalid metadata: at most 50 keys of up to 40 characters, string values of up to 500.', { param: 'metadata' });
    const refund: Refund = { id: rid('re_3', 23), account: a.id, amount, currency: intent.currency, created: Math.floor(Date.now() / 1000), payment_intent: intent.id, charge: intent.latest_charge, payment_method: intent.payment_method, reason, metadata };
    await this.db.put('sbStripeRefunds', refund.id, refund);
    if (idempotencyKey) await this.db.put('sbStripeIdem', `${a.id}/refund/${idempotencyKey}`, refund.id);
    await this.emitObject(a.id, this.refundView(refund), 'refund.created', { id: requestId, idempotency_key: idempotencyKey ?? null });
    return { status: 200, body: this.refundView(refund) };
  }

  async refund(a: StripeAccount, id: string): Promise<SandboxReply> {
    const r = await this.db.get<Refund>('sbStripeRefunds', id);
    if (r === undefined || r.account !== a.id) return stripeError(404, `No such refund: '${id}'`, { code: 'resource_missing', param: 'id' });
    return { status: 200, body: this.refundView(r) };
  }

  /** Newest first; `payment_intent` or `charge` filter. */
  async listRefunds(a: StripeAccount, q: Record<string, unknown>): Promise<SandboxReply> {
    const all = (await this.db.values<Refund>('sbStripeRefunds'))
      .filter((r) => r.account === a.id && (q.payment_intent === undefined || r.payment_intent === q.payment_intent) && (q.charge === undefined || r.charge === q.charge))
      .sort((x, y) => y.created - x.created || y.id.localeCompare(x.id));
    return listPage('/v1/refunds', all.map((r) => this.refundView(r) as Record<string, unknown> & { id: string }), q);
  }

  /** The refund as Stripe returns it: every field always present, a card refund's destination details. */
  private refundView(r: Refund): Record<string, unknown> {
    return {
      id: r.id,
      object: 'refund',
      amount: r.amount,
      balance_transaction: null,
      charge: r.charge,
      created: r.created,
      currency: r.currency,
      customer: null,
      customer_account: null,
      destination_details: { card: { reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' }, type: 'card' },
      metadata: r.metadata,
      payment_intent: r.payment_intent,
      payment_method: r.payment_method,
      reason: r.reason,
      receipt_number: null,
      source_transfer_reversal: null,
      status: 'succeeded',
      transfer_reversal: null,
    };
  }

  async paymentIntent(a: StripeAccount, id: string): Promise<SandboxReply> {
    const p = await this.db.get<PaymentIntent>('sbStripeIntents', id);
    if (p === undefined || p.account !== a.id) return stripeError(404, `No such payment_intent: '${id}'`, { code: 'resource_missing', param: 'intent' });
    return { status: 200, body: this.intentView(p) };
  }

  async event(a: StripeAccount, id: string): Promise<SandboxReply> {
    const e = await this.db.get<StoredEvent>('sbStripeEvents', id);
    if (e === undefined || e.account !== a.id) return stripeError(404, `No such event: '${id}'`, { code: 'resource_missing', param: 'id' });
    return { status: 200, body: e.event };
  }

  /** Events of the last 30 days, newest first, as Stripe keeps them; `type` filters (`checkout.session.*` too). */
  async listEvents(a: StripeAccount, q: Record<string, unknown>): Promise<SandboxReply> {
    const since = Math.floor(Date.now() / 1000) - 30 * 86_400;
    const type = typeof q.type === 'string' ? q.type : undefined;
    const matches = (t: string) => type === undefined || t === type || (type.endsWith('.*') && t.startsWith(type.slice(0, -1)));
    const all = (await this.db.values<StoredEvent>('sbStripeEvents'))
      .filter((e) => e.account === a.id && e.event.created >= since && matches(e.event.type))
      .map((e) => e.event)
      .sort((x, y) => y.created - x.created || y.id.localeCompare(x.id));
    return listPage('/v1/events', all, q);
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
    const merchant = (await this.db.values<StripeAccount>('sbStripeAccounts')).find((a) => a.id === s.account)?.name ?? 'Merchant';
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
    const intent: PaymentIntent = {
      id: rid('pi_3', 23),
      account: s.account,
      amount: s.amount_total,
      currency: s.currency,
      created: Math.floor(Date.now() / 1000),
      description: s.description,
      receipt_email: email === '' ? null : email,
      metadata: {},
      payment_method: rid('pm_1', 23),
      latest_charge: rid('ch_3', 23),
      client_secret: '',
    };
    intent.client_secret = `${intent.id}_secret_${rid('', 25)}`;
    await this.db.put('sbStripeIntents', intent.id, intent);
    const paid: Session = { ...s, status: 'complete', payment_status: 'paid', payment_intent: intent.id, customer_details: { email: email === '' ? null : email, name: null }, url: null };
    await this.db.put('sbStripeSessions', id, paid);
    await this.emit(paid, 'checkout.session.completed');
    if (paid.success_url) return { status: 303, redirect: paid.success_url.replace('{CHECKOUT_SESSION_ID}', id) };
    return this.checkoutPage(id, '');
  }

  /** Sends the event to every endpoint of the account that wants it; a failed delivery is retried a few times. */
  private async emit(s: Session, type: string): Promise<void> {
    // A person's action on the checkout page (or the expiry): no API request made it, as Stripe records it.
    await this.emitObject(s.account, this.view(s), type, { id: null, idempotency_key: null });
  }

  private async emitObject(account: string, object: Record<string, unknown>, type: string, request: { id: string | null; idempotency_key: string | null }): Promise<void> {
    const targets = (await this.db.values<Endpoint>('sbStripeEndpoints')).filter((e) => e.account === account && (e.enabled_events.includes(type) || e.enabled_events.includes('*')));
    const event = { id: rid('evt_1', 23), object: 'event', api_version: STRIPE_API_VERSION, created: Math.floor(Date.now() / 1000), data: { object }, livemode: false, pending_webhooks: targets.length, request, type };
    await this.db.put('sbStripeEvents', event.id, { account, event } satisfies StoredEvent);
    const body = JSON.stringify(event);
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
