import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { CONNECTED_INTEGRATIONS, TOOL_STATUSES, type ConnectedIntegrationId } from '../../domain/tools.js';
import { AppError } from '../../errors.js';
import { ToolService, toolView, type ConnectedTools } from '../../tools/index.js';
import { defineRoute, type RouteDef } from '../route.js';

type BaseOf = (req: { protocol: string; hostname: string; host: string }) => string;

const toolId = z.string().regex(/^tool_[A-Za-z0-9_-]{8,64}$/, 'a tool id looks like tool_3kTq…').meta({ examples: ['tool_3kTqV9xY2bWm8RcAzL1p'] });
const toolSchema = z.object({
  id: z.string().describe('the tool ID: `{mcp_url}/mcp/{id}` is its MCP server'),
  name: z.string(),
  integration: z.enum(CONNECTED_INTEGRATIONS),
  status: z.enum(TOOL_STATUSES).describe('`active` once usable; `pending_authorization` until the user signs in; `authorization_denied`, `authorization_failed` and `reauthorization_required` ask for connect again'),
  status_reason: z.string().nullable(),
  provider: z.enum(['google', 'stripe', 'sandbox']),
  sandbox: z.boolean().describe('true when the tool talks to the sandbox providers (no real mail, events or money)'),
  account: z.string().nullable().describe('the account at the provider once known (mailbox address, merchant)'),
  mcp_url: z.string(),
  return_url: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_used_at: z.string().nullable(),
});
const url = z.string().trim().max(2000);
const connectBody = z
  .object({
    name: z.string().trim().min(1).max(100).describe('a label for the tool'),
    return_url: url.optional().describe('where to send the user after sign-in (with `tool_id` and `status` in the query); its origin must be allowed by the operator'),
    tool_id: toolId.optional().describe('re-authorize this existing tool of the same integration (keeps its id and MCP URL) instead of creating one'),
    data: z
      .object({
        api_key: z.string().trim().min(1).max(500).describe('the Stripe secret key (sk_live_…, sk_test_…, or a restricted rk_ key); on the sandbox, a key from POST /sandbox/providers/stripe/accounts'),
        webhook_secret: z.string().trim().min(1).max(500).optional().describe('the signing secret (whsec_…) of a webhook endpoint you created for this tool\'s webhook URL; without it the service registers an endpoint itself'),
        return_url: url.optional().describe('where customers land after paying (an allowed origin)'),
        merchant_name: z.string().trim().min(1).max(100).optional(),
      })
      .strict()
      .optional()
      .describe('payment integration only'),
  })
  .strict()
  // Without return_url: one needs its origin allowed by the operator first (POST /admin/v1/tools/return-origins).
  .meta({ examples: [{ name: 'Support inbox' }] });

function page(title: string, message: string): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}</style></head><body><h1>${esc(title)}</h1><p>${esc(message)}</p></body></html>`;
}

/**
 * Connected tools: connect, the sign-in callback, list/get/delete, the
 * payment provider's webhook, and the operator's allowed return origins.
 * `serviceBase()` is where people and providers reach this service
 * (PUBLIC_URL, else `http://localhost:<port>`; never the request's Host,
 * which a caller chooses); `mcpBase(req)` is `{mcp_url}`.
 */
