import { z } from 'zod';
import { AppError } from '../errors.js';
import { defineTool, type ToolDef } from '../mcp/index.js';
import type { CheckoutSession } from './providers/stripe.js';
import { sessionOf, type ToolSession } from './session.js';

/*
 * The payment tools: Stripe Checkout Sessions with the connected account's
 * API key. A payment request is a hosted payment page (`url`) the customer
 * opens; its id is the Checkout Session id.
 */

/** Currencies without minor units (Stripe's zero-decimal list, the common ones). */
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
const minorPer = (currency: string) => (ZERO_DECIMAL.has(currency) ? 1 : 100);

const paymentId = z.string().regex(/^cs_[A-Za-z0-9_]{8,200}$/, 'a payment id from create_payment_request, like cs_test_a1B2c3…').describe('The paymentId from create_payment_request.');
const status = z.enum(['open', 'paid', 'expired']).describe('open: waiting for the customer; paid: the money arrived; expired: cancelled or timed out, can no longer be paid.');

const paymentSchema = z.object({
  paymentId: z.string(),
  status,
  amount: z.string().describe('The amount in major units with currency, e.g. "42.50 EUR".'),
  amountMinor: z.number().int().describe('The amount in the currency\'s minor units (cents).'),
  currency: z.string(),
  description: z.string().nullable(),
  url: z.string().nullable().describe('The payment page for the customer; null once paid or expired.'),
  expiresAt: z.string().describe('When an unpaid request expires, ISO 8601.'),
  customerEmail: z.string().nullable(),
  reference: z.string().nullable(),
  paidConfirmedByWebhook: z.boolean().describe('True when the provider\'s signed webhook reported the payment (not only its API).'),
  sandbox: z.boolean().describe('True on the sandbox payment provider: no real money moves.'),
});

function money(minor: number | null, currency: string | null): string {
  const c = (currency ?? '').toLowerCase();
  const m = minorPer(c);
  return `${((minor ?? 0) / m).toFixed(m === 1 ? 0 : 2)} ${c.toUpperCase()}`;
}

async function view(s: ToolSession, cs: CheckoutSession): Promise<z.input<typeof paymentSchema>> {
  const events = await s.paymentEvents(cs.id);
  const paidByWebhook = events.some((e) => e.status === 'paid');
  const st = cs.status === 'complete' && cs.payment_status !== 'unpaid' ? 'paid' : paidByWebhook ? 'paid' : cs.status === 'expired' ? 'expired' : 'open';
  return {
    paymentId: cs.id,
    status: st,
    amount: money(cs.amount_total, cs.currency),
    amountMinor: cs.amount_total ?? 0,
    currency: (cs.currency ?? '').toUpperCase(),
    description: cs.metadata?.description ?? null,
    url: st === 'open' ? cs.url : null,
    expiresAt: new Date(cs.expires_at * 1000).toISOString(),
    customerEmail: cs.customer_details?.email ?? cs.customer_email ?? null,
    reference: cs.client_reference_id ?? null,
    paidConfirmedByWebhook: paidByWebhook,
    sandbox: s.tool.provider === 'sandbox',
  };
}

