import { z } from 'zod';
import type { HandoverService } from '../../conversations/index.js';
import { audienceExternalId, errorSchema } from '../../app/schemas.js';
import { badRequest } from '../../errors.js';
import { EXAMPLE_IDS } from '../openapi-examples.js';
import { defineRoute, type RouteContext, type RouteDef } from '../route.js';

const handoverBody = z.object({
  audienceExternalId: audienceExternalId.describe('the contact, `<phone>:<phoneNumberId>`'),
});

const handoverResult = z.object({ success: z.boolean() });

/** Optional `Idempotency-Key` header: a retried call with the same key gets the first answer, never a second change. */
export function idempotencyKey(ctx: RouteContext<unknown, unknown, unknown>): string | undefined {
  const h = ctx.req.headers['idempotency-key'];
  if (h === undefined) return undefined;
  if (typeof h !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(h)) throw badRequest('invalid_idempotency_key', 'Idempotency-Key must be 1 to 200 visible ASCII characters');
  return h;
}

const unavailable = { description: 'the conversation is busy or moving between nodes; retry after Retry-After (with the same Idempotency-Key)', schema: errorSchema };

export function handoverRoutes(handover: HandoverService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/handover',
      operationId: 'requestHandover',
      example: { audienceExternalId: EXAMPLE_IDS.audienceExternalId },
      summary: 'Request a human agent: the contact\'s latest conversation goes to the live-chat queue',
      tag: 'Handover',
      auth: 'apiKey',
      scope: 'conversation:handover:request',
      body: handoverBody,
      responses: {
        200: { description: '`success: true` when queued now; `success: false` (nothing changed) when a handover is already pending or an agent has the conversation', schema: handoverResult },
        404: { description: 'no such contact in the organization', schema: errorSchema },
        503: unavailable,
      },
      handler: async (ctx) => {
        const r = await handover.request(ctx.principal, ctx.body.audienceExternalId, idempotencyKey(ctx));
        return { body: { success: r.success } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/handover/open',
      operationId: 'openHandover',
      example: { audienceExternalId: EXAMPLE_IDS.audienceExternalId },
      summary: 'Hand the conversation back to the bot',
      tag: 'Handover',
      auth: 'apiKey',
      scope: 'conversation:handover:open',
      body: handoverBody,
      responses: {
        200: { description: '`success: true` when handed back now; `success: false` (nothing changed) when the bot already has the conversation', schema: handoverResult },
        404: { description: 'no such contact in the organization', schema: errorSchema },
        503: unavailable,
      },
      handler: async (ctx) => {
        const r = await handover.open(ctx.principal, ctx.body.audienceExternalId, idempotencyKey(ctx));
        return { body: { success: r.success } };
      },
    }),
  ];
}
