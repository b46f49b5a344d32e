import { z } from 'zod';
import type { GraphMedia, GraphTemplateComponent, GraphTemplateDefinitionComponent } from '../domain/templates.js';

/*
 * The WhatsApp Cloud API (Graph API) wire shapes this service speaks: the send
 * request and response of `POST /{phone-number-id}/messages`, the error
 * envelope, the template list of `GET /{waba-id}/message_templates`, and the
 * webhook envelope. The real adapter, the sandbox network and the test fake
 * all use these, so a shape is written down once. The shapes a stored record
 * keeps (a send's template components, media, a template's definition) are
 * written down in src/domain/templates.ts.
 */

// ---------------------------------------------------------------- send payloads

export interface GraphTemplate {
  name: string;
  language: { code: string; policy?: 'deterministic' };
  components?: GraphTemplateComponent[];
}

export interface GraphReplyButton {
  type: 'reply';
  reply: { id: string; title: string };
}

/** An interactive message: reply buttons, a list, a call-to-action URL button, or a request for the customer's location. */
export type GraphInteractive =
  | {
      type: 'button';
      header?: { type: 'text'; text: string };
      body: { text: string };
      footer?: { text: string };
      action: { buttons: GraphReplyButton[] };
    }
  | {
      type: 'list';
      header?: { type: 'text'; text: string };
      body: { text: string };
      footer?: { text: string };
      action: { button: string; sections: { title?: string; rows: { id: string; title: string; description?: string }[] }[] };
    }
  | {
      type: 'cta_url';
      header?: { type: 'text'; text: string };
      body: { text: string };
      footer?: { text: string };
      action: { name: 'cta_url'; parameters: { display_text: string; url: string } };
    }
  | { type: 'location_request_message'; body: { text: string }; action: { name: 'send_location' } }
  /** Asks a customer who hides their number to share it (they answer with a `contacts` message, `origin: contact_request`). */
  | { type: 'request_contact_info'; body: { text: string }; action: { name: 'request_contact_info' } };

/** A contact card of a `contacts` message (the Cloud API's and the webhooks' shape). */
export interface GraphContactCard {
  name: { formatted_name: string; first_name?: string; last_name?: string; middle_name?: string; suffix?: string; prefix?: string };
  addresses?: { street?: string; city?: string; state?: string; zip?: string; country?: string; country_code?: string; type?: string }[];
  birthday?: string;
  emails?: { email?: string; type?: string }[];
  org?: { company?: string; department?: string; title?: string };
  phones?: { phone?: string; type?: string; wa_id?: string }[];
  urls?: { url?: string; type?: string }[];
}

/** The message part of a send request (everything except `messaging_product`, `to` / `recipient`). */
export type GraphMessage =
  | { type: 'template'; template: GraphTemplate }
  | { type: 'text'; text: { body: string; preview_url?: boolean } }
  | { type: 'interactive'; interactive: GraphInteractive }
  | { type: 'image'; image: GraphMedia }
  | { type: 'video'; video: GraphMedia }
  | { type: 'audio'; audio: GraphMedia }
  | { type: 'document'; document: GraphMedia }
  | { type: 'sticker'; sticker: GraphMedia }
  /** An emoji on a message of the conversation; an empty emoji takes the reaction back. */
  | { type: 'reaction'; reaction: { message_id: string; emoji: string } }
  | { type: 'location'; location: { latitude: number; longitude: number; name?: string; address?: string } }
  | { type: 'contacts'; contacts: GraphContactCard[] };

/**
 * A send names its customer by phone number in `to`, or by business-scoped
 * user id in `recipient` (a customer who hides their number). Given both,
 * the network goes by `to`.
 */
export type GraphSendRequest = GraphMessage & {
  messaging_product: 'whatsapp';
  recipient_type?: 'individual';
  biz_opaque_callback_data?: string;
} & ({ to: string; recipient?: string } | { to?: undefined; recipient: string });

export const sendResponseSchema = z.object({
  messaging_product: z.literal('whatsapp'),
  // `wa_id` is absent for a customer reached by BSUID whose number the business may not see.
  contacts: z.array(z.object({ input: z.string(), wa_id: z.string().optional(), user_id: z.string().optional() }).loose()).optional(),
  messages: z.array(z.object({ id: z.string().min(1), message_status: z.string().optional() })).min(1),
});
export type GraphSendResponse = z.infer<typeof sendResponseSchema>;

// ---------------------------------------------------------------- errors

/** The Graph API error envelope: `{ error: { message, type, code, error_data: { details }, fbtrace_id } }`. */
export const errorEnvelopeSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string().optional(),
    code: z.number().int(),
    error_subcode: z.number().int().optional(),
    error_user_title: z.string().optional(),
    error_user_msg: z.string().optional(),
    error_data: z
      .object({ messaging_product: z.string().optional(), details: z.string().optional() })
      .loose()
      .optional(),
    fbtrace_id: z.string().optional(),
  }),
});
export type GraphErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

