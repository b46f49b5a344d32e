import { z } from 'zod';
import { createTicketBody, updateTicketBody } from '../app/schemas.js';
import { agentTemplateSchema, conversationId, conversationSlaSchema, replyMessageSchema } from '../inbox/schemas.js';
import { EVENT_TYPES } from '../events/types.js';
import { CONVERSATION_STATUSES } from '../domain/conversation.js';

/*
 * The live inbox's WebSocket protocol: every frame in both directions, as zod
 * schemas. The server validates client frames with them, and /asyncapi.json
 * is generated from them, so the document cannot drift from what is checked.
 */

/** Largest frame a client may send. */
export const MAX_FRAME_BYTES = 64 * 1024;

const commandId = z.string().min(1).max(100).describe('chosen by the client, unique per user: a retried command with the same id does not act twice');
const onConversation = { id: commandId, conversationId };

export const clientCommandSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('take'), ...onConversation }).strict().describe('take a queued conversation (or one with the bot); exactly one of racing agents wins, the others get already_taken'),
  z.object({ type: z.literal('reply'), ...onConversation, message: replyMessageSchema }).strict().describe('a free-form message (text, buttons, media) in a conversation you hold, inside the 24-hour window'),
  z.object({ type: z.literal('send_template'), ...onConversation, template: agentTemplateSchema }).strict().describe('an approved template: the only message allowed outside the 24-hour window'),
  z.object({ type: z.literal('hand_back'), ...onConversation }).strict().describe('give the conversation back to the bot'),
  z.object({ type: z.literal('resolve'), ...onConversation }).strict().describe('close the session and give the contact back to the bot'),
  z.object({ type: z.literal('transfer'), ...onConversation, agentId: z.string().min(1).max(100) }).strict().describe('give a conversation you hold to another agent'),
  z.object({ type: z.literal('typing'), ...onConversation }).strict().describe('relayed to the other agents watching; not stored'),
  z.object({ type: z.literal('presence'), id: commandId, status: z.enum(['online', 'away', 'offline']) }).strict().describe('your availability as the other agents see it (the same state as PATCH /v1/users/me/availability): online takes conversations, away and offline do not'),
  z.object({ type: z.literal('ticket_create'), id: commandId, ticket: createTicketBody }).strict().describe('create a ticket (as POST /v1/tickets)'),
  z
    .object({ type: z.literal('ticket_update'), id: commandId, ticketId: z.string().min(1).max(100), changes: updateTicketBody })
    .strict()
    .describe('change a ticket (as PATCH /v1/tickets/{ticketId})'),
]);
export type ClientCommand = z.infer<typeof clientCommandSchema>;
export const CLIENT_COMMAND_TYPES = clientCommandSchema.options.map((o) => o.shape.type.value);

const errorBody = z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() });

/** Frames the server sends. Event frames are the webhook envelope plus `seq`. */
export const serverFrameSchemas = {
  welcome: z
    .object({
      type: z.literal('welcome'),
      organizationId: z.string(),
      user: z.object({ id: z.string(), role: z.enum(['admin', 'agent']) }),
      seq: z.number().int().describe('the newest event sequence when the socket opened: the resume point if nothing else arrives'),
      heartbeatSeconds: z.number().int(),
    })
    .describe('first frame of every connection'),
  event: z
    .object({
      type: z.enum(EVENT_TYPES).describe('the event type'),
      id: z.string().describe('unique per event, stable across redeliveries (the webhook-id)'),
      createdAt: z.string(),
      organizationId: z.string(),
      data: z.unknown().describe('as in the webhook of the same type'),
      seq: z.number().int().describe("the event's position in the durable log: increasing within the organization (numbers may be skipped); send the last one back as ?since= after a reconnect"),
    })
    .describe('an event of the organization, in log order'),
  replay_done: z.object({ type: z.literal('replay_done'), seq: z.number().int() }).describe('the events missed since `since` were sent; live events follow'),
  resync_required: z
    .object({ type: z.literal('resync_required'), oldestSeq: z.number().int(), seq: z.number().int() })
    .describe('`since` is older than the log keeps: reload lists over REST; live events from `seq` on follow'),
  presence: z.object({ type: z.literal('presence'), userId: z.string(), status: z.enum(['online', 'away', 'offline']) }).describe('an agent came online, went away or offline (not stored)'),
  contact: z
    .object({ type: z.literal('contact'), contact: z.object({ id: z.string(), audienceExternalId: z.string().describe('its conversation\'s id') }) })
    .describe("a contact's name, attributes or labels changed: read it again (`GET /v1/contacts/{contactId}`; its conversation's summary shows the name) (not stored)"),
  typing: z.object({ type: z.literal('typing'), userId: z.string(), conversationId: z.string() }).describe('an agent is typing in a conversation (not stored)'),
  conversation: z
    .object({
      type: z.literal('conversation'),
      conversation: z.object({
        id: z.string().describe('the conversation id (audienceExternalId)'),
        contactId: z.string().nullable(),
        status: z.enum(CONVERSATION_STATUSES),
        assigneeId: z.string().nullable(),
        queuedAt: z.string().nullable(),
        assignedAt: z.string().nullable(),
        sessionId: z.string().nullable(),
        sessionStatus: z.enum(['open', 'resolved']).nullable(),
        lastInboundAt: z.string().nullable(),
        teamId: z.string().nullable().optional().describe("the team whose queue it is in (or came from, while an agent has it); null: none"),
        sla: conversationSlaSchema.optional(),
        updatedAt: z.string(),
        version: z.number().int().describe('grows with every change of the conversation: an older version than one already seen is stale'),
      }),
    })
    .describe("a conversation's row changed (lane, assignee, team, session, response-time target, activity), sent once the inbox's lists hold the change: move it between views and refresh counts on it (not stored, no seq)"),
  ack: z.object({ type: z.literal('ack'), commandId: z.string(), result: z.unknown() }).describe('a command succeeded; `result` is what its REST twin answers'),
  error: z.object({ type: z.literal('error'), commandId: z.string().optional(), error: errorBody }).describe('a frame or command was refused; same codes as REST'),
} as const;

/** Close codes the server uses. */
export const CLOSE = {
  /** The node is stopping: reconnect (to any node) with `since`. */
  serviceRestart: 1012,
  /** The client read too slowly and its unsent data passed the bound. */
  tryAgainLater: 1013,
  /** Rate limit exceeded repeatedly. */
  policyViolation: 1008,
  /** A frame over the size limit. */
  tooBig: 1009,
  /**
   * The socket's session or API key no longer authenticates (sign-out,
   * password change or reset, revoked key, deactivated user): do not
   * reconnect with the same credential.
   */
  credentialsRevoked: 4001,
  /** The user's role or the key's scopes changed: reconnect to get what they allow now. */
  accessChanged: 4003,
} as const;
