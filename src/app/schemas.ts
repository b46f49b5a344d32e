import { z } from 'zod';
import { TICKET_ACTIVITY_FIELDS, TICKET_PRIORITIES, TICKET_STATUSES, USER_ROLES } from '../domain/types.js';
import { SCOPES } from '../domain/scopes.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_RULE } from '../domain/password-rule.js';
import { CONTACT_ID_MESSAGE, CONTACT_ID_PATTERN } from '../domain/contact-id.js';

/*
 * Request and response schemas shared by the REST API, the MCP gateway and
 * the OpenAPI document: one definition validates and documents.
 */

const text = (max: number) => z.string().trim().min(1).max(max);

/** Every password a caller sets, under the one rule (src/domain/password-rule.ts). */
export const passwordSchema = z.string().min(PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH).describe(PASSWORD_RULE);
export const isoDateTime = z.iso.datetime({ offset: true });

export const ticketStatus = z.enum(TICKET_STATUSES).describe('open, in_progress, resolved or closed');
export const ticketPriority = z.enum(TICKET_PRIORITIES).describe('low, medium, high or urgent');
export const audienceExternalId = z
  .string()
  .regex(CONTACT_ID_PATTERN, CONTACT_ID_MESSAGE)
  .describe("the contact's ID: `<phone>:<phone number id>` (international digits without +, then the business number's phone number id)");

function subjectOrTitle<T extends { subject?: string | undefined; title?: string | undefined }>(v: T, ctx: z.RefinementCtx, required: boolean) {
  if (v.subject !== undefined && v.title !== undefined && v.subject !== v.title) {
    ctx.addIssue({ code: 'custom', path: ['title'], message: 'subject and title are the same field; when both are sent they must agree' });
  }
  if (required && v.subject === undefined && v.title === undefined) {
    ctx.addIssue({ code: 'custom', path: ['subject'], message: 'subject is required' });
  }
}

export const createTicketBody = z
  .object({
    subject: text(500).optional().describe('the ticket subject (returned as `title`)'),
    title: text(500).optional().describe('deprecated older name of `subject`'),
    description: text(20_000),
    status: ticketStatus.optional().describe('default open'),
    priority: ticketPriority.optional().describe('default medium'),
    assigneeId: z.string().min(1).max(100).nullable().optional().describe('ID of the dashboard user to assign'),
    audienceExternalId: audienceExternalId.optional().describe('links the ticket to an existing contact'),
  })
  .strict()
  .superRefine((v, ctx) => subjectOrTitle(v, ctx, true));
export type CreateTicketInput = z.infer<typeof createTicketBody>;

export const updateTicketBody = z
  .object({
    subject: text(500).optional(),
    title: text(500).optional().describe('deprecated older name of `subject`'),
    description: text(20_000).optional(),
    status: ticketStatus.optional(),
    priority: ticketPriority.optional(),
    assigneeId: z.string().min(1).max(100).nullable().optional().describe('a user ID, or null to unassign'),
    resolutionDate: isoDateTime
      .transform((v) => new Date(v).toISOString())
      .nullable()
      .optional()
      .describe('when the ticket was resolved: stamped automatically when the status becomes resolved or closed, unless given; only a resolved or closed ticket has one (400 otherwise); stored in UTC as YYYY-MM-DDTHH:mm:ss.sssZ'),
  })
  .strict()
  .superRefine((v, ctx) => {
    subjectOrTitle(v, ctx, false);
    if (Object.keys(v).length === 0) ctx.addIssue({ code: 'custom', path: [], message: 'send at least one field to change' });
  });
export type UpdateTicketInput = z.infer<typeof updateTicketBody>;

/** The assignee filter's word for "assigned to nobody" (user ids are UUIDs, so it names no user). */
export const UNASSIGNED = 'none';
export const assigneeFilter = z
  .string()
  .regex(/^[\x21-\x7e]{1,100}$/, 'a user ID (1 to 100 visible ASCII characters) or `none`')
  .describe('a user ID: only tickets assigned to that user; `none`: only unassigned tickets');

export const listTicketsQuery = z.object({
  audienceExternalId: audienceExternalId.optional(),
  status: ticketStatus.optional(),
  priority: ticketPriority.optional(),
  assigneeId: assigneeFilter.optional(),
  q: z.string().trim().min(1).max(200).optional().describe('words the subject or description has (case and accents do not matter; the last may be the start of a word)'),
  page: z.coerce.number().int().min(1).default(1).describe('>= 1, default 1'),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('1 to 100, default 20'),
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, "a cursor from an earlier page's nextCursor")
    .optional()
    .describe("the `nextCursor` of the page before: the tickets after it, whatever was created since (page is then not used)"),
});
export type ListTicketsInput = z.infer<typeof listTicketsQuery>;

export const ticketIdParams = z.object({ ticketId: z.string().min(1).max(64) });

