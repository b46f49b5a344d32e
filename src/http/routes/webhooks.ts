import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { publicDelivery, publicRegistration, SUBSCRIBABLE_EVENTS, type WebhookRegistrations } from '../../webhooks/index.js';
import { defineRoute, type RouteDef } from '../route.js';

const events = z.array(z.string().max(100)).max(20).describe(`event names (${SUBSCRIBABLE_EVENTS.join(', ')}); "*" for all`);
const createBody = z.object({ url: z.string().min(1).max(2048).describe('https URL of the receiver'), events }).strict();
const updateBody = z
  .object({ events: events.optional(), enabled: z.boolean().optional().describe('false disables deliveries; true re-enables (after a 410, for example)') })
  .strict()
  .refine((v) => v.events !== undefined || v.enabled !== undefined, { message: 'send events and/or enabled' });
const idParams = z.object({ id: z.uuid() });
const deliveryParams = z.object({ id: z.uuid(), deliveryId: z.uuid() });
const deliveriesQuery = z.object({
  status: z.enum(['pending', 'succeeded', 'failed']).optional(),
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

const registrationSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  status: z.enum(['active', 'disabled']),
  disabledReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const attemptSchema = z.object({ at: z.string(), status: z.number().int().nullable(), latencyMs: z.number(), error: z.string().nullable() });
const deliverySchema = z.object({
  id: z.string(),
  registrationId: z.string(),
  eventId: z.string().describe('also the webhook-id header'),
  eventType: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  attemptCount: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  retryUntil: z.string(),
  attempts: z.array(attemptSchema).describe('every attempt: HTTP status (null without a response), latency and error'),
  payload: z.string().describe('the exact request body'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/**
 * `/api/v1/webhooks`: registration (with the ownership challenge), listing,
 * reading (never the secret), changing events / re-enabling, deleting,
 * rotating the secret, and the delivery log with resend. Every operation
 * needs `webhook:create`, the one webhook scope there is.
 */
export function webhookRoutes(webhooks: WebhookRegistrations): RouteDef[] {
  const common = { tag: 'Webhooks', auth: 'apiKey' as const, scope: 'webhook:create' as const };
  return [
    defineRoute({
      ...common,
      method: 'post',
      path: '/api/v1/webhooks',
      operationId: 'createWebhook',
      example: { url: 'https://crm.example.com/hooks/switchboard', events: ['message_status', 'inbound_message'] },
      summary: 'Register a webhook (the URL must answer GET ?challenge=<value> with 200 and the value)',
      body: createBody,
      responses: {
        201: { description: 'registered; the secret is shown only here', schema: z.object({ id: z.string(), url: z.string(), events: z.array(z.string()), secret: z.string() }) },
        400: { description: 'invalid payload, forbidden URL, unknown events, or the challenge failed', schema: errorSchema },
        401: { description: 'missing or invalid API key', schema: errorSchema },
        409: { description: 'webhook_url_taken: the URL is already registered in the organization', schema: errorSchema },
      },
      handler: async ({ principal, body }) => {
        const r = await webhooks.create(principal.organizationId, body);
        return { status: 201, body: { id: r.id, url: r.url, events: r.events, secret: r.secret } };
      },
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/api/v1/webhooks',
      operationId: 'listWebhooks',
      summary: "List the organization's webhook registrations",
      responses: { 200: { description: 'registrations, oldest first, without secrets', schema: z.object({ webhooks: z.array(registrationSchema) }) } },
      handler: async ({ principal }) => ({ body: { webhooks: (await webhooks.list(principal.organizationId)).map(publicRegistration) } }),
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/api/v1/webhooks/:id',
      operationId: 'getWebhook',
      summary: 'Read one webhook registration (without its secret)',
      params: idParams,
      responses: { 200: { description: 'the registration', schema: registrationSchema }, 404: { description: 'no such registration in the organization', schema: errorSchema } },
      handler: async ({ principal, params }) => ({ body: publicRegistration(await webhooks.get(principal.organizationId, params.id)) }),
    }),
    defineRoute({
      ...common,
      method: 'patch',
      path: '/api/v1/webhooks/:id',
      operationId: 'updateWebhook',
      example: { events: ['message_status'], enabled: true },
      summary: 'Change the events of a registration, or disable / re-enable it',
      params: idParams,
      body: updateBody,
      responses: { 200: { description: 'the registration', schema: registrationSchema }, 404: { description: 'no such registration', schema: errorSchema } },
      handler: async ({ principal, params, body }) => ({ body: publicRegistration(await webhooks.update(principal.organizationId, params.id, body)) }),
    }),
    defineRoute({
      ...common,
      method: 'delete',
      path: '/api/v1/webhooks/:id',
      operationId: 'deleteWebhook',
      summary: 'Delete a registration with its pending and past deliveries',
      params: idParams,
      responses: { 204: { description: 'deleted' }, 404: { description: 'no such registration', schema: errorSchema } },
      handler: async ({ principal, params }) => {
        await webhooks.delete(principal.organizationId, params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      ...common,
      method: 'post',
      path: '/api/v1/webhooks/:id/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Issue a new secret; the old one keeps signing webhook-signature for 24 hours',
      params: idParams,
      responses: {
        200: { description: 'the new secret (shown only here)', schema: z.object({ id: z.string(), secret: z.string(), previousSecretExpiresAt: z.string() }) },
        404: { description: 'no such registration', schema: errorSchema },
      },
      handler: async ({ principal, params }) => {
        const r = await webhooks.rotateSecret(principal.organizationId, params.id);
        return { body: { id: r.id, secret: r.secret, previousSecretExpiresAt: r.previousSecret!.expiresAt } };
      },
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/api/v1/webhooks/:id/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'List deliveries of a registration, newest first, with every attempt',
      params: idParams,
      query: deliveriesQuery,
      responses: {
        200: { description: 'a page of deliveries', schema: z.object({ deliveries: z.array(deliverySchema), total: z.number().int(), page: z.number().int(), totalPages: z.number().int() }) },
        404: { description: 'no such registration', schema: errorSchema },
      },
      handler: async ({ principal, params, query }) => {
        const page = await webhooks.listDeliveries(principal.organizationId, params.id, query);
        return { body: { ...page, deliveries: page.deliveries.map(publicDelivery) } };
      },
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/api/v1/webhooks/:id/deliveries/:deliveryId',
      operationId: 'getWebhookDelivery',
      summary: 'Read one delivery with its attempts',
      params: deliveryParams,
      responses: { 200: { description: 'the delivery', schema: deliverySchema }, 404: { description: 'no such delivery', schema: errorSchema } },
      handler: async ({ principal, params }) => ({ body: publicDelivery(await webhooks.getDelivery(principal.organizationId, params.id, params.deliveryId)) }),
    }),
    defineRoute({
      ...common,
      method: 'post',
      path: '/api/v1/webhooks/:id/deliveries/:deliveryId/resend',
      operationId: 'resendWebhookDelivery',
      summary: 'Send a finished (typically failed) delivery again, with a fresh retry window',
      params: deliveryParams,
      responses: {
        202: { description: 'scheduled', schema: deliverySchema },
        404: { description: 'no such delivery', schema: errorSchema },
        409: { description: 'delivery_pending: the delivery is still pending; or webhook_disabled: the registration is disabled', schema: errorSchema },
      },
      handler: async ({ principal, params }) => ({ status: 202, body: publicDelivery(await webhooks.resend(principal.organizationId, params.id, params.deliveryId)) }),
    }),
  ];
}
