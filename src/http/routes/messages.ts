import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import {
  apiV1TemplateSendSchema,
  buttonsSendSchema,
  mediaSendSchema,
  templateSendSchema,
  textSendSchema,
  type MessagingService,
} from '../../messaging/index.js';
import { idempotencyKey } from '../idempotency-key.js';
import { EXAMPLE_IDS, ORDER_UPDATE_TEMPLATE } from '../openapi-examples.js';
import { defineRoute, type RouteDef } from '../route.js';

const templateResult = z.object({ success: z.literal(true), messageId: z.string().describe("the chat network's message id; key of later message_status events"), timestamp: z.string() });
const sendResult = z.object({ success: z.boolean(), messageId: z.string().optional() });
const rejectedSchema = errorSchema.extend({ errorDetails: z.object({ code: z.number().int(), title: z.string(), message: z.string() }) }).meta({
  examples: [
    {
      success: false,
      error: { code: 'network_rejected', message: 'the chat network rejected the message: (#131026) Message undeliverable' },
      errorDetails: { code: 131026, title: 'Message undeliverable', message: 'Unable to deliver message. The recipient is not a WhatsApp user or has not accepted the latest terms.' },
    },
  ],
});
const common = {
  400: { description: 'invalid body (failing fields in details)', schema: errorSchema },
  401: { description: 'missing or invalid API key', schema: errorSchema },
  403: { description: 'the key lacks message:send', schema: errorSchema },
  404: { description: 'no such channel in the organization', schema: errorSchema },
  409: { description: "sandbox_disabled: the channel is on the sandbox network, which is off on this deployment", schema: errorSchema },
  422: { description: 'idempotency_key_reused: the Idempotency-Key came with another body before', schema: errorSchema },
  429: { description: "throughput_backlog_full: the channel's number already has SEND_PACING_MAX_WAIT_MS of sends waiting for its tier (nothing was sent; Retry-After)", schema: errorSchema },
  503: { description: 'the chat network or the conversation is unavailable; retry after Retry-After with the same Idempotency-Key', schema: errorSchema },
};
const templateErrors = {
  ...common,
  402: { description: 'not enough credits (nothing was sent)', schema: errorSchema },
  404: { description: 'no such channel, or no such template (name and language) on it', schema: errorSchema },
  422: { description: 'not_a_chat_channel: the channel is not a chat-network channel; or template_not_approved, or idempotency_key_reused', schema: errorSchema },
  429: { description: "rate_limited: more than the per-key limit of template sends per minute (Retry-After, RateLimit headers); or throughput_backlog_full: the number already has SEND_PACING_MAX_WAIT_MS of sends waiting for its tier (nothing was sent; Retry-After)", schema: errorSchema },
  502: { description: 'the chat network rejected the message; its code in errorDetails.code (credits refunded)', schema: rejectedSchema },
};
const freeformErrors = {
  ...common,
  409: { description: 'conversation_with_agent: a human has the conversation (templates still go); or sandbox_disabled', schema: errorSchema },
  422: { description: 'outside_customer_service_window: the customer has not written in 24 hours (details.closedAt); or idempotency_key_reused', schema: errorSchema },
  502: { description: 'the chat network rejected the message; its code in errorDetails.code', schema: rejectedSchema },
};

