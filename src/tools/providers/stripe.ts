import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.js';
import { ProviderHttp } from './http.js';

/** Checkout Session resource (the fields the payment tools use). */
export interface CheckoutSession {
  id: string;
  object: 'checkout.session';
  url: string | null;
  /** open → complete (paid) or expired. */
  status: 'open' | 'complete' | 'expired';
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  amount_total: number | null;
  currency: string | null;
  created: number;
  expires_at: number;
  customer_email?: string | null;
  customer_details?: { email?: string | null; name?: string | null } | null;
  client_reference_id?: string | null;
  payment_intent?: string | null;
  metadata?: Record<string, string>;
  success_url?: string | null;
}

/** Stripe's bracket notation for nested form fields: `line_items[0][price_data][currency]=eur`. */
export function stripeForm(params: Record<string, unknown>): URLSearchParams {
  const out = new URLSearchParams();
  const add = (prefix: string, v: unknown) => {
    if (v === undefined || v === null) return;
    if (Array.isArray(v)) v.forEach((x, i) => add(`${prefix}[${i}]`, x));
    else if (typeof v === 'object') for (const [k, x] of Object.entries(v)) add(`${prefix}[${k}]`, x);
    else out.append(prefix, String(v));
  };
  for (const [k, v] of Object.entries(params)) add(k, v);
  return out;
}

function shape<T>(v: unknown, object: string): T {
  if (v === null || typeof v !== 'object' || (v as Record<string, unknown>).object !== object) {
    throw new AppError(503, 'provider_bad_response', `Stripe answered without the ${object} its API promises; try again later`, undefined, { retryAfterSeconds: 10 });
  }
  return v as T;
}

/** The Stripe REST API with one account's secret key: Checkout Sessions and webhook endpoints. */
export class StripeClient {
  private readonly http: ProviderHttp;
  constructor(
    private readonly baseUrl: () => string,
    timeoutMs: number,
  ) {
    this.http = new ProviderHttp('Stripe', timeoutMs);
  }

  private async call(apiKey: string, method: string, path: string, form?: URLSearchParams, idempotencyKey?: string): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    return (await this.http.send(`${this.baseUrl().replace(/\/+$/, '')}/v1${path}`, { method, headers, form })).json;
  }

  async account(apiKey: string): Promise<{ id: string; displayName: string | null }> {
    const a = shape<{ id: string; business_profile?: { name?: string | null }; settings?: { dashboard?: { display_name?: string | null } } }>(await this.call(apiKey, 'GET', '/account'), 'account');
    return { id: a.id, displayName: a.settings?.dashboard?.display_name ?? a.business_profile?.name ?? null };
  }

  async createCheckoutSession(
    apiKey: string,
    p: { amount: number; currency: string; description: string; customerEmail?: string | undefined; successUrl?: string | undefined; cancelUrl?: string | undefined; expiresAt?: number | undefined; reference?: string | undefined; metadata?: Record<string, string> | undefined },
    idempotencyKey?: string,
  ): Promise<CheckoutSession> {
    const form = stripeForm({
      mode: 'payment',
      line_items: [{ quantity: 1, price_data: { currency: p.currency, unit_amount: p.amount, product_data: { name: p.description } } }],
      success_url: p.successUrl,
      cancel_url: p.cancelUrl,
      customer_email: p.customerEmail,
      expires_at: p.expiresAt,
      client_reference_id: p.reference,
      metadata: p.metadata,
    });
    return shape(await this.call(apiKey, 'POST', '/checkout/sessions', form, idempotencyKey), 'checkout.session');
  }

  async getCheckoutSession(apiKey: string, id: string): Promise<CheckoutSession> {
    return shape(await this.call(apiKey, 'GET', `/checkout/sessions/${encodeURIComponent(id)}`), 'checkout.session');
  }

  async expireCheckoutSession(apiKey: string, id: string): Promise<CheckoutSession> {
    return shape(await this.call(apiKey, 'POST', `/checkout/sessions/${encodeURIComponent(id)}/expire`), 'checkout.session');
  }

  /** Registers where Stripe sends events; the answer carries the signing secret, shown only this once. */
  async createWebhookEndpoint(apiKey: string, url: string, events: string[]): Promise<{ id: string; secret: string }> {
    const e = shape<{ id: string; secret?: string }>(await this.call(apiKey, 'POST', '/webhook_endpoints', stripeForm({ url, enabled_events: events, description: 'Switchboard payment tool' })), 'webhook_endpoint');
    if (typeof e.secret !== 'string') throw new AppError(503, 'provider_bad_response', 'Stripe created a webhook endpoint without its signing secret', undefined, { retryAfterSeconds: 10 });
    return { id: e.id, secret: e.secret };
  }

  async deleteWebhookEndpoint(apiKey: string, id: string): Promise<void> {
    await this.call(apiKey, 'DELETE', `/webhook_endpoints/${encodeURIComponent(id)}`);
  }
}

/** `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.payload">` (several v1 during a secret roll). */
export function stripeSignature(secret: string, payload: string | Buffer, t: number): string {
  const mac = createHmac('sha256', secret).update(`${t}.`).update(payload).digest('hex');
  return `t=${t},v1=${mac}`;
}

/**
 * Verifies a Stripe webhook on its raw bytes: a v1 signature made with
 * `secret` over `t.payload`, in constant time, with `t` within
 * `toleranceSeconds` of now (replays of old deliveries fail). Fails closed
 * on an empty secret or header.
 */
export function verifyStripeSignature(secret: string, payload: Buffer, header: string | undefined, nowSeconds: number, toleranceSeconds = 300): boolean {
  if (secret === '' || header === undefined || header === '') return false;
  let t: number | undefined;
  const sigs: string[] = [];
  for (const part of header.split(',')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k === 't' && /^\d+$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) sigs.push(v);
  }
  if (t === undefined || sigs.length === 0 || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.`).update(payload).digest('hex'));
  return sigs.some((s) => timingSafeEqual(Buffer.from(s), expected));
}
