import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { conversationId, labelColor, labelName, labelRef, labelSchema, type LabelService } from '../../inbox/index.js';
import { defineRoute, type RouteDef } from '../route.js';

const labelResult = z.object({ success: z.literal(true), label: labelSchema });
const labelsOn = z.object({ success: z.literal(true), labels: z.array(labelSchema).describe('every label on it now, in the order they were put on') });
const labelsBody = z.object({ labels: z.array(labelRef).min(1).max(20).describe('labels to put on (ids or names); those already on it stay once') }).strict();
const notFound = (what: string) => ({ description: `no such ${what} in the organization`, schema: errorSchema });
const unknownLabel = { description: '`unknown_label` (no such label: `details.labels` names them), `too_many_labels` (at most 20)', schema: errorSchema };

/** An organization's labels, and putting them on conversations and contacts. */
export function labelRoutes(labels: LabelService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/labels',
      operationId: 'listLabels',
      summary: "The organization's labels, by name",
      tag: 'Labels',
      auth: 'apiKey',
      scope: 'inbox:read',
      responses: { 200: { description: 'every label', schema: z.object({ success: z.literal(true), labels: z.array(labelSchema) }) } },
      handler: async ({ principal }) => ({ body: { success: true, labels: await labels.list(principal) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/labels',
      operationId: 'createLabel',
      example: { name: 'refund', color: '#e11d48' },
      summary: 'Create a label (admins)',
      tag: 'Labels',
      auth: 'apiKey',
      scope: 'settings:manage',
      body: z.object({ name: labelName, color: labelColor.optional().describe('#rrggbb; grey when absent') }).strict(),
      responses: {
        201: { description: 'the label', schema: labelResult },
        400: { description: 'invalid body', schema: errorSchema },
        409: { description: '`label_exists`: the name is taken (in any case)', schema: errorSchema },
        422: { description: '`too_many_labels`: the organization has 200', schema: errorSchema },
      },
      handler: async ({ principal, body }) => ({ status: 201, body: { success: true, label: await labels.create(principal, body) } }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/labels/:labelId',
      operationId: 'updateLabel',
      example: { color: '#f59e0b' },
      summary: 'Rename or recolour a label (admins); it stays on what it is on',
      tag: 'Labels',
      auth: 'apiKey',
      scope: 'settings:manage',
      params: z.object({ labelId: labelRef }),
      body: z
        .object({ name: labelName.optional(), color: labelColor.optional() })
        .strict()
        .refine((b) => b.name !== undefined || b.color !== undefined, { message: 'give name, color or both' }),
      responses: {
        200: { description: 'the label after the change', schema: labelResult },
        400: { description: 'invalid body, or nothing to change', schema: errorSchema },
        404: notFound('label'),
        409: { description: '`label_exists`: the name is taken', schema: errorSchema },
      },
      handler: async ({ principal, params, body }) => ({ body: { success: true, label: await labels.update(principal, params.labelId, body) } }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/labels/:labelId',
      operationId: 'deleteLabel',
      summary: 'Delete a label (admins): it comes off every conversation and contact',
      tag: 'Labels',
      auth: 'apiKey',
      scope: 'settings:manage',
      params: z.object({ labelId: labelRef }),
      responses: { 200: { description: 'deleted', schema: z.object({ success: z.literal(true) }) }, 404: notFound('label') },
      handler: async ({ principal, params }) => {
        await labels.delete(principal, params.labelId);
        return { body: { success: true } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/conversations/:id/labels',
      operationId: 'labelConversation',
      example: { labels: ['refund'] },
      summary: 'Put labels on a conversation',
      tag: 'Labels',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: z.object({ id: conversationId }),
      body: labelsBody,
      responses: { 200: { description: 'the labels on the conversation now', schema: labelsOn }, 400: { description: 'invalid body', schema: errorSchema }, 404: notFound('conversation'), 422: unknownLabel },
      handler: async ({ principal, params, body }) => ({ body: { success: true, labels: await labels.addToConversation(principal, params.id, body.labels) } }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/conversations/:id/labels/:label',
      operationId: 'unlabelConversation',
      summary: 'Take a label off a conversation (one that is not on it changes nothing)',
      tag: 'Labels',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: z.object({ id: conversationId, label: labelRef }),
      responses: { 200: { description: 'the labels on the conversation now', schema: labelsOn }, 404: { description: 'no such conversation or label in the organization', schema: errorSchema } },
      handler: async ({ principal, params }) => ({ body: { success: true, labels: await labels.removeFromConversation(principal, params.id, params.label) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/contacts/:id/labels',
      operationId: 'labelContact',
      example: { labels: ['vip'] },
      summary: 'Put labels on a contact',
      tag: 'Labels',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: z.object({ id: z.string().min(1).max(100) }),
      body: labelsBody,
      responses: { 200: { description: 'the labels on the contact now', schema: labelsOn }, 400: { description: 'invalid body', schema: errorSchema }, 404: notFound('contact'), 422: unknownLabel },
      handler: async ({ principal, params, body }) => ({ body: { success: true, labels: await labels.addToContact(principal, params.id, body.labels) } }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/contacts/:id/labels/:label',
      operationId: 'unlabelContact',
      summary: 'Take a label off a contact (one that is not on it changes nothing)',
      tag: 'Labels',
      auth: 'apiKey',
      scope: 'inbox:write',
      params: z.object({ id: z.string().min(1).max(100), label: labelRef }),
      responses: { 200: { description: 'the labels on the contact now', schema: labelsOn }, 404: { description: 'no such contact or label in the organization', schema: errorSchema } },
      handler: async ({ principal, params }) => ({ body: { success: true, labels: await labels.removeFromContact(principal, params.id, params.label) } }),
    }),
  ];
}