export const ticketSchema = z.object({
  _id: z.string(),
  ticketId: z.string().describe('T-<digits>-<digits>'),
  title: z.string(),
  description: z.string(),
  status: ticketStatus,
  priority: ticketPriority,
  assigneeId: z.string().nullable(),
  audienceId: z.string().nullable(),
  audienceExternalId: z.string().nullable().describe("the linked contact's `<phone>:<phone number id>`: what sends and conversation tools take"),
  organizationId: z.string(),
  resolutionDate: z.string().nullable(),
  createdBy: z
    .object({
      kind: z.enum(['api_key', 'session', 'mcp']).describe('api_key: through the REST API; session: a dashboard user; mcp: an MCP tool call'),
      userId: z.string().describe('the dashboard user (or the owner of the API key)'),
      keyId: z.string().nullable(),
      keyName: z.string().nullable(),
    })
    .nullable()
    .describe("who or what made the ticket; null for a ticket an automation rule made (create_ticket), or one made before this was recorded"),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const ticketListSchema = z.object({
  tickets: z.array(ticketSchema),
  total: z.number().int().describe('how many tickets match; with `totalRelation: "gte"`, at least this many'),
  totalRelation: z
    .enum(['eq', 'gte'])
    .describe('`eq`: `total` is exact; `gte`: a text search (`q`) stopped counting at 1,000 matches, so there are at least `total` (`totalPages` counts those)'),
  page: z.number().int(),
  totalPages: z.number().int(),
  nextCursor: z.string().nullable().describe('pass as `cursor` for the next page (stable while tickets are created); null when this page is the last'),
});

export const ticketActivityQuery = z.object({
  cursor: z.string().regex(/^\d{1,15}$/, 'a cursor from an earlier page\'s nextCursor').optional().describe('the `nextCursor` of the page before; absent: from the start'),
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('1 to 100, default 50'),
});
export type TicketActivityQuery = z.infer<typeof ticketActivityQuery>;

export const ticketCommentBody = z.object({ text: text(10_000).describe('the comment, 1 to 10,000 characters (surrounding spaces trimmed)') }).strict();

const ticketActor = z
  .object({
    kind: z.enum(['api_key', 'session', 'mcp', 'system']).describe('api_key: through the REST API; session: a dashboard user; mcp: an MCP tool call; system: the service itself (or a ticket made before this was recorded)'),
    userId: z.string().nullable().describe('the dashboard user (or the owner of the API key); null for system'),
    userName: z.string().nullable().describe("that user's name now; null when the user is gone, or for system"),
    keyId: z.string().nullable(),
    keyName: z.string().nullable(),
  })
  .describe('who did it');

export const ticketActivitySchema = z.object({
  id: z.string(),
  ticketId: z.string(),
  organizationId: z.string(),
  kind: z.enum(['created', 'changed', 'comment']).describe('created: the ticket was made; changed: fields changed (`changes`); comment: an agent commented (`text`)'),
  actor: ticketActor,
  at: z.string().describe('when, in UTC'),
  changes: z
    .array(
      z.object({
        field: z.enum(TICKET_ACTIVITY_FIELDS),
        from: z.string().nullable(),
        to: z.string().nullable(),
      }),
    )
    .optional()
    .describe('changed: each field that changed, from and to (subject, description, status, priority, assigneeId, resolutionDate)'),
  text: z.string().optional().describe('comment: the text'),
});

export const ticketActivityListSchema = z.object({
  entries: z.array(ticketActivitySchema).describe('oldest first'),
  nextCursor: z.string().nullable().describe('pass as `cursor` for the entries after these; null when there are none (yet)'),
});

export const errorSchema = z.object({
  success: z.literal(false),
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});

/** A send the chat network rejected (502): the error and the network's own code, title and message. */
export const networkRejectedSchema = errorSchema.extend({ errorDetails: z.object({ code: z.number().int(), title: z.string(), message: z.string() }) }).meta({
  examples: [
    {
      success: false,
      error: { code: 'network_rejected', message: 'the chat network rejected the message: (#131026) Message undeliverable' },
      errorDetails: { code: 131026, title: 'Message undeliverable', message: 'Unable to deliver message. The recipient is not a WhatsApp user or has not accepted the latest terms.' },
    },
  ],
});

// Operator (admin) API

export const createOrganizationBody = z.object({ name: text(200) }).strict();
export const orgParams = z.object({ orgId: z.string().min(1).max(64) });
export const createUserBody = z
  .object({
    email: z.email().max(320),
    name: text(200),
    role: z.enum(USER_ROLES),
    password: passwordSchema,
  })
  .strict();
export const createApiKeyBody = z
  .object({
    userId: z.string().min(1).max(64).describe('the dashboard user the key belongs to'),
    name: text(200).default('API key'),
    scopes: z.array(z.enum(SCOPES)).min(1).describe('scopes from the spec'),
  })
  .strict();
export const keyParams = z.object({ orgId: z.string().min(1).max(64), keyId: z.string().min(1).max(64) });
export const createContactBody = z.object({ audienceExternalId, name: text(200).optional() }).strict();

export const organizationSchema = z.object({ id: z.string(), name: z.string(), createdAt: z.string() });
export const userSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  email: z.string(),
  name: z.string(),
  role: z.enum(USER_ROLES),
  active: z.boolean().describe('false once deactivated: no sign-in, and their API keys stop working'),
  capacity: z.number().int().nullable().describe('the most open conversations auto-assignment gives them; null: no limit of their own'),
  createdAt: z.string(),
});
export const apiKeySchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  userId: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.string()),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
});
export const createdApiKeySchema = apiKeySchema.extend({ key: z.string().describe('the key itself; shown only once') });
export const contactSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  audienceExternalId: z.string(),
  name: z.string().nullable(),
  phone: z.string().optional().describe("the customer's phone digits, once the network showed them"),
  userId: z.string().optional().describe("the customer's WhatsApp business-scoped user id (BSUID), once the network showed it"),
  parentUserId: z.string().optional().describe('their parent BSUID (managed businesses)'),
  username: z.string().optional().describe('the WhatsApp username they go by'),
  attributes: z.record(z.string(), z.string()).optional(),
  createdAt: z.string(),
});
