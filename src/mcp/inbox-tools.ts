import { z } from 'zod';
import { CONVERSATION_STATUSES } from '../domain/conversation.js';
import { conversationId, conversationSummarySchema, type InboxService } from '../inbox/index.js';
import { contactCardSchema, locationSchema, reactionSchema, textSendSchema } from '../messaging/index.js';
import { defineTool, type ToolDef } from './tool.js';
import { buttonsInteractive, mediaInput } from './message-tools.js';

/** An agent's reply, as the inbox's replyMessageSchema, with every nested field described and media keyed on its type. */
const replyMessage = z
  .discriminatedUnion('type', [
    z
      .object({
        type: z.literal('text').describe('A text message.'),
        text: textSendSchema.shape.text.shape.body.describe('The text, up to 4096 characters.'),
        previewUrl: z.boolean().optional().describe('Show a preview of the first link in the text.'),
      })
      .strict(),
    z.object({ type: z.literal('buttons').describe('A message with reply buttons.'), interactive: buttonsInteractive }).strict(),
    z.object({ type: z.literal('media').describe('An image, video, audio file, document or sticker.'), media: mediaInput }).strict(),
    z
      .object({
        type: z.literal('location').describe('A place the customer can open on their map.'),
        location: locationSchema.describe('latitude and longitude (decimal degrees), optionally the place\'s name and address, e.g. {"latitude": 52.5219, "longitude": 13.4132, "name": "Our shop", "address": "Karl-Marx-Allee 1, Berlin"}.'),
      })
      .strict(),
    z
      .object({
        type: z.literal('contacts').describe('Contact cards the customer can save.'),
        contacts: z.array(contactCardSchema).min(1).max(20).describe('1 to 20 cards, each with name.formatted_name and optionally phones, emails, org, urls, birthday, e.g. [{"name": {"formatted_name": "Ben Lee"}, "phones": [{"phone": "+49 151 2345678", "wa_id": "491512345678"}]}].'),
      })
      .strict(),
    z
      .object({
        type: z.literal('reaction').describe('An emoji on a message of the conversation.'),
        reaction: reactionSchema.describe('messageId: the network id (wamid…) of a message of this conversation (from get_conversation_history); emoji: one emoji, or "" to take the reaction back.'),
      })
      .strict(),
  ])
  .describe('The reply: text, buttons, media, a location, contact cards or a reaction.');

/**
 * The live inbox as tools: the same InboxService operations as the
 * WebSocket and its REST twins, so an agent assistant can work the queue.
 */
export function inboxTools(inbox: InboxService): ToolDef[] {
  const conversationResult = z.object({ conversation: conversationSummarySchema });
  return [
    defineTool({
      name: 'list_conversations',
      title: 'List conversations',
      description:
        "List the organization's conversations: status `queued` is the live-chat queue of customers waiting for a human (oldest first, take them in that order); `assigned` those an agent holds " +
        '(give assigneeId for one agent\'s); `bot` those with the bot; no status lists all, most recently active first. Each has its contact, assignee and whether the 24-hour window is open. ' +
        'Needs the API key scope inbox:read.',
      scopes: ['inbox:read'],
      input: z
        .object({
          status: z.enum(CONVERSATION_STATUSES).optional().describe('queued, assigned or bot; omit for all'),
          assigneeId: z.string().min(1).max(100).optional().describe('only the conversations this agent (user id) holds'),
          page: z.number().int().min(1).max(100_000).default(1).describe('1-based page'),
          limit: z.number().int().min(1).max(100).default(25).describe('conversations per page, 1 to 100'),
        })
        .strict(),
      output: z.object({ conversations: z.array(conversationSummarySchema), total: z.number().int().describe('how many match, across all pages') }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (ctx, args) => inbox.list(ctx.principal, args),
    }),
    defineTool({
      name: 'take_conversation',
      title: 'Take a queued conversation',
      description:
        "Take a conversation for the API key's user, so that user answers the customer instead of the bot. Exactly one of several agents taking the same conversation wins; " +
        'the others get the error already_taken (naming who has it) and should pick another conversation. Taking one you already hold changes nothing. Needs the API key scope inbox:write.',
      scopes: ['inbox:write'],
      input: z.object({ conversationId: conversationId.describe("the conversation: the contact's audienceExternalId, `<phone>:<phone number id>`") }).strict(),
      output: conversationResult,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (ctx, args) => ({ conversation: await inbox.take(ctx.principal, args.conversationId) }),
    }),
    defineTool({
      name: 'reply_in_conversation',
      title: 'Reply as the agent',
      description:
        'Send a message to the customer as the agent who holds the conversation (take it first): text, reply buttons, media, a location, contact cards or a reaction to one of their messages. Only inside the 24-hour window after the customer last wrote ' +
        '(the error outside_customer_service_window means only an approved template can be sent now). Returns the network message id. Needs the API key scope inbox:write.',
      scopes: ['inbox:write'],
      input: z.object({ conversationId: conversationId.describe("the conversation: the contact's audienceExternalId"), message: replyMessage }).strict(),
      output: z.object({ messageId: z.string().describe("the network's message id (wamid)"), sessionId: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: async (ctx, args) => inbox.reply(ctx.principal, args.conversationId, args.message),
    }),
    defineTool({
      name: 'hand_back_conversation',
      title: 'Hand the conversation back to the bot',
      description: 'Give a conversation you hold (or a queued one) back to the bot, which may then answer the customer again. Needs the API key scope inbox:write.',
      scopes: ['inbox:write'],
      input: z.object({ conversationId: conversationId.describe("the conversation: the contact's audienceExternalId") }).strict(),
      output: conversationResult,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: async (ctx, args) => ({ conversation: await inbox.handBack(ctx.principal, args.conversationId) }),
    }),
  ];
}
