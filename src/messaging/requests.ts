import { z } from 'zod';
import { MEDIA_TYPES, type MessageContent } from '../domain/messages.js';
import type { GraphMedia, GraphTemplateComponent, GraphTemplateParameter } from '../domain/templates.js';
import type { GraphContactCard, GraphMessage } from '../network/graph-api.js';
import { CONTACT_ID_MESSAGE, CONTACT_ID_PATTERN, CUSTOMER_ADDRESS_PATTERN } from '../domain/contact-id.js';

/*
 * Request bodies of the send endpoints (spec: Template message, Reply-buttons
 * message, Media message, /api/v1 send-template) and their translation into
 * the network's message shapes. Pure: routes and MCP tools share them.
 */

/** `to` on the /v1 and /v2 endpoints: international format, digits only, no `+`. */
export const phoneDigits = z
  .string()
  .regex(/^[1-9][0-9]{6,14}$/, 'must be an international phone number: 7 to 15 digits, no +, spaces or dashes');

/**
 * `to` of a send: a phone number in international digits, or the customer's
 * business-scoped user id (`US.13491208655302741918`) when they hide their
 * number.
 */
export const recipientAddress = z
  .string()
  .regex(CUSTOMER_ADDRESS_PATTERN, 'must be an international phone number (7 to 15 digits, no +, spaces or dashes) or a business-scoped user id like US.13491208655302741918');

const httpsUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'https:' && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be a public https:// URL');

const channelId = z.string().trim().min(1).max(128);

/** A chat-network contact: `<phone digits>:<phone number id>` (the `audienceExternalId` of tickets and conversations). */
export const contactIdSchema = z.string().regex(CONTACT_ID_PATTERN, CONTACT_ID_MESSAGE);

/**
 * Where a send goes: `channelId` and `to`, or the contact's
 * `audienceExternalId` (its phone number id names the channel). Exactly one
 * of the two forms.
 */
export const address = {
  channelId: channelId.optional().describe('the channel to send from (with `to`); or give audienceExternalId instead'),
  to: recipientAddress.optional().describe("the recipient, international digits without +, or the customer's business-scoped user id (with `channelId`)"),
  audienceExternalId: contactIdSchema.optional().describe('the contact, `<phone>:<phone number id>` or `<BSUID>:<phone number id>`, instead of channelId + to (as tickets and conversations name it)'),
};
export function oneAddress(v: { channelId?: string | undefined; to?: string | undefined; audienceExternalId?: string | undefined }, ctx: z.RefinementCtx): void {
  const pair = v.channelId !== undefined || v.to !== undefined;
  if (v.audienceExternalId !== undefined && pair) {
    ctx.addIssue({ code: 'custom', path: ['audienceExternalId'], message: 'give either audienceExternalId or channelId + to, not both' });
  } else if (v.audienceExternalId === undefined) {
    if (v.channelId === undefined) ctx.addIssue({ code: 'custom', path: ['channelId'], message: 'channelId is required (or give audienceExternalId)' });
    if (v.to === undefined) ctx.addIssue({ code: 'custom', path: ['to'], message: 'to is required (or give audienceExternalId)' });
  }
}

// ------------------------------------------------------------------ templates

const templateMedia = z
  .object({
    link: httpsUrl.optional().describe('a public https:// URL of the file (or give id)'),
    id: z.string().min(1).max(256).optional().describe('the id of media uploaded to the chat network (or give link)'),
    caption: z.string().max(1024).optional().describe('text shown with it'),
    filename: z.string().min(1).max(240).optional().describe('documents: the file name the customer sees'),
  })
  .strict()
  .refine((m) => (m.link === undefined) !== (m.id === undefined), 'give exactly one of link or id')
  .describe('the header media: exactly one of link or id');

const parameterSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('text').describe('a text value'),
    text: z.string().min(1).max(32_768).describe("the variable's value"),
    parameter_name: z.string().max(128).optional().describe("the variable's name, for templates with named variables"),
  }),
  z.object({
    type: z.literal('currency').describe('an amount of money'),
    currency: z
      .object({
        fallback_value: z.string().min(1).max(256).describe('the amount as text, shown where it cannot be localized, e.g. "$12.50"'),
        code: z.string().regex(/^[A-Z]{3}$/, 'ISO 4217 code, e.g. USD').describe('ISO 4217 currency code, e.g. USD'),
        amount_1000: z.number().int().describe('the amount times 1000, e.g. 12500 for 12.50'),
      })
      .describe('the amount'),
  }),
  z.object({
    type: z.literal('date_time').describe('a date or time'),
    date_time: z
      .looseObject({ fallback_value: z.string().min(1).max(256).describe('the date or time as text, e.g. "Monday, 3 March"') })
      .describe('the date or time (the network shows fallback_value)'),
  }),
  z.object({ type: z.literal('image').describe('a header image'), image: templateMedia }),
  z.object({ type: z.literal('video').describe('a header video'), video: templateMedia }),
  z.object({ type: z.literal('document').describe('a header document'), document: templateMedia }),
  z.object({ type: z.literal('audio').describe('a header audio file'), audio: templateMedia }),
  z.object({ type: z.literal('payload').describe('quick-reply buttons: what comes back when tapped'), payload: z.string().min(1).max(1000).describe('returned in the inbound message when the button is tapped') }),
  z.object({ type: z.literal('coupon_code').describe('copy-code buttons: the code'), coupon_code: z.string().min(1).max(20).describe('the code the button copies, up to 20 characters') }),
  z.object({
    type: z.literal('action').describe('flow buttons: the flow to open'),
    action: z
      .object({
        flow_token: z.string().max(1000).optional().describe('a token the flow receives'),
        flow_action_data: z.record(z.string(), z.unknown()).optional().describe("data for the flow's first screen"),
      })
      .describe('the flow'),
  }),
]);

const BUTTON_PARAM: Record<'quick_reply' | 'url' | 'copy_code' | 'flow', GraphTemplateParameter['type']> = {
  quick_reply: 'payload',
  url: 'text',
  copy_code: 'coupon_code',
  flow: 'action',
};
const CONTENT_PARAMS = new Set(['text', 'currency', 'date_time', 'image', 'video', 'document', 'audio']);

const componentSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('header').describe("the template's header"),
      parameters: z.array(parameterSchema.describe('one header variable')).min(1).max(10).describe("the header's variables, in order: text, or one image, video, document or audio"),
    }),
    z.object({
      type: z.literal('body').describe("the template's body"),
      parameters: z.array(parameterSchema.describe('one body variable')).min(1).max(100).describe("the body's variables, in order ({{1}}, {{2}}, …): text, currency or date_time"),
    }),
    z.object({
      type: z.literal('button').describe('one of the template\'s buttons'),
      sub_type: z.enum(['quick_reply', 'url', 'copy_code', 'flow']).describe('the kind of button, as the template defines it'),
      index: z.union([z.number().int().min(0).max(9), z.string().regex(/^[0-9]$/).transform(Number)]).describe('the button\'s position in the template, from 0'),
      parameters: z.array(parameterSchema.describe("the button's variable")).min(1).max(1).describe('one parameter: payload (quick_reply), text (url), coupon_code (copy_code) or action (flow)'),
    }),
  ])
  .superRefine((c, ctx) => {
    c.parameters.forEach((p, i) => {
      if (c.type === 'button') {
        const want = BUTTON_PARAM[c.sub_type];
        if (p.type !== want) ctx.addIssue({ code: 'custom', path: ['parameters', i, 'type'], message: `a ${c.sub_type} button takes a ${want} parameter` });
      } else if (!CONTENT_PARAMS.has(p.type)) {
        ctx.addIssue({ code: 'custom', path: ['parameters', i, 'type'], message: `a ${c.type} component does not take ${p.type} parameters` });
      } else if (c.type === 'body' && p.type !== 'text' && p.type !== 'currency' && p.type !== 'date_time') {
        ctx.addIssue({ code: 'custom', path: ['parameters', i, 'type'], message: 'body parameters are text, currency or date_time' });
      }
    });
  });

export const templateSendSchema = z.object({
  ...address,
  template: z.object({
    name: z.string().regex(/^[a-z0-9_]{1,512}$/, 'template names are lowercase letters, digits and _').describe('the approved template\'s name, e.g. order_update'),
    language: z
      .object({
        code: z.string().regex(/^[a-z]{2,3}(_[A-Za-z]{2,4})?$/, 'a language code such as en or en_US').describe('the language the template was approved in, e.g. en_US'),
        policy: z.literal('deterministic', { error: 'policy must be "deterministic"' }).describe('always "deterministic"'),
      })
      .describe('which translation of the template'),
    components: z.array(componentSchema.describe('one component: header, body or a button')).max(20).optional().describe('values for the template\'s variables, per component; leave out for a template without variables'),
  }),
}).superRefine(oneAddress);
export type TemplateSendRequest = z.infer<typeof templateSendSchema>;

