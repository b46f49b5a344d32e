import type { TicketService } from '../../app/tickets.js';
import { createTicketBody, errorSchema, listTicketsQuery, ticketIdParams, ticketListSchema, ticketSchema, updateTicketBody } from '../../app/schemas.js';
import { idempotencyKey } from '../idempotency-key.js';
import { EXAMPLE_IDS } from '../openapi-examples.js';
import { defineRoute, type RouteDef } from '../route.js';

export function ticketRoutes(tickets: TicketService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/tickets',
      operationId: 'createTicket',
      example: { subject: 'Order #1042 arrived damaged', description: 'The parcel arrived with a torn box and a cracked lid; the customer asks for a replacement.', priority: 'high', audienceExternalId: EXAMPLE_IDS.audienceExternalId },
      summary: 'Create a ticket',
      tag: 'Tickets',
      auth: 'apiKey',
      scope: 'tickets:create',
      body: createTicketBody,
      responses: {
        201: { description: 'the ticket (a repeat with the same Idempotency-Key and body: the first create\'s ticket, nothing created)', schema: ticketSchema },
        400: { description: 'invalid body, unknown contact or assignee', schema: errorSchema },
        422: { description: 'idempotency_key_reused: the Idempotency-Key came with another body within 24 hours', schema: errorSchema },
      },
      handler: async (ctx) => ({ status: 201, body: await tickets.create(ctx.principal, ctx.body, idempotencyKey(ctx)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tickets',
      operationId: 'listTickets',
      summary: 'List tickets, newest first',
      tag: 'Tickets',
      auth: 'apiKey',
      scope: 'tickets:read',
      query: listTicketsQuery,
      responses: {
        200: { description: 'a page of tickets the key can see that match every filter given', schema: ticketListSchema },
        400: { description: 'invalid query parameter: a status or priority outside its enum, an assigneeId that is not a user ID or `none`, a malformed audienceExternalId, page or limit out of range', schema: errorSchema },
      },
      handler: async ({ principal, query }) => ({ body: await tickets.list(principal, query) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tickets/:ticketId',
      operationId: 'getTicket',
      summary: 'Fetch one ticket',
      tag: 'Tickets',
      auth: 'apiKey',
      scope: 'tickets:read',
      params: ticketIdParams,
      responses: { 200: { description: 'the ticket', schema: ticketSchema }, 404: { description: 'no such ticket visible to this key', schema: errorSchema } },
      handler: async ({ principal, params }) => ({ body: await tickets.get(principal, params.ticketId) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/tickets/:ticketId',
      operationId: 'updateTicket',
      example: { status: 'in_progress', priority: 'urgent', assigneeId: EXAMPLE_IDS.userId },
      summary: 'Update a ticket (only the fields sent change)',
      tag: 'Tickets',
      auth: 'apiKey',
      scope: 'tickets:update',
      params: ticketIdParams,
      body: updateTicketBody,
      responses: { 200: { description: 'the updated ticket', schema: ticketSchema }, 404: { description: 'no such ticket visible to this key', schema: errorSchema } },
      handler: async ({ principal, params, body }) => ({ body: await tickets.update(principal, params.ticketId, body) }),
    }),
  ];
}
