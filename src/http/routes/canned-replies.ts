import { z } from 'zod';
import type { CannedReplyService } from '../../app/canned-replies.js';
import { errorSchema } from '../../app/schemas.js';
import { CANNED_PLACEHOLDERS, CANNED_REPLIES_MAX, CANNED_TEXT_MAX, SHORT_CODE_PATTERN, SHORT_CODE_RULE } from '../../domain/canned-replies.js';
import { defineRoute, type RouteDef } from '../route.js';

const placeholders = Object.entries(CANNED_PLACEHOLDERS)
  .map(([name, what]) => `{{${name}}}: ${what}`)
  .join('; ');

const shortCode = z
  .string()
  .regex(SHORT_CODE_PATTERN, SHORT_CODE_RULE)
  .transform((c) => c.toLowerCase())
  .describe(`what the agent types after / in the composer: ${SHORT_CODE_RULE}; unique in the organization`);
const text = z
  .string()
  .trim()
  .min(1)
  .max(CANNED_TEXT_MAX)
  .describe(`the reply, 1 to ${CANNED_TEXT_MAX} characters, stored as written; the composer fills its placeholders when inserting it (${placeholders})`);

const cannedReplySchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  shortCode: z.string(),
  text: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const one = z.object({ success: z.literal(true), cannedReply: cannedReplySchema });
const idParams = z.object({ id: z.string().min(1).max(64) });
const createBody = z.object({ shortCode, text }).strict();
const updateBody = z
  .object({ shortCode: shortCode.optional(), text: text.optional() })
  .strict()
  .refine((v) => v.shortCode !== undefined || v.text !== undefined, { message: 'send shortCode, text or both', path: [] });

/**
 * Canned replies: agents read them (`inbox:read`) for the composer, admins
 * manage them (`settings:manage`).
 */
export function cannedReplyRoutes(replies: CannedReplyService): RouteDef[] {
  const base = { tag: 'Canned replies', auth: 'apiKey' as const };
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/v1/canned-replies',
      operationId: 'listCannedReplies',
      summary: "The organization's canned replies, by short code",
      scope: 'inbox:read',
      responses: { 200: { description: 'every canned reply of the organization', schema: z.object({ success: z.literal(true), cannedReplies: z.array(cannedReplySchema) }) } },
      handler: async ({ principal }) => ({ body: { success: true, cannedReplies: await replies.list(principal) } }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/canned-replies',
      operationId: 'createCannedReply',
      example: { shortCode: 'thanks', text: 'Thank you {{contact.name}}! {{agent.name}} here: I am looking into it now.' },
      summary: 'Add a canned reply',
      scope: 'settings:manage',
      body: createBody,
      responses: {
        201: { description: 'the canned reply', schema: one },
        400: { description: 'a bad short code, an empty or too long text, or `unknown_placeholder`: a {{…}} that names nothing', schema: errorSchema },
        409: { description: '`short_code_taken`: the organization has a reply with this short code', schema: errorSchema },
        422: { description: `\`too_many_canned_replies\`: the organization keeps ${CANNED_REPLIES_MAX} already`, schema: errorSchema },
      },
      handler: async ({ principal, body }) => ({ status: 201, body: { success: true, cannedReply: await replies.create(principal, body) } }),
    }),
    defineRoute({
      ...base,
      method: 'patch',
      path: '/v1/canned-replies/:id',
      operationId: 'updateCannedReply',
      example: { text: 'Thanks {{contact.name}}, all sorted!' },
      summary: 'Change a canned reply (only the fields sent change)',
      scope: 'settings:manage',
      params: idParams,
      body: updateBody,
      responses: {
        200: { description: 'the canned reply', schema: one },
        400: { description: 'a bad short code, an empty or too long text, `unknown_placeholder`, or nothing to change', schema: errorSchema },
        404: { description: 'no such canned reply in the organization', schema: errorSchema },
        409: { description: '`short_code_taken`: another reply has this short code', schema: errorSchema },
      },
      handler: async ({ principal, params, body }) => ({ body: { success: true, cannedReply: await replies.update(principal, params.id, body) } }),
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/v1/canned-replies/:id',
      operationId: 'deleteCannedReply',
      summary: 'Delete a canned reply',
      scope: 'settings:manage',
      params: idParams,
      responses: {
        204: { description: 'deleted' },
        404: { description: 'no such canned reply in the organization', schema: errorSchema },
      },
      handler: async ({ principal, params }) => {
        await replies.delete(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