/** `POST /api/v1/whatsapp/send-template`: its own, flatter body. */
export const apiV1TemplateSendSchema = z.object({
  to: z
    .string()
    .regex(/^(?:\+[1-9][0-9]{6,14}|[A-Z]{2}\.[0-9A-Za-z]{1,128})$/, 'must be an international phone number with a leading +, digits only, or a business-scoped user id like US.13491208655302741918'),
  template: z.string().regex(/^[a-z0-9_]{1,512}$/, 'template names are lowercase letters, digits and _'),
  language: z.string().regex(/^[a-z]{2,3}(_[A-Za-z]{2,4})?$/, 'a language code such as en or en_US'),
  components: z
    .array(
      z.object({
        type: z.enum(['header', 'body', 'button']),
        sub_type: z.enum(['quick_reply', 'url', 'copy_code', 'flow']).optional(),
        index: z.union([z.number().int().min(0).max(9), z.string().regex(/^[0-9]$/).transform(Number)]).optional(),
        parameters: z.array(z.object({ type: z.literal('text'), text: z.string().min(1).max(32_768) })).min(1).max(100),
      }),
    )
    .max(20)
    .optional(),
  channelId: channelId.optional().describe("which chat channel sends it; without it, the organization's oldest chat-network (WhatsApp) channel"),
});
export type ApiV1TemplateSendRequest = z.infer<typeof apiV1TemplateSendSchema>;

/** The /api/v1 components in the network's shape (URL buttons are the ones that take text). */
export function apiV1Components(req: ApiV1TemplateSendRequest): GraphTemplateComponent[] | undefined {
  if (req.components === undefined) return undefined;
  let buttonOrdinal = 0;
  return req.components.map((c): GraphTemplateComponent => {
    if (c.type === 'button') {
      const index = c.index ?? buttonOrdinal;
      buttonOrdinal++;
      return { type: 'button', sub_type: c.sub_type ?? 'url', index, parameters: c.parameters };
    }
    return { type: c.type, parameters: c.parameters };
  });
}

// ------------------------------------------------------------------ reply buttons

export const buttonsSendSchema = z.object({
  ...address,
  interactive: z.object({
    header: z.object({ type: z.literal('text').default('text'), text: z.string().min(1).max(60) }).optional(),
    body: z.object({ text: z.string().min(1).max(1024) }),
    footer: z.object({ text: z.string().min(1).max(60) }).optional(),
    buttons: z
      .array(z.object({ id: z.string().min(1).max(256), title: z.string().trim().min(1).max(20) }))
      .min(1, 'give 1 to 3 buttons')
      .max(3, 'give 1 to 3 buttons')
      .superRefine((buttons, ctx) => {
        const seen = new Set<string>();
        buttons.forEach((b, i) => {
          if (seen.has(b.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `button id ${JSON.stringify(b.id)} is used twice` });
          seen.add(b.id);
        });
      }),
  }),
}).superRefine(oneAddress);
export type ButtonsSendRequest = z.infer<typeof buttonsSendSchema>;

// ------------------------------------------------------------------ media

const mediaObject = z
  .object({
    link: httpsUrl.optional(),
    mediaId: z.string().min(1).max(256).optional(),
    caption: z.string().max(1024).optional(),
    filename: z.string().min(1).max(240).optional(),
  })
  .strict()
  .refine((m) => (m.link === undefined) !== (m.mediaId === undefined), 'give exactly one of link or mediaId');

export const mediaSendSchema = z.object({
  ...address,
  media: z
    .object({
      type: z.enum(MEDIA_TYPES),
      image: mediaObject.optional(),
      video: mediaObject.optional(),
      audio: mediaObject.optional(),
      document: mediaObject.optional(),
      sticker: mediaObject.optional(),
    })
    .strict()
    .superRefine((m, ctx) => {
      for (const t of MEDIA_TYPES) {
        const present = m[t] !== undefined;
        if (t === m.type && !present) ctx.addIssue({ code: 'custom', path: [t], message: `media.${t} is required when media.type is ${t}` });
        if (t !== m.type && present) ctx.addIssue({ code: 'custom', path: [t], message: `media.${t} given but media.type is ${m.type}` });
      }
      const obj = m[m.type];
      if (obj?.filename !== undefined && m.type !== 'document') ctx.addIssue({ code: 'custom', path: [m.type, 'filename'], message: 'only documents take a filename' });
      if (obj?.caption !== undefined && (m.type === 'audio' || m.type === 'sticker')) ctx.addIssue({ code: 'custom', path: [m.type, 'caption'], message: `${m.type} messages take no caption` });
    }),
}).superRefine(oneAddress);
export type MediaSendRequest = z.infer<typeof mediaSendSchema>;

