import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as addFormatsModule from 'ajv-formats';
import { startTestService, type TestService } from '../harness/service.js';
import { OpenApiResponseChecker } from '../harness/openapi-check.js';
import { exampleOf } from '../../src/http/openapi-examples.js';
import { buildRoutes } from '../../src/server.js';

const addFormats = addFormatsModule.default as unknown as (ajv: Ajv2020) => void;

interface Media {
  schema?: unknown;
  example?: unknown;
}
interface Op {
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}

describe('OpenAPI examples', () => {
  let svc: TestService;
  let doc: { paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, unknown> } };
  beforeAll(async () => {
    svc = await startTestService();
    doc = (await svc.call('GET', '/openapi.json')).body;
  });
  afterAll(() => svc?.close());

  it('gives every operation an example request body (when it takes one) and an example for every JSON response, each valid against its schema', async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: true });
    addFormats(ajv);
    const checker = new OpenApiResponseChecker(doc as never);
    const problems: string[] = [];
    let operations = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        operations++;
        const body = op.requestBody?.content['application/json'];
        if (body) {
          if (body.example === undefined) problems.push(`${method} ${path}: no request example`);
          else if (!ajv.validate(body.schema as object, body.example)) problems.push(`${method} ${path} request: ${ajv.errorsText()} ${JSON.stringify(body.example)}`);
        }
        for (const [status, r] of Object.entries(op.responses)) {
          const m = r.content?.['application/json'];
          if (!m) continue;
          if (m.example === undefined) {
            problems.push(`${method} ${path} ${status}: no response example`);
            continue;
          }
          const v = checker.check(method, path, Number(status), m.example, 'application/json');
          if (v) problems.push(`${method} ${path} ${status}: ${v.problem}`);
        }
      }
    }
    expect(operations).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  it("passes every request example through its route's own zod schema, refinements included (which JSON Schema cannot say)", () => {
    const refused: string[] = [];
    for (const route of buildRoutes(svc.running.services, { shuttingDown: false })) {
      if (!route.body) continue;
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      const example = doc.paths[path]?.[route.method]?.requestBody?.content['application/json']?.example;
      const r = route.body.safeParse(example);
      if (!r.success) refused.push(`${route.method} ${path}: ${JSON.stringify(r.error.issues)}`);
    }
    expect(refused).toEqual([]);
  });

  it('reads like real traffic: no type names for values, no bounds of a type for a count, errors with their own code', () => {
    const placeholders: string[] = [];
    const look = (where: string, v: unknown, key?: string): void => {
      if (typeof v === 'string' && (/^string/.test(v) || / example$/.test(v) || /x{2,}$/.test(v))) placeholders.push(`${where} ${key}: ${JSON.stringify(v)}`);
      else if (typeof v === 'number' && Math.abs(v) > 1e12) placeholders.push(`${where} ${key}: ${v}`);
      else if (Array.isArray(v)) v.forEach((x) => look(where, x, key));
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) look(where, x, k);
    };
    const codes = new Map<string, string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        look(`${method} ${path} request`, op.requestBody?.content['application/json']?.example);
        for (const [status, r] of Object.entries(op.responses)) {
          const example = r.content?.['application/json']?.example as { error?: { code?: string } } | undefined;
          look(`${method} ${path} ${status}`, example);
          if (Number(status) >= 400 && example?.error?.code) codes.set(`${method} ${path} ${status}`, example.error.code);
        }
      }
    }
    expect(placeholders).toEqual([]);
    // A 409 or 422 names its code in its description: an example never makes one up.
    expect([...codes].filter(([, code]) => code === 'unnamed_error').map(([where]) => where)).toEqual([]);
    expect(codes.get('post /v1/tickets 401')).toBe('unauthorized');
    expect(codes.get('get /v1/tickets/{ticketId} 404')).toBe('not_found');
    expect(codes.get('post /v1/tickets 403')).toBe('csrf_failed');
  });

  it('gives every path parameter an example, and the examples agree on their ids', () => {
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops) as [string, Op & { parameters?: { in: string; name: string; example?: unknown }[] }][]) {
        for (const p of op.parameters ?? []) if (p.in === 'path' && p.example === undefined) missing.push(`${method} ${path} ${p.name}`);
      }
    }
    expect(missing).toEqual([]);
    const send = doc.paths['/v2/wa/template']!.post!.requestBody!.content['application/json']!.example as { channelId: string; to: string };
    const channelParam = (doc.paths['/v1/channels/{channelId}/templates']!.get as Op & { parameters: { name: string; example: unknown }[] }).parameters.find((p) => p.name === 'channelId');
    expect(channelParam?.example).toBe(send.channelId);
  });

  it('takes an example a schema names itself, and builds the rest from types, formats and bounds', () => {
    expect(exampleOf({ type: 'object', properties: { a: { type: 'string' } }, examples: [{ a: 'given' }] })).toEqual({ a: 'given' });
    expect(
      exampleOf({
        type: 'object',
        properties: {
          createdAt: { type: 'string', format: 'date-time' },
          n: { type: 'integer', minimum: 3 },
          tags: { type: 'array', items: { enum: ['x', 'y'] }, minItems: 2 },
          reference: { type: 'string', minLength: 8 },
          maybe: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
          ref: { $ref: '#/$defs/thing' },
        },
        $defs: { thing: { const: 'the thing' } },
      }),
    ).toEqual({ createdAt: '2026-01-05T09:30:00.000Z', n: 3, tags: ['x', 'x'], reference: 'topup-2026-01-05', maybe: true, ref: 'the thing' });
    // Counts by name, within bounds: never a bound of the type itself.
    expect(exampleOf({ type: 'object', properties: { total: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 }, limit: { type: 'integer', minimum: 1, maximum: 10 } } })).toEqual({ total: 42, limit: 10 });
  });
});
