import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { badRequest } from '../../errors.js';
import { textSendSchema, type MessagingService } from '../../messaging/index.js';
import { defineRoute, type RouteDef } from '../route.js';

/*
 * `POST /v1/messages/text` (issue 6): the free-form text send the spec's REST
 * API lacks, REST twin of the MCP tool send_text_message. Same scope, same
 * rules and the same answers as /v1/messages/buttons and /v1/messages/media
 * (src/http/routes/messages.ts): one MessagingService behind all of them.
 */

const sendResult = z.object({ success: z.boolean(), messageId: z.string().optional().describe("the chat network's message id") });
const rejectedSchema = errorSchema.extend({ errorDetails: z.object({ code: z.number().int(), title: z.string(), message: z.string() }) });

export function textMessageRoutes(messaging: MessagingService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/messages/text',
      summary: 'Send a free-form text message (inside the 24-hour window, while the bot has the conversation)',
      tag: 'Messages',
      auth: 'apiKey',
      scope: 'message:send',
      body: textSendSchema,
      responses: {
        200: { description: '`success: false` (nothing sent) when the channel is not a chat-network channel', schema: sendResult },
        400: { description: 'invalid body (failing fields in details)', schema: errorSchema },
        401: { description: 'missing or invalid API key', schema: errorSchema },
        403: { description: 'the key lacks message:send', schema: errorSchema },
        404: { description: 'no such channel in the organization', schema: errorSchema },
        409: { description: 'conversation_with_agent: a human has the conversation (templates still go)', schema: errorSchema },
        422: { description: 'outside_customer_service_window: the customer has not written in 24 hours (details.closedAt)', schema: errorSchema },
        502: { description: 'the chat network rejected the message; its code in errorDetails.code', schema: rejectedSchema },
        503: { description: 'the chat network or the conversation is unavailable; retry after Retry-After with the same Idempotency-Key', schema: errorSchema },
      },
      handler: async (ctx) => {
        const h = ctx.req.headers['idempotency-key'];
        if (h !== undefined && (typeof h !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(h))) {
          throw badRequest('invalid_idempotency_key', 'Idempotency-Key must be 1 to 200 visible ASCII characters');
        }
        return { body: await messaging.sendText(ctx.principal, ctx.body, h) };
      },
    }),
  ];
}