// ------------------------------------------------------------------ text (POST /v1/messages/text, MCP send_text_message)

export const textSendSchema = z.object({
  ...address,
  text: z.object({
    body: z.string().trim().min(1).max(4096).describe('the message text; the chat network allows up to 4096 characters'),
    previewUrl: z.boolean().optional().describe('show a preview of the first URL in the text'),
  }),
}).superRefine(oneAddress);
export type TextSendRequest = z.infer<typeof textSendSchema>;

// ------------------------------------------------------------------ location, contact cards, reaction (agent replies)

export const locationSchema = z
  .object({
    latitude: z.number().min(-90).max(90).describe('decimal degrees, -90 to 90'),
    longitude: z.number().min(-180).max(180).describe('decimal degrees, -180 to 180'),
    name: z.string().trim().min(1).max(1000).optional().describe("the place's name"),
    address: z.string().trim().min(1).max(1000).optional().describe("the place's address (shown under the name)"),
  })
  .strict();
export type LocationSend = z.infer<typeof locationSchema>;

const cardType = z.string().max(32).optional().describe('HOME, WORK, CELL…');
/** A contact card as the Cloud API takes it (`name.formatted_name` is required). */
export const contactCardSchema = z
  .object({
    name: z
      .object({
        formatted_name: z.string().min(1).max(1000).describe('the name as shown'),
        first_name: z.string().max(1000).optional().describe('first name'),
        last_name: z.string().max(1000).optional().describe('last name'),
      })
      .strict()
      .describe('the name on the card'),
    phones: z
      .array(z.object({ phone: z.string().max(100).optional().describe('the number as written'), type: cardType, wa_id: z.string().max(32).optional().describe('its WhatsApp id (digits), so the customer can message it') }).strict().describe('a phone number'))
      .max(20)
      .optional()
      .describe('phone numbers'),
    emails: z.array(z.object({ email: z.string().max(320).optional().describe('the address'), type: cardType }).strict().describe('an email address')).max(20).optional().describe('email addresses'),
    org: z
      .object({ company: z.string().max(1000).optional().describe('company'), department: z.string().max(1000).optional().describe('department'), title: z.string().max(1000).optional().describe('job title') })
      .strict()
      .optional()
      .describe('where the contact works'),
    urls: z.array(z.object({ url: z.string().max(2000).optional().describe('the address'), type: cardType }).strict().describe('a web address')).max(20).optional().describe('web addresses'),
    birthday: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a birthday is YYYY-MM-DD').optional().describe('YYYY-MM-DD'),
  })
  .strict();

export const reactionSchema = z
  .object({
    messageId: z.string().min(1).max(256).describe("the network's id (wamid…) of a message of the conversation"),
    emoji: z.string().max(16).regex(/^(|\p{Extended_Pictographic}.*|\p{Regional_Indicator}.*)$/u, 'one emoji, or empty to take the reaction back').describe('one emoji; empty takes the reaction back'),
  })
  .strict();
export type ReactionSend = z.infer<typeof reactionSchema>;

/** `POST /v1/messages/location`: a place on a map (inside the 24-hour window). */
export const locationSendSchema = z.object({ ...address, location: locationSchema.describe('the place: latitude and longitude, optionally its name and address') }).superRefine(oneAddress);
export type LocationSendRequest = z.infer<typeof locationSendSchema>;

/** `POST /v1/messages/contacts`: 1 to 20 contact cards (inside the 24-hour window). */
export const contactsSendSchema = z
  .object({ ...address, contacts: z.array(contactCardSchema).min(1, 'give 1 to 20 contact cards').max(20, 'give 1 to 20 contact cards').describe('the cards, each with name.formatted_name') })
  .superRefine(oneAddress);
export type ContactsSendRequest = z.infer<typeof contactsSendSchema>;

