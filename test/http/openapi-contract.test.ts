import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiResponseChecker } from '../harness/openapi-check.js';
import { OPERATOR_TOKEN, startTestService, type TestOrg, type TestService } from '../harness/service.js';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown>; parameters: { in: string }[]; requestBody?: unknown }>> };

/**
 * `/openapi.json` is the contract: every answer of the test service is
 * checked against it (test/harness/service.ts); these cases pin the answers
 * that drifted before.
 */
describe('the OpenAPI document and the answers', () => {
  let svc: TestService;
  let org: TestOrg;
  let doc: Doc;
  beforeAll(async () => {
    svc = await startTestService({ env: { GRAPH_API_BASE_URL: 'http://127.0.0.1:9/v27.0' } });
    org = await svc.createOrg('Contract');
    doc = (await svc.call('GET', '/openapi.json')).body as Doc;
  });
  afterAll(() => svc?.close());

  it('documents 400 for bad query values, 404 for every path parameter, 413/415 for every body', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method.toUpperCase()} ${path}`;
        if (op.parameters.some((p) => p.in === 'query')) expect(op.responses, where).toHaveProperty('400');
        if (op.parameters.some((p) => p.in === 'path')) expect(op.responses, where).toHaveProperty('404');
        if (op.requestBody) expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(['400', '413', '415']));
      }
    }
    expect(doc.paths['/webhooks/whatsapp/{channelId}']?.post?.responses).toHaveProperty('404');
  });

  it('answers bad page/limit/status with a documented 400 and an unknown orgId with a documented 404', async () => {
    // The harness throws on any answer the document does not allow.
    expect((await svc.call('GET', '/v1/tickets?page=0', { key: org.adminKey })).status).toBe(400);
    expect((await svc.call('GET', '/v1/tickets?limit=1000', { key: org.adminKey })).status).toBe(400);
    expect((await svc.call('GET', '/v1/tickets?status=pending', { key: org.adminKey })).status).toBe(400);
    expect((await svc.call('GET', '/admin/v1/organizations/nope/channels', { key: OPERATOR_TOKEN })).status).toBe(404);
    expect((await svc.call('GET', '/admin/v1/organizations/nope/api-keys', { key: OPERATOR_TOKEN })).status).toBe(404);
    expect((await svc.call('POST', `/webhooks/whatsapp/${'x'.repeat(300)}`, { rawBody: '{}' })).status).toBe(404);
  });

  it('documents templateSync on a channel whose first template sync failed', async () => {
    const r = await svc.call('POST', `/admin/v1/organizations/${org.id}/channels`, {
      key: OPERATOR_TOKEN,
      body: { kind: 'whatsapp_cloud', name: 'Real', network: 'graph', phoneNumberId: '106540352242922', businessAccountId: '102290129340398', accessToken: 'EAAJB-test', appSecret: 'app-secret-test' },
    });
    expect(r.status).toBe(201);
    expect(r.body.templateSync).toMatchObject({ ok: false });
  });

  it('the checker refuses an undocumented status and a body off its schema', () => {
    const checker = new OpenApiResponseChecker({
      paths: {
        '/x/{id}': { get: { responses: { '200': { content: { 'application/json': { schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } } } } } } },
      },
      components: { schemas: {} },
    });
    expect(checker.check('GET', '/x/1', 200, { a: 'ok' }, 'application/json')).toBeNull();
    expect(checker.check('GET', '/x/1', 500, {}, 'application/json')?.problem).toMatch(/not documented/);
    expect(checker.check('GET', '/x/1', 200, { a: 'ok', b: 1 }, 'application/json')?.problem).toMatch(/additional/);
  });
});

describe('deeply nested JSON', () => {
  let svc: TestService;
  let org: TestOrg;
  beforeAll(async () => {
    svc = await startTestService();
    org = await svc.createOrg('Deep');
  });
  afterAll(() => svc?.close());

  const nested = (levels: number) => `{"name":"n","type":"t","config":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;

  it('answers 400 json_too_deep, never 500, for a resource config nested 6,000 levels (POST and PATCH)', async () => {
    const created = await svc.call('POST', '/api/v1/resource', { key: org.adminKey, rawBody: nested(6000) });
    expect(created.status).toBe(400);
    expect(created.body.error.code).toBe('json_too_deep');
    const ok = await svc.call('POST', '/api/v1/resource', { key: org.adminKey, rawBody: nested(10) });
    expect(ok.status).toBe(201);
    const patched = await svc.call('PATCH', `/api/v1/resource/${ok.body.id}`, { key: org.adminKey, rawBody: nested(6000) });
    expect(patched.status).toBe(400);
    expect(patched.body.error.code).toBe('json_too_deep');
  });

  it('counts brackets inside strings as text, not nesting', async () => {
    const r = await svc.call('POST', '/api/v1/resource', { key: org.adminKey, body: { name: 'brackets', type: 't', config: { s: '{'.repeat(500) + '\\"[' } } });
    expect(r.status).toBe(201);
  });

  it('refuses deep JSON-RPC bodies on the MCP endpoint with a parse error, not a crash', async () => {
    const res = await fetch(`${svc.url}/mcp/platform`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.adminKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":${'['.repeat(5000)}${']'.repeat(5000)}}}`,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });
});
