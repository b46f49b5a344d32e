import { z } from 'zod';
import type { RouteDef } from './route.js';
import { errorSchema } from '../app/schemas.js';
import { addExamples } from './openapi-examples.js';

function schemaOf(s: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function parameters(route: RouteDef): unknown[] {
  const out: unknown[] = [];
  const add = (s: z.ZodType | undefined, where: 'path' | 'query') => {
    if (!s) return;
    const json = schemaOf(s, 'input') as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
    for (const [name, schema] of Object.entries(json.properties ?? {})) {
      out.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        description: schema.description,
        schema,
      });
    }
  };
  add(route.params, 'path');
  add(route.query, 'query');
  return out;
}

/**
 * The refusals the route table itself answers, derived from what a route
 * declares, so the document cannot drift from what `createHttpApp` does:
 * unparseable params are 404, a bad query or body 400, and so on.
 */
export function generatedStatuses(r: RouteDef): Record<number, string> {
  const out: Record<number, string> = {};
  if (r.body || r.query) out[400] = r.body ? 'invalid request: a field, the query or the JSON itself' : 'invalid query parameter';
  if (r.auth !== 'none') out[401] = 'missing or invalid credentials';
  if (r.scope) out[403] = `the key lacks the scope ${r.scope}`;
  const cookie = r.auth === 'apiKey' || r.auth === 'session';
  if (cookie && r.method !== 'get') out[403] = r.scope ? `the key lacks the scope ${r.scope}, or \`csrf_failed\` (session cookie without X-CSRF-Token)` : '`csrf_failed`: a session cookie without the X-CSRF-Token header';
  if (r.params) out[404] = 'no such resource (or a malformed id)';
  if (r.body) {
    out[413] = 'the request body is too large';
    out[415] = 'the body is not application/json';
  }
  if (r.preValidate) out[429] = 'rate limited: wait for Retry-After';
  else if (cookie) out[429] = '`too_many_attempts`: too many failed authentications from this address or for this key; wait for Retry-After';
  if (r.opaqueFailures) out[500] = 'any failure (deprecated contract)';
  // Any route that reads or writes state can find its storage (or, clustered, the conversation's
  // owner) unavailable for a moment; the answer says so and that nothing of the request was kept.
  if (r.auth !== 'none') out[503] = '`storage_unavailable` (a full disk, an I/O error, Redis unreachable) or another retryable outage: nothing of the request was kept; retry after Retry-After';
  return out;
}

/** OpenAPI 3.1 from the same route definitions and zod schemas that serve requests. */
export function buildOpenApi(routes: RouteDef[], info: { version: string; serverUrl?: string | undefined }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, '{$1}');
    const responses: Record<string, unknown> = {};
    for (const [status, resp] of Object.entries(r.responses)) {
      responses[status] = resp.schema
        ? { description: resp.description, content: { 'application/json': { schema: schemaOf(resp.schema, 'output') } } }
        : resp.file
          ? { description: resp.description, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } }
          : { description: resp.description };
    }
    for (const [status, description] of Object.entries(generatedStatuses(r))) {
      responses[status] ??= { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    // Node's HTTP server refuses a request it cannot read (400 malformed, 431 headers too large) on
    // every path, before any route runs: the one refusal of a public route that takes no input.
    if (!Object.keys(responses).some((s) => s.startsWith('4'))) {
      responses['4XX'] = { description: 'the HTTP request could not be read (400 malformed, 431 headers too large); answered by the HTTP server with no body' };
    }
    paths[path] ??= {};
    paths[path][r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      ...(r.deprecated ? { deprecated: true, description: `Deprecated: use ${r.deprecated.successor}.` } : {}),
      ...(r.scope ? { 'x-required-scope': r.scope } : {}),
      security: r.auth === 'apiKey' ? [{ apiKey: [] }, { sessionCookie: [] }] : r.auth === 'session' ? [{ sessionCookie: [] }] : r.auth === 'operator' ? [{ operatorToken: [] }] : [],
      parameters: parameters(r),
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(r.body, 'input'), ...(r.example !== undefined ? { example: r.example } : {}) } } } } : {}),
      responses,
    };
  }
  const doc = {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard API',
      version: info.version,
      // The project publishes no licence of its own (package.json is private): say so rather than
      // name one it has not chosen.
      license: { name: 'Proprietary: all rights reserved', identifier: 'LicenseRef-Proprietary' },
      description: 'Support tickets, chat messaging on the WhatsApp Cloud API, human handover, webhooks and an MCP tool gateway. Errors are `{"success": false, "error": {"code", "message", "details"}}`. The live inbox WebSocket (`/ws`) is described in AsyncAPI at [/asyncapi.json](/asyncapi.json).',
    },
    // Without PUBLIC_URL the document names its own origin: a relative server URL is the one this
    // document was fetched from, which is right behind any proxy (and tools refuse a missing `servers`).
    servers: [info.serverUrl ? { url: info.serverUrl.replace(/\/+$/, '') } : { url: '/', description: 'the origin this document is served from' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Organization API key (`org_...`) with the scope each operation names.' },
        operatorToken: { type: 'http', scheme: 'bearer', description: 'Operator token of the deployment.' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'sb_session',
          description: 'Dashboard session from `POST /v1/auth/login`. Unsafe methods (POST, PATCH, PUT, DELETE) also need the header `X-CSRF-Token` with the session\'s `csrfToken` (else 403 `csrf_failed`).',
        },
      },
      schemas: { Error: schemaOf(errorSchema, 'output') },
    },
    paths,
  };
  addExamples(doc);
  return doc;
}
