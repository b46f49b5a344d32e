import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { MESSAGE_STATUSES } from '../../domain/message-status.js';
import { CONTENT_TYPES, MESSAGE_SENDERS, TIMELINE_ACTORS, TIMELINE_EVENTS } from '../../domain/messages.js';
import type { MessagingService } from '../../messaging/index.js';
import { defineRoute, type RouteDef } from '../route.js';

const timelineActorSchema = z
  .object({
    type: z.enum(TIMELINE_ACTORS).describe('agent (a dashboard user), bot (over MCP), api (a script with an API key), automation, or contact (the customer)'),
    userId: z.string().optional().describe('the user who acted (an API key acts for its owner)'),
    keyId: z.string().optional(),
    keyName: z.string().optional(),
  });

export const timelineSystemSchema = z
  .object({
    event: z.enum(TIMELINE_EVENTS),
    by: timelineActorSchema.optional().describe('who did it'),
    from: z.string().nullable().optional().describe('the agent who held the conversation before (transferred, handed_back, resolved)'),
    to: z.string().optional().describe('the agent it went to (transferred)'),
    ticketId: z.string().optional().describe('ticket_created: the ticket'),
    subject: z.string().optional().describe("ticket_created: the ticket's subject"),
    reason: z.string().optional().describe('handover_requested and waiting_for_opening by automation: why (first_responder, bot_fallback, rule); assigned: auto_assign when auto-assignment gave it; automation_failed: why the action failed'),
    ruleId: z.string().optional().describe('rule_fired, automation_failed, and what a rule did: the automation rule'),
    ruleName: z.string().optional().describe("the automation rule's name"),
    action: z.string().optional().describe('automation_failed: the action that failed (auto_reply, add_label, set_priority, create_ticket)'),
    until: z.string().optional().describe('waiting_for_opening: when the conversation is queued (the next opening); sla_breached: when the answer was due'),
    target: z.enum(['first_response', 'next_response']).optional().describe('sla_breached: the response-time target missed'),
    label: z.string().optional().describe("label_added: the label's name"),
    priority: z.string().optional().describe("priority_set: the ticket's priority now"),
    teamId: z.string().optional().describe('team_assigned: the team whose queue the conversation is in now'),
    fromTeamId: z.string().optional().describe('team_assigned: the team whose queue it was in before'),
  })
  .meta({ examples: [{ event: 'handover_requested', by: { type: 'automation' }, reason: 'rule', ruleId: 'rule_Xk3mQ9vT2pLa' }] });

export const sessionMessageSchema = z.object({
  _id: z
    .string()
    .describe("this service's id of the stored message, the same scheme for every message whoever sent it: msg_ and 32 URL-safe base64 characters (the network's id is messageId)")
    .meta({ examples: ['msg_Q2hhdEZpcnN0TWVzc2FnZUlkMDAwMDAx'] }),
  sessionId: z.string(),
  sender: z.enum(MESSAGE_SENDERS).describe('contact, bot or agent; system for a system entry of the timeline (what happened to the conversation), which never reached the customer'),
  content: z.object({ type: z.enum(CONTENT_TYPES), text: z.string().optional(), mediaUrl: z.string().optional() }).loose(),
  sentAt: z.string(),
  direction: z.enum(['inbound', 'outbound', 'internal']).describe('internal: a system entry or a private note, never sent to the customer, never counted as unread, never charged'),
  messageId: z.string().nullable().describe("the chat network's message id (wamid…); null for a send the network never accepted").meta({ examples: ['wamid.HBgNNDkxNTExMjM0NTY3OBUCABEYEjA2QjdCN0Y3MDg2RDNGMzA5AA=='] }),
  status: z.enum(MESSAGE_STATUSES).optional().describe('outbound messages: accepted, sent, delivered, read or failed'),
  statusUpdatedAt: z.string().optional().describe('when the status last changed'),
  errors: z.array(z.object({ code: z.number().int(), title: z.string(), message: z.string() })).optional().describe("the network's reasons, for a failed message"),
  replyTo: z.string().optional().describe('the network message this one replies to (a button tap names the message whose button it was)'),
  agentId: z.string().optional().describe('the agent who sent it (sender agent), or wrote the note'),
  system: timelineSystemSchema.optional().describe('a system entry (sender system): what happened; content.text says it in words'),
  note: z.literal(true).optional().describe("an agent's private note (sender agent): only in the agents' timeline, never sent to the customer"),
  channelId: z.string(),
  audienceExternalId: z.string(),
});

export function sessionRoutes(messaging: MessagingService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/sessions/:sessionId/messages',
      operationId: 'listSessionMessages',
      summary: 'All messages of one session (conversation), oldest first',
      tag: 'Sessions',
      auth: 'apiKey',
      scope: 'conversation:handover:request',
      params: z.object({ sessionId: z.string().min(1).max(128) }),
      query: z.object({
        include: z.enum(['notes']).optional().describe("notes: the agents' timeline, with private notes among the messages (needs inbox:read too); without it, never a note"),
      }),
      responses: {
        200: { description: 'the messages, with system entries (sender system) in the order they happened', schema: z.array(sessionMessageSchema) },
        403: { description: '`insufficient_scope`: include=notes without inbox:read', schema: errorSchema },
        404: { description: 'no such session in the organization', schema: errorSchema },
      },
      handler: async ({ principal, params, query }) => ({ body: await messaging.sessionMessages(principal, params.sessionId, { notes: query.include === 'notes' }) }),
    }),
  ];
}
