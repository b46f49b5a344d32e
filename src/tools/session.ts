import type { PaymentEvent, ToolRecord } from '../domain/tools.js';
import type { CalendarClient } from './providers/gcal.js';
import type { GmailClient } from './providers/gmail.js';
import type { StripeClient } from './providers/stripe.js';
import type { ApiKeyCredentials } from '../domain/tools.js';

/** What the tool server needs from the service to act for one connected tool. */
export interface ToolAccess {
  /** Runs `fn` with a valid OAuth access token: refreshed before expiry, and once more after a 401. */
  withToken<T>(tool: ToolRecord, fn: (token: string) => Promise<T>): Promise<T>;
  /** Runs `fn` with the API key credentials (payment tools). */
  withApiKey<T>(tool: ToolRecord, fn: (creds: ApiKeyCredentials) => Promise<T>): Promise<T>;
  paymentEvents(tool: ToolRecord, paymentId: string): Promise<PaymentEvent[]>;
}

/**
 * One connected tool bound to one MCP request: the record (checked active
 * for the caller's organization when the request began) and the adapters of
 * its provider. The MCP tools reach their provider only through it.
 */
export class ToolSession {
  constructor(
    readonly tool: ToolRecord,
    private readonly access: ToolAccess,
    readonly gmail: GmailClient,
    readonly calendar: CalendarClient,
    readonly stripe: StripeClient,
  ) {}

  withToken<T>(fn: (token: string) => Promise<T>): Promise<T> {
    return this.access.withToken(this.tool, fn);
  }

  withApiKey<T>(fn: (creds: ApiKeyCredentials) => Promise<T>): Promise<T> {
    return this.access.withApiKey(this.tool, fn);
  }

  paymentEvents(paymentId: string): Promise<PaymentEvent[]> {
    return this.access.paymentEvents(this.tool, paymentId);
  }
}

/** The session the gateway bound to this request (`ToolContext.target`). */
export function sessionOf(ctx: { target?: unknown }): ToolSession {
  if (!(ctx.target instanceof ToolSession)) throw new Error('no connected tool is bound to this MCP request');
  return ctx.target;
}