/**
 * Error codes of the Cloud API this service knows by name. Titles follow
 * Meta's error-code reference; the HTTP status is the one the Graph API
 * answers with for that code.
 */
export const GRAPH_ERRORS = {
  100: { title: 'Invalid parameter', http: 400 },
  190: { title: 'Access token has expired or is invalid', http: 401 },
  131000: { title: 'Something went wrong', http: 500 },
  131008: { title: 'Required parameter is missing', http: 400 },
  131009: { title: 'Parameter value is not valid', http: 400 },
  131026: { title: 'Message undeliverable', http: 400 },
  131047: { title: 'Re-engagement message', http: 400 },
  130429: { title: 'Rate limit hit', http: 400 },
  132000: { title: 'Number of parameters does not match the expected number of params', http: 400 },
  132001: { title: 'Template does not exist', http: 404 },
  132012: { title: 'Parameter format does not match format in the created template', http: 400 },
  132015: { title: 'Template is paused', http: 400 },
  132016: { title: 'Template is disabled', http: 400 },
  131062: { title: 'Business-scoped User ID recipients are not supported for this message', http: 400 },
  133010: { title: 'Phone number not registered', http: 400 },
} as const satisfies Record<number, { title: string; http: number }>;
export type KnownGraphErrorCode = keyof typeof GRAPH_ERRORS;

/**
 * Codes by which the Cloud API says "not now" rather than "never": throughput
 * (130429), the app's call limit (4), the account's rate limit (80007) and
 * the business-customer pair limit (131056). Nothing was sent; the same send
 * may succeed later.
 */
const THROTTLING_CODES: ReadonlySet<number> = new Set([4, 80007, 130429, 131056]);

export function isThrottling(code: number): boolean {
  return THROTTLING_CODES.has(code);
}

export function graphErrorTitle(code: number): string | undefined {
  return (GRAPH_ERRORS as Record<number, { title: string } | undefined>)[code]?.title;
}

/** Builds the envelope and HTTP status the Graph API answers a rejected request with. */
export function graphError(
  code: KnownGraphErrorCode,
  details: string,
  fbtraceId = 'sandbox',
): { status: number; body: GraphErrorEnvelope } {
  const known = GRAPH_ERRORS[code];
  return {
    status: known.http,
    body: {
      error: {
        message: `(#${code}) ${known.title}`,
        type: 'OAuthException',
        code,
        error_data: { messaging_product: 'whatsapp', details },
        fbtrace_id: fbtraceId,
      },
    },
  };
}

// ---------------------------------------------------------------- templates API

export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

export const TEMPLATE_STATUSES = ['APPROVED', 'PENDING', 'REJECTED', 'PAUSED', 'DISABLED', 'IN_APPEAL', 'PENDING_DELETION', 'DELETED', 'LIMIT_EXCEEDED'] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];

const graphTemplateButtonSchema = z
  .object({
    type: z.string(),
    text: z.string().optional(),
    url: z.string().optional(),
    phone_number: z.string().optional(),
    otp_type: z.string().optional(),
    example: z.array(z.string()).optional(),
  })
  .loose();

export const graphTemplateComponentSchema = z
  .object({
    type: z.string(),
    format: z.string().optional(),
    text: z.string().optional(),
    buttons: z.array(graphTemplateButtonSchema).optional(),
  })
  .loose() satisfies z.ZodType<GraphTemplateDefinitionComponent>;

/** One node of `GET /{waba-id}/message_templates`. */
export const graphTemplateDefinitionSchema = z
  .object({
    id: z.string().optional(),
    name: z.string().min(1),
    language: z.string().min(1),
    status: z.string(),
    category: z.string(),
    parameter_format: z.string().optional(),
    components: z.array(graphTemplateComponentSchema).default([]),
  })
  .loose();
export type GraphTemplateDefinition = z.infer<typeof graphTemplateDefinitionSchema>;

export const templateListResponseSchema = z.object({
  data: z.array(z.unknown()),
  paging: z
    .object({
      cursors: z.object({ before: z.string().optional(), after: z.string().optional() }).optional(),
      next: z.string().optional(),
    })
    .optional(),
});

/** `GET /{media-id}`: where to download a media file the customer sent (the URL needs the same bearer token and expires after minutes). */
export const mediaInfoResponseSchema = z
  .object({ id: z.string(), url: z.string(), mime_type: z.string(), sha256: z.string().optional(), file_size: z.union([z.number(), z.string()]).optional(), messaging_product: z.string().optional() })
  .loose();

// ---------------------------------------------------------------- webhooks