export function messageRoutes(messaging: MessagingService): RouteDef[] {
  const rateLimit = async ({ principal, res }: { principal: Parameters<MessagingService['checkTemplateRate']>[0]; res: { setHeader(n: string, v: string): unknown } }) =>
    messaging.checkTemplateRate(principal, (n, v) => void res.setHeader(n, v));
  return [
    defineRoute({
      method: 'post',
      path: '/v2/wa/template',
      operationId: 'sendTemplate',
      example: { channelId: EXAMPLE_IDS.channelId, to: EXAMPLE_IDS.customerPhone, template: ORDER_UPDATE_TEMPLATE },
      summary: 'Send an approved template message (the first send to a number creates the contact and its conversation)',
      tag: 'Messages',
      auth: 'apiKey',
      scope: 'message:send',
      preValidate: rateLimit,
      body: templateSendSchema,
      responses: { 201: { description: 'accepted by the chat network (not yet delivered)', schema: templateResult }, ...templateErrors },
      handler: async (ctx) => ({ status: 201, body: await messaging.sendTemplate(ctx.principal, ctx.body, idempotencyKey(ctx)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/wa/template',
      operationId: 'sendTemplateV1',
      example: { channelId: EXAMPLE_IDS.channelId, to: EXAMPLE_IDS.customerPhone, template: ORDER_UPDATE_TEMPLATE },
      summary: 'Send a template message (deprecated: every failure is an opaque 500; use /v2/wa/template)',
      tag: 'Messages',
      auth: 'apiKey',
      scope: 'message:send',
      preValidate: rateLimit,
      body: templateSendSchema,
      deprecated: { successor: '/v2/wa/template' },
      opaqueFailures: true,
      responses: { 201: { description: 'accepted by the chat network', schema: templateResult }, 500: { description: 'any failure, without detail', schema: errorSchema } },
      handler: async (ctx) => ({ status: 201, body: await messaging.sendTemplate(ctx.principal, ctx.body, idempotencyKey(ctx)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/messages/text',
      operationId: 'sendText',
      example: { channelId: EXAMPLE_IDS.channelId, to: EXAMPLE_IDS.customerPhone, text: { body: 'Thanks, Ann. A replacement is on its way; it arrives on Thursday.' } },
      summary: 'Send a plain text message (inside the 24-hour window)',
      tag: 'Messages',
      auth: 'apiKey',
      scope: 'message:send',
      body: textSendSchema,
      responses: { 200: { description: '`success: false` (nothing sent) when the channel is not a chat-network channel', schema: sendResult }, ...freeformErrors },
      handler: async (ctx) => ({ body: await messaging.sendText(ctx.principal, ctx.body, idempotencyKey(ctx)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/messages/buttons',
      operationId: 'sendButtons',
      example: { channelId: EXAMPLE_IDS.channelId, to: EXAMPLE_IDS.customerPhone, interactive: { body: { text: 'Did the replacement arrive in one piece?' }, footer: { text: 'Acme Support' }, buttons: [{ id: 'arrived_ok', title: 'Yes, all good' }, { id: 'arrived_damaged', title: 'No, damaged' }] } },
      summary: 'Send an interactive message with 1 to 3 reply buttons (inside the 24-hour window)',
      tag: 'Messages',
      auth: 'apiKey',
      scope: 'message:send',
      body: buttonsSendSchema,
      responses: { 200: { description: '`success: false` (nothing sent) when the channel is not a chat-network channel', schema: sendResult }, ...freeformErrors },
      handler: async (ctx) => ({ body: await messaging.sendButtons(ctx.principal, ctx.body, idempotencyKey(ctx)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/messages/media',
      operationId: 'sendMedia',
      example: { channelId: EXAMPLE_IDS.channelId, to: EXAMPLE_IDS.customerPhone, media: { type: 'document', document: { link: 'https://shop.example.com/invoices/1042.pdf', caption: 'Your invoice for order #1042', filename: 'invoice-1042.pdf' } } },
      summary: 'Send an image, video, audio, document or sticker by https link or media id (inside the 24-hour window)',
      tag: 'Messages',
      auth: 'apiKey',
      scope: 'message:send',
      body: mediaSendSchema,
      responses: { 200: { description: '`success: false` (nothing sent) when the channel is not a chat-network channel', schema: sendResult }, ...freeformErrors },
      handler: async (ctx) => ({ body: await messaging.sendMedia(ctx.principal, ctx.body, idempotencyKey(ctx)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/whatsapp/send-template',
      operationId: 'sendWhatsappTemplate',
      example: { to: '+' + EXAMPLE_IDS.customerPhone, template: 'order_update', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }, { type: 'text', text: '#1042' }, { type: 'text', text: 'Thursday, 8 January' }] }], channelId: EXAMPLE_IDS.channelId },
      summary: 'Send a template message (/api/v1 shape: `to` with +, template and language as strings)',
      tag: 'Messages',
      auth: 'apiKey',
      scope: 'chat:send',
      preValidate: rateLimit,
      body: apiV1TemplateSendSchema,
      responses: {
        200: { description: 'accepted by the chat network', schema: z.object({ message_id: z.string(), status: z.string() }) },
        400: { description: 'invalid payload (or parameters that do not fit the template)', schema: errorSchema },
        401: { description: 'bad or missing API key', schema: errorSchema },
        402: { description: 'not enough credits', schema: errorSchema },
        404: { description: 'template not found or not approved (or no chat channel)', schema: errorSchema },
        409: common[409],
        422: common[422],
        503: common[503],
        429: { description: 'rate limited, or the number\'s send backlog is full (Retry-After)', schema: errorSchema },
        502: { description: 'the chat network rejected the message', schema: rejectedSchema },
      },
      handler: async (ctx) => ({ body: await messaging.sendApiV1Template(ctx.principal, ctx.body, idempotencyKey(ctx)) }),
    }),
  ];
}