export function toolRoutes(tools: ConnectedTools, serviceBase: () => string, mcpBase: BaseOf): RouteDef[] {
  const svc = tools.service;
  const base = (req: { protocol: string; hostname: string; get(h: string): string | undefined }) => ({ protocol: req.protocol, hostname: req.hostname, host: req.get('host') ?? req.hostname });
  return [
    defineRoute({
      method: 'post',
      path: '/v1/integrations/:integrationId/connect',
      operationId: 'connectIntegration',
      summary: 'Connect an integration: creates a tool (email and calendar answer with redirect_url for the user\'s sign-in; payment takes data.api_key)',
      tag: 'Tool gateway',
      auth: 'apiKey',
      scope: 'mcp:access',
      params: z.object({ integrationId: z.string().min(1).max(64).describe('email, calendar or payment (GET /v1/integrations lists them)').meta({ examples: ['email'] }) }),
      body: connectBody,
      responses: {
        201: { description: 'the tool; for email and calendar, `redirect_url` for the user to sign in', schema: toolSchema.extend({ redirect_url: z.string().optional() }) },
        200: { description: 'an existing tool (tool_id) re-authorized', schema: toolSchema.extend({ redirect_url: z.string().optional() }) },
        400: { description: 'invalid body, payment without data.api_key, a refused api_key, or a return_url whose origin is not allowed', schema: errorSchema },
        403: { description: 'the key lacks mcp:access', schema: errorSchema },
        404: { description: 'unknown integration (or tool_id)', schema: errorSchema },
        503: { description: 'the provider could not be reached, or the integration is not configured', schema: errorSchema },
      },
      handler: async ({ principal, params, body, req }) => {
        if (params.integrationId === 'platform') throw new AppError(400, 'no_connect_needed', 'the platform integration needs no connect step: use {mcp_url}/mcp/platform with your API key');
        if (!(CONNECTED_INTEGRATIONS as readonly string[]).includes(params.integrationId)) {
          throw new AppError(404, 'not_found', `integration ${params.integrationId} not found; GET /v1/integrations lists them (email, calendar, payment)`);
        }
        const r = await svc.connect(principal, params.integrationId as ConnectedIntegrationId, body, serviceBase());
        return { status: body.tool_id ? 200 : 201, body: { ...toolView(r.tool, mcpBase(base(req))), ...(r.redirectUrl ? { redirect_url: r.redirectUrl } : {}) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tools/oauth/callback',
      operationId: 'completeToolOAuth',
      summary: 'Where the identity provider sends the user after sign-in (OAuth 2.0 redirect URI): stores the tokens, then redirects to the return_url or shows a page',
      tag: 'Tool gateway',
      auth: 'none',
      query: z.object({ state: z.string().max(200).optional(), code: z.string().max(2000).optional(), error: z.string().max(200).optional(), error_description: z.string().max(2000).optional(), scope: z.string().max(4000).optional() }),
      responses: {
        302: { description: 'to the return_url, with `tool_id` and `status` (and `error`) in the query' },
        200: { description: 'an HTML page: connected' },
        400: { description: 'missing, forged, replayed or expired state (nothing changed), or an HTML page saying the sign-in was denied or failed', schema: errorSchema },
      },
      handler: async ({ query, res }) => {
        const out = await svc.callback(query);
        if ('redirect' in out) {
          res.redirect(302, out.redirect);
          return { status: 302 };
        }
        res.status(out.page.status).type('html').send(page(out.page.title, out.page.message));
        return { status: out.page.status };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tools',
      operationId: 'listTools',
      summary: 'List the organization\'s connected tools (never their credentials)',
      tag: 'Tool gateway',
      auth: 'apiKey',
      scope: 'mcp:access',
      responses: { 200: { description: 'oldest first', schema: z.object({ tools: z.array(toolSchema) }) }, 403: { description: 'the key lacks mcp:access', schema: errorSchema } },
      handler: async ({ principal, req }) => ({ body: { tools: (await svc.list(principal)).map((t) => toolView(t, mcpBase(base(req)))) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tools/:toolId',
      operationId: 'getTool',
      summary: 'Get one tool (never its credentials)',
      tag: 'Tool gateway',
      auth: 'apiKey',
      scope: 'mcp:access',
      params: z.object({ toolId }),
      responses: { 200: { description: 'the tool', schema: toolSchema }, 403: { description: 'the key lacks mcp:access', schema: errorSchema }, 404: { description: 'no such tool in this organization', schema: errorSchema } },
      handler: async ({ principal, params, req }) => ({ body: toolView(await svc.get(principal, params.toolId), mcpBase(base(req))) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/tools/:toolId',
      operationId: 'disconnectTool',
      summary: 'Disconnect a tool: revokes its access at the provider where possible and deletes its stored credentials for good',
      tag: 'Tool gateway',
      auth: 'apiKey',
      scope: 'mcp:access',
      params: z.object({ toolId }),
      responses: {
        200: { description: 'deleted', schema: z.object({ id: z.string(), deleted: z.literal(true), revoked_at_provider: z.boolean().describe('false when the provider could not be told (the credentials are deleted here anyway)') }) },
        403: { description: 'the key lacks mcp:access', schema: errorSchema },
        404: { description: 'no such tool in this organization', schema: errorSchema },
      },
      handler: async ({ principal, params }) => {
        const r = await svc.delete(principal, params.toolId);
        return { body: { id: r.tool.id, deleted: true as const, revoked_at_provider: r.revoked } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/tools/:toolId/payment-webhook',
      operationId: 'receivePaymentWebhook',
      // What Stripe sends when a customer paid (signed with the endpoint's whsec_ secret).
      example: {
        id: 'evt_1QxYz2AbCdEfGhIjKlMnOp',
        object: 'event',
        type: 'checkout.session.completed',
        created: 1767605400,
        data: { object: { id: 'cs_test_a1B2c3D4e5F6g7H8', object: 'checkout.session', payment_status: 'paid', amount_total: 4900, currency: 'eur' } },
      },
      summary: 'The payment provider\'s webhook for one payment tool (Stripe events, verified with Stripe-Signature over the raw body)',
      tag: 'Tool gateway',
      auth: 'none',
      params: z.object({ toolId }),
      // Parsed for the raw bytes; the signature is checked before anything is read.
      body: z.unknown(),
      keepsUnstorableText: true,
      responses: {
        200: { description: 'received (recorded: a paid/expired payment was recorded for the first time)', schema: z.object({ received: z.literal(true), recorded: z.boolean() }) },
        400: { description: 'missing or invalid Stripe-Signature (or no such tool): nothing recorded', schema: errorSchema },
      },
      handler: async ({ params, req }) => ({ body: await svc.paymentWebhook(params.toolId, req.rawBody, req.headers['stripe-signature'] as string | undefined) }),
    }),
    defineRoute({
      method: 'get',
      path: '/admin/v1/tools/return-origins',
      operationId: 'adminListReturnOrigins',
      summary: 'Origins a connect return_url may point at (TOOLS_ALLOWED_RETURN_ORIGINS plus those added here)',
      tag: 'Operator',
      auth: 'operator',
      responses: { 200: { description: 'the allowed origins', schema: z.object({ origins: z.array(z.string()), configured: z.array(z.string()) }) } },
      handler: async () => ({ body: { origins: await svc.allowedReturnOrigins(), configured: [...tools.configuredReturnOrigins] } }),
    }),
    defineRoute({
      method: 'post',
      path: '/admin/v1/tools/return-origins',
      operationId: 'adminAddReturnOrigin',
      example: { origin: 'https://app.example.com' },
      summary: 'Allow an origin for connect return_url',
      tag: 'Operator',
      auth: 'operator',
      body: z.object({ origin: url.min(1) }).strict(),
      responses: { 200: { description: 'the allowed origins', schema: z.object({ origins: z.array(z.string()), configured: z.array(z.string()) }) }, 400: { description: 'not an http(s) origin', schema: errorSchema } },
      handler: async ({ body }) => {
        await tools.repo.allowReturnOrigin(ToolService.originOf(body.origin, 'origin'));
        return { body: { origins: await svc.allowedReturnOrigins(), configured: [...tools.configuredReturnOrigins] } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/admin/v1/tools/return-origins',
      operationId: 'adminRemoveReturnOrigin',
      summary: 'Stop allowing an origin added with POST (configured ones stay until TOOLS_ALLOWED_RETURN_ORIGINS changes)',
      tag: 'Operator',
      auth: 'operator',
      query: z.object({ origin: url.min(1) }),
      responses: { 200: { description: 'the allowed origins', schema: z.object({ origins: z.array(z.string()), configured: z.array(z.string()), removed: z.boolean() }) }, 400: { description: 'not an http(s) origin', schema: errorSchema } },
      handler: async ({ query }) => {
        const removed = await tools.repo.removeReturnOrigin(ToolService.originOf(query.origin, 'origin'));
        return { body: { origins: await svc.allowedReturnOrigins(), configured: [...tools.configuredReturnOrigins], removed } };
      },
    }),
  ];
}
