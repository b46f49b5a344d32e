/*
 * Connected tools: an organization's connection to a third-party service
 * (a mailbox, a calendar, a payment account), served as an MCP server at
 * `/mcp/{tool_id}`. Records shared by the store and the tools feature.
 */

export const CONNECTED_INTEGRATIONS = ['email', 'calendar', 'payment'] as const;
export type ConnectedIntegrationId = (typeof CONNECTED_INTEGRATIONS)[number];

/**
 * - `pending_authorization`: connected, waiting for the user to approve at the identity provider;
 * - `active`: usable at `/mcp/{tool_id}`;
 * - `authorization_denied`: the user declined at the identity provider (connect again to retry);
 * - `authorization_failed`: the sign-in failed (code exchange refused, provider down);
 * - `reauthorization_required`: the provider revoked the grant (`invalid_grant`); connect again.
 */
export const TOOL_STATUSES = ['pending_authorization', 'active', 'authorization_denied', 'authorization_failed', 'reauthorization_required'] as const;
export type ToolStatus = (typeof TOOL_STATUSES)[number];

/** Which HTTP API a tool talks to: the real provider's, or the sandbox provider this service serves. */
export type ToolProvider = 'google' | 'stripe' | 'sandbox';

export interface ToolRecord {
  /** `tool_…`, unique across organizations. */
  id: string;
  organizationId: string;
  integration: ConnectedIntegrationId;
  name: string;
  status: ToolStatus;
  /** Why the tool is not active, in words a person can act on; null when active. */
  statusReason: string | null;
  provider: ToolProvider;
  /** The account at the provider once known (the mailbox address, the merchant name). */
  account: string | null;
  /** Where the user is sent after sign-in (an allowed origin), null for none. */
  returnUrl: string | null;
  /** The API key that connected it. */
  createdByKeyId: string;
  createdAt: string;
  updatedAt: string;
  lastUsedAt: string | null;
}

export interface OAuthCredentials {
  kind: 'oauth';
  accessToken: string;
  /** Null when the provider issued none (then the tool needs sign-in again when the access token expires). */
  refreshToken: string | null;
  /** Epoch milliseconds. */
  expiresAt: number;
  scope: string;
}

export interface ApiKeyCredentials {
  kind: 'api_key';
  apiKey: string;
  /** Verifies the provider's webhooks (Stripe `whsec_…`). */
  webhookSecret: string | null;
  /** The webhook endpoint the service registered at the provider, removed on delete. */
  webhookEndpointId: string | null;
  /** Where a customer lands after paying (payment tools). */
  returnUrl: string | null;
  merchantName: string | null;
}

export type ToolCredentials = OAuthCredentials | ApiKeyCredentials;

/** One sign-in in flight: single use, expiring, bound to the organization and the tool. */
export interface OAuthState {
  state: string;
  organizationId: string;
  toolId: string;
  /** PKCE code verifier (RFC 7636), sent with the code exchange. */
  codeVerifier: string;
  redirectUri: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** What the service learned about a payment request from the provider's signed webhooks. */
export interface PaymentEvent {
  paymentId: string;
  status: 'paid' | 'expired';
  eventId: string;
  at: string;
}