const webhookErrorSchema = z
  .object({
    code: z.number().int(),
    title: z.string().optional(),
    message: z.string().optional(),
    error_data: z.object({ details: z.string().optional() }).loose().optional(),
  })
  .loose();
export type GraphWebhookError = z.infer<typeof webhookErrorSchema>;

export const webhookStatusSchema = z
  .object({
    id: z.string().min(1),
    status: z.string(),
    timestamp: z.string(),
    /** The customer's phone number; absent when they hide it. */
    recipient_id: z.string().optional(),
    /** The customer's business-scoped user id, and their parent BSUID (managed businesses). */
    recipient_user_id: z.string().optional(),
    recipient_parent_user_id: z.string().optional(),
    errors: z.array(webhookErrorSchema).optional(),
    /** What the business sent as `biz_opaque_callback_data` with the message. */
    biz_opaque_callback_data: z.string().optional(),
  })
  .loose();
export type GraphWebhookStatus = z.infer<typeof webhookStatusSchema>;

const webhookMediaSchema = z
  .object({ id: z.string().optional(), link: z.string().optional(), mime_type: z.string().optional(), sha256: z.string().optional(), caption: z.string().optional(), filename: z.string().optional() })
  .loose();

export const webhookMessageSchema = z
  .object({
    /** The customer's phone number; absent when they hide it behind a username. */
    from: z.string().min(1).optional(),
    /** The customer's business-scoped user id (on every message since April 2026), and their parent BSUID. */
    from_user_id: z.string().min(1).optional(),
    from_parent_user_id: z.string().min(1).optional(),
    id: z.string().min(1),
    timestamp: z.string(),
    type: z.string(),
    context: z
      .object({
        from: z.string().optional(),
        id: z.string().optional(),
        referred_product: z.object({ catalog_id: z.string(), product_retailer_id: z.string() }).loose().optional(),
      })
      .loose()
      .optional(),
    text: z.object({ body: z.string() }).loose().optional(),
    button: z.object({ payload: z.string().optional(), text: z.string().optional() }).loose().optional(),
    interactive: z
      .object({
        type: z.string(),
        button_reply: z.object({ id: z.string(), title: z.string() }).loose().optional(),
        list_reply: z.object({ id: z.string(), title: z.string(), description: z.string().optional() }).loose().optional(),
      })
      .loose()
      .optional(),
    image: webhookMediaSchema.optional(),
    video: webhookMediaSchema.optional(),
    audio: webhookMediaSchema.optional(),
    document: webhookMediaSchema.optional(),
    sticker: webhookMediaSchema.optional(),
    location: z
      .object({ latitude: z.number(), longitude: z.number(), name: z.string().optional(), address: z.string().optional(), url: z.string().optional() })
      .loose()
      .optional(),
    /** A system message: the customer changed their number or their BSUID changed. */
    system: z
      .object({
        body: z.string().optional(),
        type: z.string().optional(),
        /** `user_changed_number`: the new number. */
        wa_id: z.string().optional(),
        /** The new BSUID (and parent BSUID) and the ones before. */
        user_id: z.string().optional(),
        parent_user_id: z.string().optional(),
        previous_user_id: z.string().optional(),
        previous_parent_user_id: z.string().optional(),
      })
      .loose()
      .optional(),
    errors: z.array(webhookErrorSchema).optional(),
  })
  .loose();
export type GraphWebhookMessage = z.infer<typeof webhookMessageSchema>;

export const webhookValueSchema = z
  .object({
    messaging_product: z.literal('whatsapp'),
    metadata: z.object({ display_phone_number: z.string().optional(), phone_number_id: z.string().min(1) }).loose(),
    /** Who wrote: phone (`wa_id`, absent when hidden), BSUID (`user_id`), parent BSUID, profile name and username. System messages carry none. */
    contacts: z
      .array(
        z
          .object({
            wa_id: z.string().optional(),
            user_id: z.string().optional(),
            parent_user_id: z.string().optional(),
            profile: z.object({ name: z.string().optional(), username: z.string().optional() }).loose().optional(),
          })
          .loose(),
      )
      .optional(),
    // Each message and status is read on its own: one of a shape not known here must not cost the others.
    messages: z.array(z.unknown()).optional(),
    statuses: z.array(z.unknown()).optional(),
    errors: z.array(webhookErrorSchema).optional(),
  })
  .loose();
export type GraphWebhookValue = z.infer<typeof webhookValueSchema>;

/** `{ object: 'whatsapp_business_account', entry: [{ id: <waba>, changes: [{ field, value }] }] }` */
export const webhookEnvelopeSchema = z.object({
  object: z.literal('whatsapp_business_account'),
  entry: z.array(
    z.object({
      id: z.string(),
      changes: z.array(z.object({ field: z.string(), value: z.unknown() })),
    }),
  ),
});
export type GraphWebhookEnvelope = z.infer<typeof webhookEnvelopeSchema>;
