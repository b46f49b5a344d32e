import { z } from 'zod';
import { CONVERSATION_SORTS, CONVERSATION_STATUSES, CONVERSATION_VIEWS, SLA_FILTERS } from '../domain/conversation.js';
import { TICKET_PRIORITIES } from '../domain/types.js';
import { buttonsSendSchema, contactCardSchema, locationSchema, mediaSendSchema, reactionSchema, templateSendSchema, textSendSchema } from '../messaging/requests.js';
import { sessionMessageSchema } from '../http/routes/sessions.js';
import { MAX_NOTE_LENGTH } from '../actors/conversation/actor.js';

/*
 * The inbox's shapes, shared by the WebSocket protocol and its REST twins,
 * so both validate (and document) the same thing.
 */

export const conversationId = z
  .string()
  .regex(
    /^(?:\d{7,15}:[\w-]{1,64}|[A-Z]{2}\.[\dA-Za-z]{1,128}:\d{1,32}|v_[\da-f]{24}:ch_[\dA-Za-z]{8,40})$/,
    'a conversation id is the contact\'s audienceExternalId, `<phone digits>:<phone number id>` or `<business-scoped user id>:<phone number id>` (`<visitor id>:<channel id>` on a web chat)',
  )
  .describe("the contact's audienceExternalId, `<phone>:<phone number id>`");

/** An agent's free-form message: the bodies of /v1/messages/text, /buttons and /media without channelId and to. */
export const replyMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: textSendSchema.shape.text.shape.body, previewUrl: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('buttons'), interactive: buttonsSendSchema.shape.interactive }).strict(),
  z.object({ type: z.literal('media'), media: mediaSendSchema.shape.media }).strict(),
  z.object({ type: z.literal('location'), location: locationSchema }).strict(),
  z.object({ type: z.literal('contacts'), contacts: z.array(contactCardSchema).min(1).max(20) }).strict(),
  z.object({ type: z.literal('reaction'), reaction: reactionSchema }).strict(),
]);
export type ReplyMessage = z.infer<typeof replyMessageSchema>;

/** A template by name, as in /v2/wa/template. */
export const agentTemplateSchema = templateSendSchema.shape.template;
export type AgentTemplate = z.infer<typeof agentTemplateSchema>;

export const labelSchema = z.object({
  id: z.string(),
  name: z.string(),
  color: z.string().describe('#rrggbb').meta({ examples: ['#e11d48'] }),
});

export const labelName = z
  .string()
  .trim()
  .min(1)
  .max(50)
  .regex(/^[^/\p{Cc}]+$/u, 'a label name has no `/` and no control characters')
  .describe('unique in the organization whatever its case');
export const labelColor = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'a colour is `#rrggbb`')
  .describe('#rrggbb')
  .meta({ examples: ['#e11d48'] });
/** A label as a request names it: its id or its name (any case). */
export const labelRef = z.string().trim().min(1).max(100).describe("a label's id or its name (any case)");

/** A conversation's running response-time target, on its summary and on the inbox's row frames. */
export const conversationSlaSchema = z
  .object({
    target: z.enum(['first_response', 'next_response']).describe("first_response: no agent has answered in this conversation yet; next_response: the customer wrote again after an agent's answer"),
    priority: z
      .enum(TICKET_PRIORITIES)
      .nullable()
      .optional()
      .describe("the conversation's priority (its contact's open ticket's) when the target started, whose targets applied; null: none"),
    since: z.string().describe("when the customer's oldest unanswered message came").meta({ examples: ['2026-11-23T09:58:00.000Z'] }),
    dueAt: z.string().describe("when an answer is due (the channel's routing.sla)"),
    breachedAt: z.string().nullable().describe('when the target was missed (the conversation is flagged until an agent answers); null while it still runs'),
  })
  .nullable()
  .describe("the response-time target of the customer's oldest unanswered message while a human has the conversation; null when none runs");

export const conversationSummarySchema = z.object({
  id: z.string().describe('the conversation id: the contact\'s audienceExternalId'),
  audienceExternalId: z.string(),
  contactId: z.string().nullable(),
  contactName: z.string().nullable().describe('the name the customer goes by on the chat network, when known'),
  phone: z.string().nullable().describe("the customer's phone digits; null when they hide their number (a web-chat visitor: its visitor id)"),
  userId: z.string().nullable().describe("the customer's WhatsApp business-scoped user id (BSUID), when known"),
  parentUserId: z.string().nullable().describe('their parent BSUID (managed businesses), when known'),
  username: z.string().nullable().describe('the WhatsApp username they go by, when they adopted one'),
  channelId: z.string().nullable().describe('the channel the conversation runs on; null when no channel of the organization has its phone number id any more'),
  status: z.enum(CONVERSATION_STATUSES).describe('bot: with the bot; queued: waiting for an agent; assigned: with the agent assigneeId'),
  assigneeId: z.string().nullable(),
  queuedAt: z.string().nullable(),
  assignedAt: z.string().nullable(),
  sessionId: z.string().nullable().describe('the latest session (conversation episode)'),
  sessionStatus: z.enum(['open', 'resolved']).nullable(),
  labels: z.array(labelSchema).describe('the labels on the conversation, in the order they were put on'),
  teamId: z.string().nullable().optional().describe('the team whose queue it is in (or came from, while an agent has it); null: none'),
  window: z.object({
    open: z.boolean().describe('free-form messages (text, buttons, media) may be sent'),
    closesAt: z.string().nullable().describe("24 hours after the customer's last message; null before they ever wrote"),
  }),
  lastInboundAt: z.string().nullable(),
  sla: conversationSlaSchema,
  unreadCount: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("customer messages of the current session the caller has not opened (POST .../seen marks them); absent in live events, which go to many agents"),
  updatedAt: z.string(),
});
export type ConversationSummary = z.infer<typeof conversationSummarySchema>;

