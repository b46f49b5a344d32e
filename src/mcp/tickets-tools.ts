import { z } from 'zod';
import type { TicketService } from '../app/tickets.js';
import { assigneeFilter, audienceExternalId, isoDateTime, ticketActivitySchema, ticketListSchema, ticketPriority, ticketSchema, ticketStatus } from '../app/schemas.js';
import { defineTool, type ToolDef } from './tool.js';

/*
 * The ticket tools of the platform server. They call TicketService, the
 * same code behind /v1/tickets: the same scope checks, visibility rules and
 * validation of contacts and assignees. The input schemas are the REST
 * fields without the deprecated names, described for a language model.
 */

const ticketId = z
  .string()
  .regex(/^T-\d+-\d+$/, 'a ticketId looks like T-261121-000001')
  .describe('The ticket\'s human-readable ID, e.g. "T-261121-000001" (the `ticketId` field of a ticket; not its `_id`).');

const subject = z.string().trim().min(1).max(500).describe('A short one-line summary of the problem; returned as `title`.');
const description = z.string().trim().min(1).max(20_000).describe('What happened, in full: what the customer asked for, what was tried, order numbers and other facts.');
const assigneeId = z.string().min(1).max(100).describe('The ID of a dashboard user of this organization who should handle the ticket.');

export function ticketTools(tickets: TicketService): ToolDef[] {
  return [
    defineTool({
      name: 'get_ticket',
      title: 'Get a ticket',
      description:
        'Fetch one support ticket by its ticketId (like "T-261121-000001"), with its title, description, status, priority, assignee, linked contact and dates. ' +
        'Use it to check the current state of a ticket before answering a customer or updating it. Needs the API key scope tickets:read.',
      scopes: ['tickets:read'],
      input: z.object({ ticketId }).strict(),
      output: ticketSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (ctx, args) => tickets.get(ctx.principal, args.ticketId),
    }),
    defineTool({
      name: 'list_tickets',
      title: 'List tickets',
      description:
        'List support tickets, newest first, one page at a time. Filter by status, priority, assignee and/or contact (audienceExternalId) to find, for example, the open tickets of the customer you are talking to. ' +
        'Returns `tickets` plus `total`, `page` and `totalPages`; ask for the next page while `page` < `totalPages`. Needs the API key scope tickets:read.',
      scopes: ['tickets:read'],
      input: z
        .object({
          status: ticketStatus.optional().describe('Only tickets with this status: open, in_progress, resolved or closed.'),
          priority: ticketPriority.optional().describe('Only tickets with this priority: low, medium, high or urgent.'),
          assigneeId: assigneeFilter.optional().describe('Only tickets assigned to this dashboard user (their user ID), or `none` for tickets assigned to nobody.'),
          audienceExternalId: audienceExternalId.optional().describe("Only tickets linked to this contact: the contact's ID on its channel, `<phone>:<phone number id>` on the chat network."),
          page: z.number().int().min(1).max(100_000).default(1).describe('Page number, starting at 1.'),
          limit: z.number().int().min(1).max(100).default(20).describe('Tickets per page, 1 to 100.'),
        })
        .strict(),
      output: ticketListSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (ctx, args) => tickets.list(ctx.principal, args),
    }),
    defineTool({
      name: 'create_ticket',
      title: 'Create a ticket',
      description:
        'Open a new support ticket so a human team member follows up, for example when you cannot solve the customer\'s problem yourself. ' +
        'Give a short subject and a full description; link it to the customer with audienceExternalId when you know it. Each call creates another ticket unless it repeats an idempotencyKey: ' +
        'check list_tickets first if a ticket for the same problem may already exist. Returns the ticket with its ticketId. Needs the API key scope tickets:create.',
      scopes: ['tickets:create'],
      input: z
        .object({
          subject,
          description,
          priority: ticketPriority.optional().describe('How urgent: low, medium (default), high or urgent.'),
          status: ticketStatus.optional().describe('Initial status; default open.'),
          assigneeId: assigneeId.optional(),
          audienceExternalId: audienceExternalId
            .optional()
            .describe("Links the ticket to an existing contact: the contact's ID on its channel, `<phone>:<phone number id>` on the chat network."),
          idempotencyKey: z
            .string()
            .regex(/^[\x21-\x7e]{1,200}$/, '1 to 200 visible ASCII characters')
            .optional()
            .describe('Any unique string for this ticket (for example the conversation and problem). Calling again with the same key and arguments returns the first ticket instead of creating another; the same key with other arguments is an error.'),
        })
        .strict(),
      output: ticketSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: (ctx, { idempotencyKey, ...input }) => tickets.create(ctx.principal, input, idempotencyKey, 'mcp'),
    }),
    defineTool({
      name: 'update_ticket',
      title: 'Update a ticket',
      description:
        'Change fields of an existing ticket: only the fields you send change. Use it to record progress (status in_progress), to resolve or close a ticket, ' +
        'to change its priority, or to assign it (assigneeId, or null to unassign). Setting status resolved or closed stamps resolutionDate; reopening clears it. ' +
        'Returns the updated ticket. Needs the API key scope tickets:update.',
      scopes: ['tickets:update'],
      input: z
        .object({
          ticketId,
          subject: subject.optional(),
          description: description.optional().describe('Replaces the whole description.'),
          status: ticketStatus.optional().describe('open, in_progress, resolved or closed.'),
          priority: ticketPriority.optional().describe('low, medium, high or urgent.'),
          assigneeId: assigneeId.nullable().optional().describe('A dashboard user ID to assign, or null to unassign.'),
          resolutionDate: isoDateTime.nullable().optional().describe('ISO 8601 date-time; normally left out (set automatically on resolve/close).'),
        })
        .strict()
        .refine((v) => Object.keys(v).length > 1, { message: 'send at least one field to change besides ticketId', path: [] }),
      output: ticketSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: (ctx, { ticketId: id, ...changes }) => tickets.update(ctx.principal, id, changes, 'mcp'),
    }),
    defineTool({
      name: 'comment_on_ticket',
      title: 'Comment on a ticket',
      description:
        "Add a comment to a ticket's activity, for the team: what you found out, what you did, what the customer said. The customer never sees it. " +
        'Returns the comment as its activity entry. Needs the API key scope tickets:update.',
      scopes: ['tickets:update'],
      input: z.object({ ticketId, text: z.string().trim().min(1).max(10_000).describe('The comment, 1 to 10,000 characters.') }).strict(),
      output: ticketActivitySchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: (ctx, { ticketId: id, text }) => tickets.comment(ctx.principal, id, text, 'mcp'),
    }),
  ];
}
