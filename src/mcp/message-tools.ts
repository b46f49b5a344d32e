import { z } from 'zod';
import { buttonsSendSchema, mediaSendSchema, textSendSchema, type MessagingService } from '../messaging/index.js';
import { defineTool, type ToolDef } from './tool.js';

/*
 * The free-form send tools: the request bodies of /v1/messages/text,
 * /v1/messages/buttons and /v1/messages/media (the messaging module's zod
 * schemas, so the limits are the REST API's), with descriptions for a model,
 * sent through MessagingService exactly as the REST routes send them.
 */

const channelId = textSendSchema.shape.channelId.describe(
  "The chat channel to send from: the channelId of the customer's inbound_message webhook, or the channel's ID on the dashboard's Channels page.",
);
const to = textSendSchema.shape.to.describe("The customer's phone number in international format, digits only, no + or spaces, e.g. \"4915112345678\".");
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
  'Free-form messages are only allowed within 24 hours of the customer\'s last message; outside that window the tool fails and a template must be sent instead (not possible through this server). ' +
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
        text: textSendSchema.shape.text.describe('The message: `body` is the text (up to 4096 characters); `previewUrl` shows a preview of the first link.'),
        idempotencyKey,
      })
      .strict(),
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
        interactive: interactive.describe(
          'The message: `body.text` (up to 1024 characters), optional `header.text` and `footer.text` (up to 60 each), and `buttons`: 1 to 3 of {id, title}, ' +
            'where `id` (up to 256 characters, unique) comes back when tapped and `title` (up to 20 characters) is what the customer sees.',
        ),
        idempotencyKey,
      })
      .strict(),
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
        media: mediaSendSchema.shape.media.describe(
          '`type` is image, video, audio, document or sticker; then an object named like the type with either `link` (a public https URL) or `mediaId`, ' +
            'plus an optional `caption` (not for audio or stickers) and, for documents, `filename`. Example: {"type": "document", "document": {"link": "https://example.com/invoice.pdf", "filename": "invoice.pdf"}}.',
        ),
        idempotencyKey,
      })
      .strict(),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => {
      return messaging.sendMedia(ctx.principal, req, key);
    },
  });
}