export const conversationDetailSchema = conversationSummarySchema.extend({
  messages: z.array(sessionMessageSchema).describe("the agents' timeline of the latest session: its last 50 entries, oldest first (messages, system entries with sender system, and private notes with note: true)"),
});

export const conversationListQuery = z.object({
  view: z
    .enum(CONVERSATION_VIEWS)
    .optional()
    .describe(
      'all; bot: with the bot; waiting: in the live-chat queue; mine / others: assigned to the caller / to another agent; unassigned: bot and waiting; resolved: resolved by an agent and back with the bot. Any of view, sort, cursor, channelId, contact, label or sla pages by cursor (nextCursor); without them the list pages by page and total',
    ),
  channelId: z.string().min(1).max(100).optional().describe('only conversations on this channel'),
  contact: z.string().min(1).max(100).optional().describe("only this contact's conversation: a contact id or an audienceExternalId"),
  label: labelRef.optional().describe('only conversations carrying this label (its id or name); an unknown label finds nothing'),
  sla: z.enum(SLA_FILTERS).optional().describe('breached: only conversations past their response-time target, not answered yet'),
  team: z.string().min(1).max(64).optional().describe("only conversations of a team's queue (queued in it, or taken from it): a team id, or `mine` for the caller's teams; an unknown team finds nothing"),
  sort: z.enum(CONVERSATION_SORTS).optional().describe('activity (default): most recent change first; waiting: longest waiting first (in the queue since, otherwise last change)'),
  cursor: z.string().min(1).max(600).optional().describe("the previous page's nextCursor, with the same view, sort and filters"),
  status: z.enum(CONVERSATION_STATUSES).optional().describe('paging by page only: bot, queued (oldest first) or assigned'),
  assigneeId: z.string().min(1).max(100).optional().describe('only conversations assigned to this user'),
  page: z.coerce.number().int().min(1).max(100_000).optional().describe('paging by page only (default 1)'),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});
export type ConversationListQuery = z.output<typeof conversationListQuery>;

export const conversationCountsQuery = conversationListQuery.pick({ channelId: true, contact: true, assigneeId: true, label: true, sla: true, team: true });

export const conversationCountsSchema = z
  .object(Object.fromEntries(CONVERSATION_VIEWS.map((v) => [v, z.number().int().min(0)])) as Record<(typeof CONVERSATION_VIEWS)[number], z.ZodNumber>)
  .describe('how many conversations each view holds for the caller');

export const contactSchema = z.object({
  id: z.string(),
  audienceExternalId: z.string(),
  name: z.string().nullable(),
  phone: z.string().nullable().describe('the phone digits; null when the customer hides their number (a web-chat visitor: its visitor id)'),
  userId: z.string().nullable().describe("the customer's WhatsApp business-scoped user id (BSUID), when known"),
  parentUserId: z.string().nullable().describe('their parent BSUID (managed businesses), when known'),
  username: z.string().nullable().describe('the WhatsApp username they go by, when they adopted one'),
  attributes: z.record(z.string(), z.string()).describe('custom key/value attributes'),
  createdAt: z.string().describe('first seen'),
  labels: z.array(labelSchema).optional().describe("the contact's labels (on a contact's page and after a label change)"),
});

const attributeKey = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'an attribute key is 1 to 64 letters, digits, `_`, `.` or `-`');

export const contactChangeBody = z
  .object({
    name: z.string().trim().min(1).max(200).nullable().optional().describe('the name agents see; null clears it'),
    attributes: z
      .record(attributeKey, z.string().max(1000).nullable())
      .refine((a) => Object.keys(a).length <= 50, 'at most 50 attributes in one change')
      .optional()
      .describe('merged into the contact\'s attributes key by key: a string sets the key, null removes it (a contact keeps at most 50)'),
  })
  .strict()
  .refine((b) => b.name !== undefined || b.attributes !== undefined, 'give name, attributes or both');

export const contactDetailSchema = z.object({
  success: z.literal(true),
  contact: contactSchema,
  conversation: conversationSummarySchema.nullable().describe("the contact's conversation as the inbox lists it; null before it ever had one"),
  sessions: z.array(z.object({ sessionId: z.string(), openedAt: z.string(), status: z.enum(['open', 'resolved']) })).describe('newest first; only the latest can be open'),
});

export const searchQuery = z.object({
  q: z.string().trim().min(1).max(200).describe('words (case and accents do not matter; the last may be the start of a word) or a phone number'),
  limit: z.coerce.number().int().min(1).max(50).default(10).describe('hits of each kind, 1 to 50'),
});

export const searchResultSchema = z.object({
  success: z.literal(true),
  contacts: z.array(contactSchema).describe('by name, phone digits and custom attribute values, best match first (empty without the scope contacts:read)'),
  messages: z
    .array(
      z.object({
        sessionId: z.string(),
        messageId: z.string().describe("the message's `_id` in the session's history"),
        audienceExternalId: z.string(),
        conversationId: z.string().describe('the conversation to open (GET /v1/conversations/{id})'),
        snippet: z.string().describe('the text around the first word found'),
        sentAt: z.string(),
      }),
    )
    .describe('best match first, newest first among equal ones'),
});

export const contactListQuery = z.object({
  q: z.string().trim().min(1).max(100).optional().describe('matches phone digits or name (case-insensitive), anywhere in them'),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});

export const noteBody = z.object({ text: z.string().trim().min(1).max(MAX_NOTE_LENGTH).describe("the note: for the organization's agents only, never sent to the customer") }).strict();
