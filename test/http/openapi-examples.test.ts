import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as addFormatsModule from 'ajv-formats';
import { startTestService, type TestService } from '../harness/service.js';
import { OpenApiResponseChecker } from '../harness/openapi-check.js';
import { exampleOf } from '../../src/http/openapi-examples.js';

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

  it('takes an example a schema names itself, and builds the rest from types, formats and bounds', () => {
    expect(exampleOf({ type: 'object', properties: { a: { type: 'string' } }, examples: [{ a: 'given' }] })).toEqual({ a: 'given' });
    expect(
      exampleOf({
        type: 'object',
        properties: {
          createdAt: { type: 'string', format: 'date-time' },
          n: { type: 'integer', minimum: 3 },
          tags: { type: 'array', items: { enum: ['x', 'y'] }, minItems: 2 },
          code: { type: 'string', minLength: 8 },
          maybe: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
          ref: { $ref: '#/$defs/thing' },
        },
        $defs: { thing: { const: 'the thing' } },
      }),
    ).toEqual({ createdAt: '2026-01-05T09:30:00.000Z', n: 3, tags: ['x', 'x'], code: 'stringxx', maybe: true, ref: 'the thing' });
  });
});
