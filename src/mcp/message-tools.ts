import { z } from 'zod';
import { address, buttonsSendSchema, contactCardSchema, locationSchema, oneAddress, reactionSchema, templateSendSchema, textSendSchema, type ChannelView, type MessagingService } from '../messaging/index.js';
import { defineTool, type ToolDef } from './tool.js';

/*
 * The free-form send tools: the request bodies of /v1/messages/text,
 * /buttons, /media, /location, /contacts and /reaction (the messaging module's zod
 * schemas, so the limits are the REST API's), with descriptions for a model,
 * sent through MessagingService exactly as the REST routes send them.
 */

const channelId = address.channelId.describe(
  "The chat channel to send from (with `to`): the channelId of the customer's inbound_message webhook, or one from list_channels. Or give audienceExternalId instead of channelId and to.",
);
const to = address.to.describe(
  "The customer's phone number in international format, digits only, no + or spaces, e.g. \"4915112345678\", or, for a customer who hides their number, their business-scoped user id, e.g. \"US.13491208655302741918\" (with channelId).",
);
const audienceExternalId = address.audienceExternalId.describe(
  'The contact instead of channelId + to: `<phone>:<phone number id>`, e.g. "4915112345678:106540352242922", or `<business-scoped user id>:<phone number id>` for a customer first seen without a number; the audienceExternalId of a ticket or an inbound_message webhook.',
);
const idempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,200}$/, '1 to 200 visible ASCII characters')
  .optional()
  .describe('Optional. When retrying a send that failed with a temporary error, pass the same value as the first attempt: the message is then never sent twice.');

/**
 * "Exactly one of" the two ways to address a send, in the schema itself (the arguments are also
 * checked by `oneAddress`): channelId with to, or audienceExternalId alone.
 */
const ONE_ADDRESS = {
  oneOf: [
    { title: 'by channel and phone number', required: ['channelId', 'to'], not: { required: ['audienceExternalId'] } },
    { title: 'by contact', required: ['audienceExternalId'], not: { anyOf: [{ required: ['channelId'] }, { required: ['to'] }] } },
  ],
};

const sendResult = z.object({
  success: z.boolean().describe('false (nothing sent) when the channel is not a chat-network channel'),
  messageId: z.string().optional().describe("the chat network's message id; accepted does not yet mean delivered"),
});

const RULES =
  'Address the customer with audienceExternalId, or with channelId and to. ' +
  'Free-form messages are only allowed within 24 hours of the customer\'s last message; outside that window the tool fails and an approved template must be sent instead with send_template_message. ' +
  'They are also refused while a human agent has the conversation (after request_handover). Needs the API key scope message:send.';

/** A send's arguments: the message's own fields, addressed by channel and phone or by contact, and an optional idempotency key. */
function addressedSend<M extends z.ZodRawShape>(message: M) {
  return z
    .object({ channelId, to, audienceExternalId, ...message, idempotencyKey })
    .strict()
    .superRefine((v, ctx) => oneAddress(v as Parameters<typeof oneAddress>[0], ctx))
    .meta(ONE_ADDRESS);
}

const sendAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

export function textTool(messaging: MessagingService): ToolDef {
  return defineTool({
    name: 'send_text_message',
    title: 'Send a text message',
    description: 'Send a plain text message to a customer on the chat network (WhatsApp). ' + RULES,
    scopes: ['message:send'],
    input: addressedSend({
      text: z
        .object({
          body: textSendSchema.shape.text.shape.body.describe('The text, up to 4096 characters.'),
          previewUrl: textSendSchema.shape.text.shape.previewUrl.describe('Show a preview of the first link in the text.'),
        })
        .describe('The message.'),
    }),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => {
      return messaging.sendText(ctx.principal, req, key);
    },
  });
}

/** The buttons message, every nested field described (the shape of /v1/messages/buttons' interactive). */
export const buttonsInteractive = z
  .object({
    header: z
      .object({
        type: z.literal('text').default('text').describe('Always "text".'),
        text: z.string().min(1).max(60).describe('A bold first line, up to 60 characters.'),
      })
      .optional()
      .describe('Optional heading above the text.'),
    body: z.object({ text: buttonsSendSchema.shape.interactive.shape.body.shape.text.describe('The message text, up to 1024 characters.') }).describe('The message.'),
    footer: z.object({ text: z.string().min(1).max(60).describe('A small grey last line, up to 60 characters.') }).optional().describe('Optional line below the text.'),
    buttons: z
      .array(
        z
          .object({
            id: z.string().min(1).max(256).describe('Comes back in the inbound message when the customer taps it; up to 256 characters, unique in the message.'),
            title: z.string().trim().min(1).max(20).describe('What the customer sees on the button, up to 20 characters.'),
          })
          .describe('One reply button.'),
      )
      .min(1, 'give 1 to 3 buttons')
      .max(3, 'give 1 to 3 buttons')
      .superRefine((buttons, ctx) => {
        const seen = new Set<string>();
        buttons.forEach((b, i) => {
          if (seen.has(b.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `button id ${JSON.stringify(b.id)} is used twice` });
          seen.add(b.id);
        });
      })
      .describe('1 to 3 reply buttons.'),
  })
  .describe('The message with its buttons.');

export function buttonsTool(messaging: MessagingService): ToolDef {
  return defineTool({
    name: 'send_buttons_message',
    title: 'Send a message with reply buttons',
    description:
      'Send a message with one to three reply buttons the customer can tap (for example "Track order" / "Talk to us"). ' +
      'A tap comes back as an inbound message carrying the button id. ' +
      RULES,
    scopes: ['message:send'],
    input: addressedSend({
      interactive: buttonsInteractive,
    }),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => {
      return messaging.sendButtons(ctx.principal, req, key);
    },
  });
}

