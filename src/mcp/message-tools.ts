import { z } from 'zod';
import { address, buttonsSendSchema, mediaSendSchema, oneAddress, templateSendSchema, textSendSchema, type ChannelView, type MessagingService } from '../messaging/index.js';
import { defineTool, type ToolDef } from './tool.js';

/*
 * The free-form send tools: the request bodies of /v1/messages/text,
 * /v1/messages/buttons and /v1/messages/media (the messaging module's zod
 * schemas, so the limits are the REST API's), with descriptions for a model,
 * sent through MessagingService exactly as the REST routes send them.
 */

const channelId = address.channelId.describe(
  "The chat channel to send from (with `to`): the channelId of the customer's inbound_message webhook, or one from list_channels. Or give audienceExternalId instead of channelId and to.",
);
const to = address.to.describe("The customer's phone number in international format, digits only, no + or spaces, e.g. \"4915112345678\" (with channelId).");
const audienceExternalId = address.audienceExternalId.describe(
  'The contact instead of channelId + to: `<phone>:<phone number id>`, e.g. "4915112345678:106540352242922", the audienceExternalId of a ticket or an inbound_message webhook.',
);
const idempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,200}$/, '1 to 200 visible ASCII characters')
  .optional()
  .describe('Optional. When retrying a send that failed with a temporary error, pass the same value as the first attempt: the message is then never sent twice.');

const sendResult = z.object({
  success: z.boolean().describe('false (nothing sent) when the channel is not a chat-network channel'),
  messageId: z.string().optional().describe("the chat network's message id; accepted does not yet mean delivered"),
});

const RULES =
  'Address the customer with audienceExternalId, or with channelId and to. ' +
  'Free-form messages are only allowed within 24 hours of the customer\'s last message; outside that window the tool fails and an approved template must be sent instead with send_template_message. ' +
  'They are also refused while a human agent has the conversation (after request_handover). Needs the API key scope message:send.';

const sendAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

export function textTool(messaging: MessagingService): ToolDef {
  return defineTool({
    name: 'send_text_message',
    title: 'Send a text message',
    description: 'Send a plain text message to a customer on the chat network (WhatsApp). ' + RULES,
    scopes: ['message:send'],
    input: z
      .object({
        channelId,
        to,
        audienceExternalId,
        text: textSendSchema.shape.text.describe('The message: `body` is the text (up to 4096 characters); `previewUrl` shows a preview of the first link.'),
        idempotencyKey,
      })
      .strict()
      .superRefine(oneAddress),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => {
      return messaging.sendText(ctx.principal, req, key);
    },
  });
}

export function buttonsTool(messaging: MessagingService): ToolDef {
  const interactive = buttonsSendSchema.shape.interactive;
  return defineTool({
    name: 'send_buttons_message',
    title: 'Send a message with reply buttons',
    description:
      'Send a message with one to three reply buttons the customer can tap (for example "Track order" / "Talk to us"). ' +
      'A tap comes back as an inbound message carrying the button id. ' +
      RULES,
    scopes: ['message:send'],
    input: z
      .object({
        channelId,
        to,
        audienceExternalId,
        interactive: interactive.describe(
          'The message: `body.text` (up to 1024 characters), optional `header.text` and `footer.text` (up to 60 each), and `buttons`: 1 to 3 of {id, title}, ' +
            'where `id` (up to 256 characters, unique) comes back when tapped and `title` (up to 20 characters) is what the customer sees.',
        ),
        idempotencyKey,
      })
      .strict()
      .superRefine(oneAddress),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => {
      return messaging.sendButtons(ctx.principal, req, key);
    },
  });
}

export function mediaTool(messaging: MessagingService): ToolDef {
  return defineTool({
    name: 'send_media_message',
    title: 'Send an image, video, audio, document or sticker',
    description: 'Send a media message to a customer: an image, video, audio file, document (e.g. an invoice PDF) or sticker, by public https link or chat-network media id. ' + RULES,
    scopes: ['message:send'],
    input: z
      .object({
        channelId,
        to,
        audienceExternalId,
        media: mediaSendSchema.shape.media.describe(
          '`type` is image, video, audio, document or sticker; then an object named like the type with either `link` (a public https URL) or `mediaId`, ' +
            'plus an optional `caption` (not for audio or stickers) and, for documents, `filename`. Example: {"type": "document", "document": {"link": "https://example.com/invoice.pdf", "filename": "invoice.pdf"}}.',
        ),
        idempotencyKey,
      })
      .strict()
      .superRefine(oneAddress),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => {
      return messaging.sendMedia(ctx.principal, req, key);
    },
  });
}

const templateResult = z.object({
  success: z.literal(true),
  messageId: z.string().describe("the chat network's message id; accepted does not yet mean delivered"),
  timestamp: z.string().describe('when the network accepted it'),
});

export function templateTool(messaging: MessagingService): ToolDef {
  const template = templateSendSchema.shape.template;
  return defineTool({
    name: 'send_template_message',
    title: 'Send an approved template message',
    description:
      'Send an approved message template to a customer: the only message allowed outside the 24-hour window (and while a human has the conversation). ' +
      'It costs credits by template category. Fill every variable the template expects: body parameters are {"type": "text", "text": "..."} in order. ' +
      'Address the customer with audienceExternalId, or with channelId and to; list_channels names the channels. Needs the API key scope message:send.',
    scopes: ['message:send'],
    input: z
      .object({
        channelId,
        to,
        audienceExternalId,
        template: template.describe(
          'The template: `name` (e.g. "order_update"), `language` {"code": "en_US", "policy": "deterministic"} and `components`, e.g. ' +
            '[{"type": "body", "parameters": [{"type": "text", "text": "Ann"}]}] with one parameter per variable.',
        ),
        idempotencyKey,
      })
      .strict()
      .superRefine(oneAddress),
    output: templateResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => messaging.sendTemplate(ctx.principal, req, key),
  });
}

const channelOut = z.object({
  id: z.string().describe('the channelId to send from'),
  name: z.string(),
  kind: z.enum(['whatsapp_cloud', 'web_chat']).describe('whatsapp_cloud: on the chat network (every send tool works); web_chat: sends answer success false'),
  network: z.enum(['graph', 'sandbox']).optional().describe('graph: the real WhatsApp Cloud API; sandbox: the simulator'),
  phoneNumberId: z.string().optional().describe('the part after ":" of the audienceExternalId of this channel\'s contacts'),
  displayPhoneNumber: z.string().nullable().optional().describe('the business phone number customers see'),
});

/** The organization's channels, as `GET /v1/channels` lists them (any key may read them). */
export function listChannelsTool(channels: { list(organizationId: string): Promise<ChannelView[]> }): ToolDef {
  return defineTool({
    name: 'list_channels',
    title: 'List the channels',
    description:
      "List the organization's channels: each channelId to send from, whether it is on the chat network (WhatsApp) or a web chat, and its phone number id " +
      '(a contact `<phone>:<phone number id>` belongs to the channel with that phoneNumberId). Use it to pick the channelId for a send.',
    scopes: [],
    input: z.object({}).strict(),
    output: z.object({ channels: z.array(channelOut) }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: async (ctx) => ({
      channels: (await channels.list(ctx.principal.organizationId)).map((c) => ({
        id: c.id,
        name: c.name,
        kind: c.kind,
        ...(c.network !== undefined ? { network: c.network } : {}),
        ...(c.phoneNumberId !== undefined ? { phoneNumberId: c.phoneNumberId } : {}),
        ...(c.displayPhoneNumber !== undefined ? { displayPhoneNumber: c.displayPhoneNumber } : {}),
      })),
    }),
  });
}