/** `POST /v1/messages/reaction`: an emoji on a message of the contact's conversation (inside the 24-hour window). */
export const reactionSendSchema = z.object({ ...address, reaction: reactionSchema.describe('the message reacted to (its wamid) and the emoji; an empty emoji takes the reaction back') }).superRefine(oneAddress);
export type ReactionSendRequest = z.infer<typeof reactionSendSchema>;

// ------------------------------------------------------------------ to network shapes + stored content

/** A validated send, in the network's shape and as the session history keeps it. */
export interface OutboundSend {
  message: GraphMessage;
  content: MessageContent;
}

export function buttonsMessage(req: ButtonsSendRequest): OutboundSend {
  const i = req.interactive;
  const interactive: Extract<GraphMessage, { type: 'interactive' }>['interactive'] = {
    type: 'button',
    body: { text: i.body.text },
    action: { buttons: i.buttons.map((b) => ({ type: 'reply', reply: { id: b.id, title: b.title } })) },
  };
  if (i.header) interactive.header = { type: 'text', text: i.header.text };
  if (i.footer) interactive.footer = { text: i.footer.text };
  return {
    message: { type: 'interactive', interactive },
    content: { type: 'interactive', text: i.body.text, buttons: i.buttons.map((b) => ({ id: b.id, title: b.title })) },
  };
}

export function textMessage(req: TextSendRequest): OutboundSend {
  const text: { body: string; preview_url?: boolean } = { body: req.text.body };
  if (req.text.previewUrl !== undefined) text.preview_url = req.text.previewUrl;
  return { message: { type: 'text', text }, content: { type: 'text', text: req.text.body } };
}

export function mediaMessage(req: MediaSendRequest): OutboundSend {
  const type = req.media.type;
  const m = req.media[type]!;
  const media: GraphMedia = m.link !== undefined ? { link: m.link } : { id: m.mediaId! };
  if (m.caption !== undefined) media.caption = m.caption;
  if (m.filename !== undefined) media.filename = m.filename;
  const content: MessageContent = { type };
  if (m.link !== undefined) content.mediaUrl = m.link;
  if (m.mediaId !== undefined) content.mediaId = m.mediaId;
  if (m.caption !== undefined) {
    content.caption = m.caption;
    content.text = m.caption;
  }
  if (m.filename !== undefined) content.filename = m.filename;
  return { message: { type, [type]: media } as GraphMessage, content };
}

export function locationMessage(loc: LocationSend): OutboundSend {
  const content: MessageContent = { type: 'location', location: { ...loc } };
  const text = [loc.name, loc.address].filter(Boolean).join(', ');
  if (text) content.text = text;
  return { message: { type: 'location', location: { ...loc } }, content };
}

export function contactsMessage(cards: GraphContactCard[]): OutboundSend {
  return {
    message: { type: 'contacts', contacts: cards },
    content: { type: 'contacts', contacts: cards.map((c) => ({ ...c }) as Record<string, unknown>), text: cards.map((c) => c.name.formatted_name).join(', ') },
  };
}

/** The text a request for the customer's number goes with when the agent gives none. */
export const DEFAULT_PHONE_REQUEST_TEXT = 'Could you share your phone number with us? It helps us finish your request.';

/** Meta's contact-information request: a customer who hides their number is asked to share it, with one tap. */
export function requestContactInfoMessage(text: string): OutboundSend {
  return {
    message: { type: 'interactive', interactive: { type: 'request_contact_info', body: { text }, action: { name: 'request_contact_info' } } },
    content: { type: 'interactive', text },
  };
}

/** An emoji on a message of the conversation (empty: the reaction taken back). */
export function reactionMessage(r: ReactionSend): OutboundSend {
  return {
    message: { type: 'reaction', reaction: { message_id: r.messageId, emoji: r.emoji } },
    content: { type: 'reaction', reaction: { messageId: r.messageId, emoji: r.emoji }, text: r.emoji },
  };
}

export function templateMessage(
  name: string,
  languageCode: string,
  components: GraphTemplateComponent[] | undefined,
  renderedBody: string | undefined,
): OutboundSend {
  const template: Extract<GraphMessage, { type: 'template' }>['template'] = {
    name,
    language: { code: languageCode, policy: 'deterministic' },
  };
  if (components !== undefined && components.length > 0) template.components = components;
  const content: MessageContent = { type: 'template', template: { name, language: languageCode } };
  if (template.components) content.template!.components = template.components;
  if (renderedBody !== undefined) content.text = renderedBody;
  return { message: { type: 'template', template }, content };
}
