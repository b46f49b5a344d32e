import { z } from 'zod';
import { errorSchema, networkRejectedSchema, ticketSchema } from '../../app/schemas.js';
import type { TicketService } from '../../app/tickets.js';
import { badRequest } from '../../errors.js';
import {
  agentTemplateSchema,
  contactChangeBody,
  contactDetailSchema,
  contactListQuery,
  contactSchema,
  conversationDetailSchema,
  conversationCountsQuery,
  conversationCountsSchema,
  conversationId,
  conversationListQuery,
  conversationSummarySchema,
  noteBody,
  replyMessageSchema,
  searchQuery,
  searchResultSchema,
  type InboxService,
} from '../../inbox/index.js';
import { EXAMPLE_IDS, ORDER_UPDATE_TEMPLATE } from '../openapi-examples.js';
import { defineRoute, type RouteDef } from '../route.js';
import { idempotencyKey } from './handover.js';
import { sessionMessageSchema } from './sessions.js';

const idParams = z.object({ id: conversationId });
const contactIdParams = z.object({ id: z.string().min(1).max(100) });
const conversationResult = z.object({ success: z.literal(true), conversation: conversationSummarySchema });
const sentResult = z.object({ success: z.literal(true), messageId: z.string().describe("the network's message id (wamid)"), sessionId: z.string() });
const notFoundResponse = { description: 'no such conversation in the organization', schema: errorSchema };
const conflictResponse = {
  description:
    '`already_taken` (another agent has it), `not_assigned_to_you` (an agent acts on a conversation they do not hold), `not_assigned`, `already_with_bot`, `no_open_session`; for queue: `already_queued` (also when already in that team\'s queue), `with_agent`',
  schema: errorSchema,
};
const unavailable = { description: 'the conversation is busy or moving between nodes; retry after Retry-After with the same Idempotency-Key', schema: errorSchema };

/** `/asyncapi.json`: the live inbox's WebSocket protocol. */
export function asyncApiRoute(doc: () => Record<string, unknown>): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/asyncapi.json',
    operationId: 'getAsyncApi',
    summary: 'The live inbox WebSocket protocol (AsyncAPI 3.0)',
    tag: 'Operations',
    auth: 'none',
    responses: { 200: { description: 'AsyncAPI document' } },
    handler: () => ({ body: doc() }),
  });
}

