import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { MESSAGE_STATUSES } from '../../domain/message-status.js';
import { CONTENT_TYPES, MESSAGE_SENDERS } from '../../domain/messages.js';
import type { MessagingService } from '../../messaging/index.js';
import { defineRoute, type RouteDef } from '../route.js';

export const sessionMessageSchema = z.object({
  _id: z
    .string()
    .describe("this service's id of the stored message, the same scheme for every message whoever sent it: msg_ and 32 URL-safe base64 characters (the network's id is messageId)")
    .meta({ examples: ['msg_Q2hhdEZpcnN0TWVzc2FnZUlkMDAwMDAx'] }),
  sessionId: z.string(),
  sender: z.enum(MESSAGE_SENDERS),
  content: z.object({ type: z.enum(CONTENT_TYPES), text: z.string().optional(), mediaUrl: z.string().optional() }).loose(),
  sentAt: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  messageId: z.string().nullable().describe("the chat network's message id (wamid…); null for a send the network never accepted").meta({ examples: ['wamid.HBgNNDkxNTExMjM0NTY3OBUCABEYEjA2QjdCN0Y3MDg2RDNGMzA5AA=='] }),
  status: z.enum(MESSAGE_STATUSES).optional().describe('outbound messages: accepted, sent, delivered, read or failed'),
  statusUpdatedAt: z.string().optional().describe('when the status last changed'),
  errors: z.array(z.object({ code: z.number().int(), title: z.string(), message: z.string() })).optional().describe("the network's reasons, for a failed message"),
  replyTo: z.string().optional().describe('the network message this one replies to (a button tap names the message whose button it was)'),
  agentId: z.string().optional().describe('the agent who sent it (sender agent)'),
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
      responses: {
        200: { description: 'the messages', schema: z.array(sessionMessageSchema) },
        404: { description: 'no such session in the organization', schema: errorSchema },
      },
      handler: async ({ principal, params }) => ({ body: await messaging.sessionMessages(principal, params.sessionId) }),
    }),
  ];
}
