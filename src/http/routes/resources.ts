import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import { resourceView, type ResourceService } from '../../resources/index.js';
import { defineRoute, type RouteDef } from '../route.js';

const MAX_CONFIG_BYTES = 64 * 1024;
const name = z.string().trim().min(1).max(200);
const type = z.string().trim().min(1).max(100);
const config = z
  .record(z.string(), z.unknown())
  .refine((c) => Buffer.byteLength(JSON.stringify(c)) <= MAX_CONFIG_BYTES, { message: `config must be at most ${MAX_CONFIG_BYTES} bytes of JSON` });
const createBody = z.object({ name, type, config }).strict();
const updateBody = z
  .object({ name: name.optional(), type: type.optional(), config: config.optional() })
  .strict()
  .refine((v) => Object.keys(v).length > 0, { message: 'send at least one of name, type, config' });
const idParams = z.object({ id: z.uuid() });
const resourceSchema = z.object({ id: z.string(), name: z.string(), type: z.string(), config: z.record(z.string(), z.unknown()), createdAt: z.string(), updatedAt: z.string() });

/**
 * `/api/v1/resource`. The spec has one scope for resources,
 * `resource:create`; reading and updating use it too.
 */
export function resourceRoutes(resources: ResourceService): RouteDef[] {
  const common = { tag: 'Resources', auth: 'apiKey' as const, scope: 'resource:create' as const };
  return [
    defineRoute({
      ...common,
      method: 'post',
      path: '/api/v1/resource',
      operationId: 'createResource',
      example: { name: 'Returns policy', type: 'faq', config: { url: 'https://shop.example.com/returns', language: 'en' } },
      summary: 'Create a resource (emits resource.created)',
      body: createBody,
      responses: {
        201: { description: 'created', schema: z.object({ id: z.string(), name: z.string(), type: z.string(), createdAt: z.string() }) },
        400: { description: 'validation failed', schema: errorSchema },
        401: { description: 'missing or invalid API key', schema: errorSchema },
        409: { description: 'resource_name_taken: a resource with the same name exists', schema: errorSchema },
      },
      handler: async ({ principal, body }) => {
        const r = await resources.create(principal.organizationId, body);
        return { status: 201, body: { id: r.id, name: r.name, type: r.type, createdAt: r.createdAt } };
      },
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/api/v1/resource',
      operationId: 'listResources',
      summary: "List the organization's resources, oldest first",
      query: z.object({ page: z.coerce.number().int().min(1).default(1), limit: z.coerce.number().int().min(1).max(100).default(20) }),
      responses: { 200: { description: 'a page', schema: z.object({ resources: z.array(resourceSchema), total: z.number().int(), page: z.number().int(), totalPages: z.number().int() }) } },
      handler: async ({ principal, query }) => ({ body: await resources.list(principal.organizationId, query.page, query.limit) }),
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/api/v1/resource/:id',
      operationId: 'getResource',
      summary: 'Read one resource',
      params: idParams,
      responses: { 200: { description: 'the resource', schema: resourceSchema }, 404: { description: 'no such resource', schema: errorSchema } },
      handler: async ({ principal, params }) => ({ body: resourceView(await resources.get(principal.organizationId, params.id)) }),
    }),
    defineRoute({
      ...common,
      method: 'patch',
      path: '/api/v1/resource/:id',
      operationId: 'updateResource',
      example: { config: { url: 'https://shop.example.com/returns', language: 'en' } },
      summary: 'Update a resource: the fields sent change, config is replaced whole (emits resource.updated)',
      params: idParams,
      body: updateBody,
      responses: {
        200: { description: 'the resource', schema: resourceSchema },
        404: { description: 'no such resource', schema: errorSchema },
        409: { description: 'resource_name_taken: the new name is taken', schema: errorSchema },
      },
      handler: async ({ principal, params, body }) => ({ body: resourceView(await resources.update(principal.organizationId, params.id, body)) }),
    }),
  ];
}