/** The live inbox's REST twins: what an agent does over the WebSocket, for bots and scripts. */
export function conversationRoutes(inbox: InboxService, tickets: TicketService): RouteDef[] {
  const action = (path: string, operationId: string, summary: string, run: (ctx: Parameters<RouteDef['handler']>[0] & { params: { id: string } }) => Promise<unknown>) =>
    defineRoute({
      method: 'post',
      path: `/v1/conversations/:id/${path}`,
      operationId,
      summary,
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: idParams,
      responses: { 200: { description: 'the conversation after the change', schema: conversationResult }, 404: notFoundResponse, 409: conflictResponse, 503: unavailable },
      handler: async (ctx) => ({ body: { success: true, conversation: await run(ctx) } }),
    });
  return [
    defineRoute({
      method: 'get',
      path: '/v1/conversations',
      operationId: 'listConversations',
      summary: 'List conversations by view (all, with the bot, waiting, mine, others, unassigned, resolved), filtered, a page at a time by cursor',
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:read',
      query: conversationListQuery,
      responses: {
        200: {
          description:
            'one page of conversations. With view, sort, cursor, channelId or contact: `nextCursor` (null after the last page). Otherwise (status, assigneeId, page): `page`, `limit` and `total`, as before views existed',
          schema: z.object({
            success: z.literal(true),
            conversations: z.array(conversationSummarySchema),
            nextCursor: z.string().nullable().optional().describe('pass as cursor for the next page; null after the last'),
            page: z.number().optional(),
            limit: z.number(),
            total: z.number().optional(),
          }),
        },
        400: { description: 'a query value is out of range, `invalid_cursor`, or paging by page (status, page) mixed with paging by cursor', schema: errorSchema },
      },
      handler: async ({ principal, query }) => {
        const byCursor = query.view !== undefined || query.sort !== undefined || query.cursor !== undefined || query.channelId !== undefined || query.contact !== undefined || query.label !== undefined || query.sla !== undefined || query.team !== undefined;
        if (!byCursor) {
          const page = query.page ?? 1;
          const r = await inbox.list(principal, { ...(query.status ? { status: query.status } : {}), ...(query.assigneeId ? { assigneeId: query.assigneeId } : {}), page, limit: query.limit });
          return { body: { success: true, conversations: r.conversations, page, limit: query.limit, total: r.total } };
        }
        if (query.status !== undefined || query.page !== undefined) {
          const message = 'status and page page the list by page; with view, sort, cursor, channelId, contact, label or sla it pages by cursor (nextCursor)';
          throw badRequest('validation_failed', message, (['status', 'page'] as const).filter((f) => query[f] !== undefined).map((f) => ({ field: `query.${f}`, message, code: 'custom' })));
        }
        const r = await inbox.listView(principal, query);
        return { body: { success: true, conversations: r.conversations, nextCursor: r.nextCursor, limit: query.limit } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/conversations/counts',
      operationId: 'countConversations',
      summary: 'How many conversations each view holds for the caller',
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:read',
      query: conversationCountsQuery,
      responses: {
        200: { description: 'a count per view', schema: z.object({ success: z.literal(true), counts: conversationCountsSchema }) },
        400: { description: 'a query value is out of range', schema: errorSchema },
      },
      handler: async ({ principal, query }) => ({ body: { success: true, counts: await inbox.counts(principal, query) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/seen',
      operationId: 'markConversationSeen',
      summary: "Mark the conversation read for the caller: its unreadCount becomes 0 until the customer writes again",
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:read',
      params: idParams,
      responses: { 200: { description: 'the conversation, read', schema: conversationResult }, 404: notFoundResponse },
      handler: async ({ principal, params }) => ({ body: { success: true, conversation: await inbox.markSeen(principal, params.id) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/conversations/:id',
      operationId: 'getConversation',
      summary: 'A conversation: contact, handover state, assignee, the 24-hour window and the latest messages',
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:read',
      params: idParams,
      responses: { 200: { description: 'the conversation', schema: z.object({ success: z.literal(true), conversation: conversationDetailSchema }) }, 404: notFoundResponse },
      handler: async ({ principal, params }) => ({ body: { success: true, conversation: await inbox.get(principal, params.id) } }),
    }),
    action('take', 'takeConversation', 'Take a conversation: exactly one of racing agents wins', (ctx) => inbox.take(ctx.principal, ctx.params.id, idempotencyKey(ctx))),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/queue',
      operationId: 'queueConversation',
      example: {},
      summary:
        "Move a conversation that is with the bot into the live-chat queue (the handover of POST /v1/handover, requested by the caller), or with teamId into that team's queue (one already queued moves to it); take works on it as on any queued one",
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: idParams,
      body: z.object({ teamId: z.string().min(1).max(64).optional().describe("a team of the organization: the conversation waits in that team's queue") }).strict(),
      responses: {
        200: { description: 'the conversation after the change', schema: conversationResult },
        400: { description: 'invalid body', schema: errorSchema },
        404: notFoundResponse,
        409: conflictResponse,
        422: { description: '`unknown_team`: no team with this id in the organization', schema: errorSchema },
        503: unavailable,
      },
      handler: async (ctx) => ({ body: { success: true, conversation: await inbox.queue(ctx.principal, ctx.params.id, idempotencyKey(ctx), ctx.body.teamId) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/notes',
      operationId: 'addConversationNote',
      example: { text: 'Called her back: the parcel is at the neighbour\'s, she will pick it up tonight.' },
      summary: "Leave a private note on the conversation: for the organization's agents only, never sent to the customer",
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: idParams,
      body: noteBody,
      responses: {
        201: { description: "the note, as the agents' timeline lists it (sender agent, note: true, direction internal)", schema: z.object({ success: z.literal(true), note: sessionMessageSchema }) },
        404: notFoundResponse,
        409: { description: '`no_conversation`: the contact has had no conversation yet', schema: errorSchema },
        503: unavailable,
      },
      handler: async (ctx) => ({ status: 201, body: { success: true, note: await inbox.addNote(ctx.principal, ctx.params.id, ctx.body.text, idempotencyKey(ctx)) } }),
    }),
    action('hand-back', 'handBackConversation', 'Hand the conversation back to the bot', (ctx) => inbox.handBack(ctx.principal, ctx.params.id, idempotencyKey(ctx))),
    action('resolve', 'resolveConversation', 'Resolve: close the session and give the contact back to the bot', (ctx) => inbox.resolve(ctx.principal, ctx.params.id, idempotencyKey(ctx))),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/transfer',
      operationId: 'transferConversation',
      example: { agentId: EXAMPLE_IDS.userId },
      summary: 'Give the conversation to another agent of the organization',
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: idParams,
      body: z.object({ agentId: z.string().min(1).max(100).describe('the user who gets the conversation') }).strict(),
      responses: {
        200: { description: 'the conversation after the change', schema: conversationResult },
        404: notFoundResponse,
        409: conflictResponse,
        422: { description: '`unknown_agent`: no such user in the organization', schema: errorSchema },
        503: unavailable,
      },
      handler: async (ctx) => ({ body: { success: true, conversation: await inbox.transfer(ctx.principal, ctx.params.id, ctx.body.agentId, idempotencyKey(ctx)) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/reply',
      operationId: 'replyToConversation',
      example: { type: 'text', text: 'Thanks, Ann. A replacement is on its way; it arrives on Thursday.' },
      summary: 'An agent\'s free-form reply (text, buttons, media, a location, contact cards or a reaction), inside the 24-hour window',
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: idParams,
      body: replyMessageSchema,
      responses: {
        200: { description: 'sent: the network accepted the message', schema: sentResult },
        404: notFoundResponse,
        409: conflictResponse,
        422: { description: '`outside_customer_service_window`: only a template can reopen the conversation; `not_supported_on_web_chat`: a web chat takes text, and pictures or documents uploaded for it (POST /v1/conversations/{id}/attachments) by mediaId; `no_such_attachment` / `attachment_type_mismatch`: that mediaId is no file of this web chat conversation, or is not of the media type given; `no_such_message`: a reaction to a message not of this conversation', schema: errorSchema },
        502: { description: 'the chat network rejected the message; its code in errorDetails.code', schema: networkRejectedSchema },
        503: unavailable,
      },
      handler: async (ctx) => ({ body: { success: true, ...(await inbox.reply(ctx.principal, ctx.params.id, ctx.body, idempotencyKey(ctx))) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/request-phone',
      operationId: 'requestConversationPhone',
      example: { text: 'Could you share your phone number so we can call you back?' },
      summary: "Ask a customer who hides their number to share it (Meta's contact-information request); the number they share is linked to their contact",
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: idParams,
      body: z.object({ text: z.string().trim().min(1).max(1024).optional().describe('what the request says (a default asks politely)') }).strict().optional(),
      responses: {
        200: { description: 'sent: the network accepted the request', schema: sentResult },
        404: notFoundResponse,
        409: { description: '`phone_already_known`: the customer has shared their number; or the conversation is held by another agent', schema: errorSchema },
        422: { description: '`outside_customer_service_window`: a request goes only inside the 24-hour window; `not_a_chat_channel`: a web chat visitor', schema: errorSchema },
        502: { description: 'the chat network rejected the message; its code in errorDetails.code', schema: networkRejectedSchema },
        503: unavailable,
      },
      handler: async (ctx) => ({ body: { success: true, ...(await inbox.requestPhone(ctx.principal, ctx.params.id, ctx.body?.text, idempotencyKey(ctx))) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/send-template',
      operationId: 'sendConversationTemplate',
      example: { template: ORDER_UPDATE_TEMPLATE },
      summary: 'An agent sends an approved template (the only message allowed outside the 24-hour window)',
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: idParams,
      body: z.object({ template: agentTemplateSchema }).strict(),
      responses: {
        200: { description: 'sent: the network accepted the message', schema: sentResult },
        400: { description: 'the parameters do not fit the template', schema: errorSchema },
        402: { description: 'not enough credits', schema: errorSchema },
        404: { description: 'no such conversation, or no such template', schema: errorSchema },
        409: conflictResponse,
        422: { description: 'template_not_approved: the template is not approved', schema: errorSchema },
        502: { description: 'the chat network rejected the message; its code in errorDetails.code', schema: networkRejectedSchema },
        503: unavailable,
      },
      handler: async (ctx) => ({ body: { success: true, ...(await inbox.sendTemplate(ctx.principal, ctx.params.id, ctx.body.template, idempotencyKey(ctx))) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/contacts',
      operationId: 'listContacts',
      summary: 'Find contacts by phone digits or name, newest first',
      tag: 'Contacts',
      auth: 'apiKey',
      scope: 'contacts:read',
      query: contactListQuery,
      responses: {
        200: { description: 'one page of contacts', schema: z.object({ success: z.literal(true), contacts: z.array(contactSchema), page: z.number(), limit: z.number(), total: z.number() }) },
        400: { description: 'a query value is out of range', schema: errorSchema },
      },
      handler: async ({ principal, query }) => {
        const r = await inbox.listContacts(principal, query);
        return { body: { success: true, contacts: r.contacts, page: query.page, limit: query.limit, total: r.total } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/contacts/:id',
      operationId: 'getContact',
      summary: 'A contact with its conversation, its sessions (newest first, each open or resolved) and its tickets',
      tag: 'Contacts',
      auth: 'apiKey',
      scope: 'contacts:read',
      params: contactIdParams,
      responses: {
        200: {
          description: 'the contact',
          schema: contactDetailSchema.extend({
            tickets: z.array(ticketSchema).optional().describe('its newest 50 tickets the caller can see (absent without the scope tickets:read)'),
            ticketsTotal: z.number().int().optional().describe('how many tickets of the contact the caller can see'),
          }),
        },
        404: { description: 'no such contact in the organization', schema: errorSchema },
      },
      handler: async ({ principal, params }) => {
        const detail = await inbox.getContact(principal, params.id);
        if (!principal.scopes.has('tickets:read')) return { body: { success: true, ...detail } };
        const list = await tickets.list(principal, { audienceExternalId: detail.contact.audienceExternalId, page: 1, limit: 50 });
        return { body: { success: true, ...detail, tickets: list.tickets, ticketsTotal: list.total } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/contacts/:id',
      operationId: 'updateContact',
      example: { name: 'Ann Lee', attributes: { plan: 'gold', city: 'Berlin', previousEmail: null } },
      summary: "Rename a contact and change its custom attributes (merged key by key; null removes one)",
      tag: 'Contacts',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: contactIdParams,
      body: contactChangeBody,
      responses: {
        200: { description: 'the contact after the change', schema: z.object({ success: z.literal(true), contact: contactSchema }) },
        400: { description: 'invalid body: a name or value too long, a key outside `[A-Za-z0-9_.-]{1,64}`, nothing to change', schema: errorSchema },
        404: { description: 'no such contact in the organization', schema: errorSchema },
        422: { description: '`too_many_attributes`: the contact would have more than 50 attributes', schema: errorSchema },
      },
      handler: async ({ principal, params, body }) => ({ body: { success: true, contact: await inbox.updateContact(principal, params.id, body) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/search',
      operationId: 'search',
      summary: "Search the workspace: contacts by name, phone digits and custom attribute values, and messages by their words",
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:read',
      query: searchQuery,
      responses: {
        200: { description: 'the best hits of each kind', schema: searchResultSchema },
        400: { description: 'q missing or too long, limit out of range', schema: errorSchema },
      },
      handler: async ({ principal, query }) => ({ body: { success: true, ...(await inbox.search(principal, query.q, query.limit)) } }),
    }),
  ];
}