const link = z
  .string()
  .max(2048)
  .refine((v) => URL.canParse(v) && new URL(v).protocol === 'https:', 'must be a public https:// URL')
  .meta({ format: 'uri' })
  .describe('A public https:// URL of the file.');
const mediaId = z.string().min(1).max(256).describe('The id of media already uploaded to the chat network.');
const caption = z.string().max(1024).optional().describe('Text shown with it, up to 1024 characters.');
const filename = z.string().min(1).max(240).optional().describe('The file name the customer sees.');

/** Exactly one of a link or a media id (a `oneOf` in the schema), plus the extras the kind allows. */
function mediaSource<E extends z.ZodRawShape>(kind: string, extras: E) {
  return z
    .xor([z.object({ link, ...extras }).strict().describe(`The ${kind} by link.`), z.object({ mediaId, ...extras }).strict().describe(`The ${kind} by media id.`)], {
      error: `give exactly one of link (a public https URL) or mediaId${Object.keys(extras).length > 0 ? `, plus optionally ${Object.keys(extras).join(' and ')}` : ', and nothing else'}`,
    })
    .describe(`The ${kind}: a link or a mediaId, not both.`);
}

/** One branch per media type, keyed on `type` (a `oneOf` in the schema); the shape of /v1/messages/media. */
export const mediaInput = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('image').describe('An image (JPEG or PNG).'), image: mediaSource('image', { caption }) }).strict(),
    z.object({ type: z.literal('video').describe('A video (MP4).'), video: mediaSource('video', { caption }) }).strict(),
    z.object({ type: z.literal('audio').describe('An audio file or voice note.'), audio: mediaSource('audio', {}) }).strict(),
    z.object({ type: z.literal('document').describe('A document, e.g. an invoice PDF.'), document: mediaSource('document', { caption, filename }) }).strict(),
    z.object({ type: z.literal('sticker').describe('A sticker (WebP).'), sticker: mediaSource('sticker', {}) }).strict(),
  ])
  .describe(
    'What to send: `type`, and an object named like the type with `link` (public https URL) or `mediaId`. ' +
      'Example: {"type": "document", "document": {"link": "https://example.com/invoice.pdf", "filename": "invoice.pdf"}}.',
  );

export function mediaTool(messaging: MessagingService): ToolDef {
  return defineTool({
    name: 'send_media_message',
    title: 'Send an image, video, audio, document or sticker',
    description: 'Send a media message to a customer: an image, video, audio file, document (e.g. an invoice PDF) or sticker, by public https link or chat-network media id. ' + RULES,
    scopes: ['message:send'],
    input: addressedSend({
      media: mediaInput,
    }),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => {
      return messaging.sendMedia(ctx.principal, req, key);
    },
  });
}

export function locationTool(messaging: MessagingService): ToolDef {
  return defineTool({
    name: 'send_location_message',
    title: 'Send a location',
    description: 'Send a location to a customer: a map pin with latitude and longitude, optionally the place\'s name and address (for example a shop or a pick-up point). ' + RULES,
    scopes: ['message:send'],
    input: addressedSend({
      location: locationSchema.describe('The place, e.g. {"latitude": 52.5219, "longitude": 13.4132, "name": "Returns desk", "address": "Alexanderplatz 1, Berlin"}.'),
    }),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => messaging.sendLocation(ctx.principal, req, key),
  });
}

export function contactsTool(messaging: MessagingService): ToolDef {
  return defineTool({
    name: 'send_contacts_message',
    title: 'Send contact cards',
    description: 'Send 1 to 20 contact cards to a customer (for example the number of a department). Each card needs name.formatted_name; phones, emails, org, urls and birthday are optional. ' + RULES,
    scopes: ['message:send'],
    input: addressedSend({
      contacts: z
        .array(contactCardSchema.describe('One card.'))
        .min(1, 'give 1 to 20 contact cards')
        .max(20, 'give 1 to 20 contact cards')
        .describe('The cards, e.g. [{"name": {"formatted_name": "Acme Returns"}, "phones": [{"phone": "+49 30 1234567", "type": "WORK"}]}].'),
    }),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => messaging.sendContacts(ctx.principal, req, key),
  });
}

export function reactionTool(messaging: MessagingService): ToolDef {
  return defineTool({
    name: 'send_reaction',
    title: 'React to a message',
    description:
      "React with one emoji to a message of the customer's conversation (its messageId, wamid…, from an inbound_message webhook or get_conversation_history); an empty emoji takes the reaction back. " +
      'Fails with no_such_message for a message that is not of this conversation. ' +
      RULES,
    scopes: ['message:send'],
    input: addressedSend({
      reaction: reactionSchema.describe('The message reacted to and the emoji, e.g. {"messageId": "wamid.HBg…", "emoji": "👍"}.'),
    }),
    output: sendResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => messaging.sendReaction(ctx.principal, req, key),
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
    input: addressedSend({
      template: template.describe(
        'The template: `name` (e.g. "order_update"), `language` {"code": "en_US", "policy": "deterministic"} and `components`, e.g. ' +
          '[{"type": "body", "parameters": [{"type": "text", "text": "Ann"}]}] with one parameter per variable.',
      ),
    }),
    output: templateResult,
    annotations: sendAnnotations,
    run: async (ctx, { idempotencyKey: key, ...req }) => messaging.sendTemplate(ctx.principal, req, key),
  });
}

const channelOut = z.object({
  id: z.string().describe('the channelId to send from'),
  name: z.string(),
  kind: z.enum(['whatsapp_cloud', 'web_chat']).describe('whatsapp_cloud: on the chat network (every send tool works); web_chat: the chat widget on a website: text goes to its visitors, buttons, media and templates do not'),
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