export function paymentTools(): ToolDef[] {
  return [
    defineTool({
      name: 'create_payment_request',
      title: 'Create a payment request',
      description:
        'Ask a customer for money: creates a hosted payment page (Stripe Checkout) for one amount and returns its url to send to the customer, and a paymentId to follow it with check_payment_status. ' +
        'amount is in major units ("42.50" for 42.50 EUR). The request expires after expiresInMinutes (30 to 1440, default 1440) if not paid. ' +
        'Give an idempotencyKey (e.g. the order number) so a retried call returns the same request instead of charging twice.',
      scopes: [],
      input: z
        .object({
          amount: z
            .union([z.number(), z.string().regex(/^\d+(\.\d{1,2})?$/, 'a decimal amount like 42.50')])
            .describe('Amount in major units, e.g. 42.5 or "42.50". At least 0.50 (50 for zero-decimal currencies such as JPY).'),
          currency: z.string().regex(/^[A-Za-z]{3}$/, 'a three-letter ISO currency code such as EUR or USD').transform((c) => c.toLowerCase()).describe('ISO 4217 code, e.g. "EUR".'),
          description: z.string().trim().min(1).max(250).describe('What the customer pays for, shown on the payment page (e.g. "Order #1042 replacement lid").'),
          customerEmail: z.email().optional().describe('Pre-fills the payment page and receives the receipt.'),
          reference: z.string().trim().min(1).max(200).optional().describe('Your reference (order or ticket id), returned by check_payment_status.'),
          expiresInMinutes: z.number().int().min(30).max(1440).default(1440),
          idempotencyKey: z.string().regex(/^[\x21-\x7e]{1,200}$/, '1 to 200 visible ASCII characters').optional(),
        })
        .strict(),
      output: paymentSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        const amountNumber = typeof a.amount === 'number' ? a.amount : Number(a.amount);
        const minor = Math.round(amountNumber * minorPer(a.currency));
        if (!Number.isFinite(minor) || Math.abs(minor - amountNumber * minorPer(a.currency)) > 1e-6) {
          throw new AppError(400, 'validation_failed', `amount ${String(a.amount)} has more decimals than ${a.currency.toUpperCase()} allows`, [{ field: 'amount', message: 'too many decimals' }]);
        }
        const cs = await s.withApiKey((c) =>
          s.stripe.createCheckoutSession(
            c.apiKey,
            {
              amount: minor,
              currency: a.currency,
              description: a.description,
              customerEmail: a.customerEmail,
              successUrl: c.returnUrl ?? undefined,
              expiresAt: Math.floor(Date.now() / 1000) + a.expiresInMinutes * 60,
              reference: a.reference,
              metadata: { description: a.description, switchboard_tool: s.tool.id },
            },
            a.idempotencyKey ? `${s.tool.id}:${a.idempotencyKey}` : undefined,
          ),
        );
        return view(s, cs);
      },
    }),
    defineTool({
      name: 'check_payment_status',
      title: 'Check a payment',
      description:
        'Whether a payment request was paid: open (not yet), paid, or expired (cancelled or timed out). Also the customer\'s email once they paid. Read it from the provider each call, ' +
        'so it is current; do not tell a customer their payment arrived unless status is paid.',
      scopes: [],
      input: z.object({ paymentId }).strict(),
      output: paymentSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        return view(s, await s.withApiKey((c) => s.stripe.getCheckoutSession(c.apiKey, a.paymentId)));
      },
    }),
    defineTool({
      name: 'cancel_payment',
      title: 'Cancel a payment request',
      description:
        'Cancel an open payment request so it can no longer be paid (its page stops working). A paid request cannot be cancelled (refunds are made in the payment provider\'s dashboard); an expired one stays expired. Returns the request as it is now.',
      scopes: [],
      input: z.object({ paymentId }).strict(),
      output: paymentSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        return s.withApiKey(async (c) => {
          const cur = await s.stripe.getCheckoutSession(c.apiKey, a.paymentId);
          if (cur.status === 'complete') throw new AppError(409, 'payment_already_paid', `payment ${a.paymentId} is already paid and cannot be cancelled; a refund is made in the payment provider's dashboard`);
          if (cur.status === 'expired') return view(s, cur);
          return view(s, await s.stripe.expireCheckoutSession(c.apiKey, a.paymentId));
        });
      },
    }),
    defineTool({
      name: 'get_payment_instructions',
      title: 'Payment instructions for the customer',
      description:
        'A short message to send the customer telling them how to pay an open request (the link, amount, what for, and until when), or that it is already paid or expired. Send the text as it is, or adapt it to the conversation.',
      scopes: [],
      input: z.object({ paymentId, language: z.enum(['en', 'de']).default('en').describe('Language of the instructions: en or de.') }).strict(),
      output: paymentSchema.extend({ instructions: z.string() }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        const v = await view(s, await s.withApiKey((c) => s.stripe.getCheckoutSession(c.apiKey, a.paymentId)));
        const until = new Date(v.expiresAt).toUTCString();
        const de = a.language === 'de';
        const text =
          v.status === 'paid'
            ? de ? `Ihre Zahlung über ${v.amount}${v.description ? ` für ${v.description}` : ''} ist eingegangen. Vielen Dank!` : `Your payment of ${v.amount}${v.description ? ` for ${v.description}` : ''} has been received. Thank you!`
            : v.status === 'expired'
              ? de ? 'Diese Zahlungsanfrage ist abgelaufen. Wir senden Ihnen bei Bedarf einen neuen Link.' : 'This payment request has expired. We can send you a new link if needed.'
              : de
                ? `Bitte zahlen Sie ${v.amount}${v.description ? ` für ${v.description}` : ''} über diesen sicheren Link: ${v.url ?? ''}\nSie können mit Karte bezahlen. Der Link ist gültig bis ${until}.`
                : `Please pay ${v.amount}${v.description ? ` for ${v.description}` : ''} using this secure link: ${v.url ?? ''}\nYou can pay by card. The link is valid until ${until}.`;
        return { ...v, instructions: text };
      },
    }),
  ];
}
