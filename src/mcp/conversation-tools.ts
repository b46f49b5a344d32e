import { z } from 'zod';
import { HANDOVER_REFUSALS } from '../actors/index.js';
import type { ConversationClient, HandoverService } from '../conversations/index.js';
import { requireScope } from '../app/principal.js';
import { audienceExternalId } from '../app/schemas.js';
import { isAppError, notFound } from '../errors.js';
import { sessionMessageSchema } from '../http/routes/sessions.js';
import type { ChannelView, MessagingService } from '../messaging/index.js';
import type { ContactRepo } from '../store/core/port.js';
import { defineTool, type ToolDef } from './tool.js';
import { buttonsTool, contactsTool, listChannelsTool, locationTool, mediaTool, reactionTool, templateTool, textTool } from './message-tools.js';

/*
 * The conversation tools of the platform server: handover, history and the
 * free-form sends. They call the services behind /v1/handover,
 * /v1/sessions/{id}/messages and /v1/messages/*; those services leave the
 * scope check to the route, so each tool checks the same scope first.
 */

export interface ConversationToolDeps {
  handover: HandoverService;
  messaging: MessagingService;
  contacts: ContactRepo;
  /** The organization's channels (list_channels); without it the tool is not offered. */
  channels?: { list(organizationId: string): Promise<ChannelView[]> };
  /** The contact's conversation actor knows its latest session. */
  conversations: ConversationClient;
}

const contactId = audienceExternalId.describe(
  "The contact (customer): their ID on the channel, `<phone>:<phone number id>` on the chat network, e.g. \"4915112345678:106540352242922\" (the audienceExternalId of the inbound_message webhook).",
);

export function conversationTools(d: ConversationToolDeps): ToolDef[] {

  /** The contact's latest session id; null when the contact never had a conversation. */
  async function latestSession(organizationId: string, aeid: string): Promise<string | null> {
    const contact = await d.contacts.get(organizationId, aeid);
    if (contact === null) throw notFound('contact');
    const state = await d.conversations.askPlaced(organizationId, contact.audienceExternalId, { kind: 'state.get' });
    return state.session?.id ?? null;
  }

  // MessageContent is an interface; the schema's content is a loose object. The
  // registry parses every result through the output schema, so this is checked.
  const history = async (principal: Parameters<MessagingService['sessionMessages']>[0], sessionId: string) =>
    (await d.messaging.sessionMessages(principal, sessionId)) as unknown as z.input<typeof sessionMessageSchema>[];

  return [
    defineTool({
      name: 'request_handover',
      title: 'Hand the conversation to a human',
      description:
        "Move the contact's latest conversation into the live-chat queue so a human agent takes over and the bot stops replying. Use it when the customer asks for a person, " +
        'is upset, or needs something you cannot do. After a successful handover do not send further messages to this contact: free-form sends are refused while a human has the conversation. ' +
        '`success: false` means nothing changed because a handover is already pending or an agent already has the conversation (`reason` says which). Needs the API key scope conversation:handover:request.',
      scopes: ['conversation:handover:request'],
      input: z.object({ audienceExternalId: contactId }).strict(),
      output: z.object({
        success: z.boolean().describe('true when the conversation was queued now'),
        reason: z.enum(HANDOVER_REFUSALS).optional().describe('why nothing changed, when success is false'),
        status: z.enum(['bot', 'queued', 'agent']).describe('who has the conversation now'),
        sessionId: z.string().nullable().describe('the conversation (session) that was handed over'),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (ctx, args) => {
        const r = await d.handover.request(ctx.principal, args.audienceExternalId, undefined, 'mcp');
        return { success: r.success, ...(r.reason ? { reason: r.reason } : {}), status: r.handover.status, sessionId: r.sessionId };
      },
    }),
    defineTool({
      name: 'get_conversation_history',
      title: 'Read a conversation',
      description:
        'Read every message of one conversation (session), oldest first: what the customer wrote, what the bot and agents sent, button taps, media, and the delivery status of outbound messages. ' +
        "Give either a sessionId, or the contact's audienceExternalId to read their latest conversation. Use it to catch up before replying. " +
        'Needs the API key scope conversation:handover:request.',
      scopes: ['conversation:handover:request'],
      input: z
        .object({
          sessionId: z.string().min(1).max(128).optional().describe('The session (conversation) ID, e.g. from a webhook event. Give this or audienceExternalId.'),
          audienceExternalId: contactId.optional().describe("The contact whose latest conversation to read, `<phone>:<phone number id>`. Give this or sessionId."),
        })
        .strict()
        .refine((v) => (v.sessionId === undefined) !== (v.audienceExternalId === undefined), { message: 'give exactly one of sessionId or audienceExternalId' })
        .meta({ oneOf: [{ title: 'by session', required: ['sessionId'] }, { title: "the contact's latest session", required: ['audienceExternalId'] }] }),
      output: z.object({
        sessionId: z.string().nullable().describe('the session read; null when the contact has had no conversation yet'),
        messages: z.array(sessionMessageSchema),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async (ctx, args) => {
        // Before the latest-session lookup, so a key without the scope learns nothing about the contact.
        requireScope(ctx.principal, 'conversation:handover:request');
        if (args.sessionId !== undefined) return { sessionId: args.sessionId, messages: await history(ctx.principal, args.sessionId) };
        const sessionId = await latestSession(ctx.principal.organizationId, args.audienceExternalId!);
        if (sessionId === null) return { sessionId: null, messages: [] };
        try {
          return { sessionId, messages: await history(ctx.principal, sessionId) };
        } catch (err) {
          // A conversation opened by a handover has no message yet, so the log does not know it.
          if (isAppError(err) && err.status === 404) return { sessionId, messages: [] };
          throw err;
        }
      },
    }),
    textTool(d.messaging),
    buttonsTool(d.messaging),
    mediaTool(d.messaging),
    locationTool(d.messaging),
    contactsTool(d.messaging),
    reactionTool(d.messaging),
    templateTool(d.messaging),
    ...(d.channels ? [listChannelsTool(d.channels)] : []),
  ];
}
