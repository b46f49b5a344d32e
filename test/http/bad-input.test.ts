import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN, startTestService, type TestOrg, type TestService } from '../harness/service.js';

/**
 * Every JSON endpoint answers bad bodies with a 4xx in the error shape — never
 * a 500 — and stores nothing.
 */
describe('bad input', () => {
  let svc: TestService;
  let org: TestOrg;
  let ticketId: string;
  beforeAll(async () => {
    svc = await startTestService({ env: { BODY_LIMIT: '16kb' } });
    org = await svc.createOrg('Bad');
    ticketId = (await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 's', description: 'd' } })).body.ticketId;
  });
  afterAll(() => svc?.close());

  const endpoints = () => [
    { name: 'create ticket', method: 'POST', path: '/v1/tickets', key: org.adminKey, good: { subject: 's', description: 'd' } },
    { name: 'update ticket', method: 'PATCH', path: `/v1/tickets/${ticketId}`, key: org.adminKey, good: { status: 'in_progress' } },
    { name: 'create organization', method: 'POST', path: '/admin/v1/organizations', key: OPERATOR_TOKEN, good: { name: 'x' } },
    { name: 'create user', method: 'POST', path: `/admin/v1/organizations/${org.id}/users`, key: OPERATOR_TOKEN, good: { email: 'u@x.io', name: 'u', role: 'agent', password: '0123456789ab' } },
    { name: 'create key', method: 'POST', path: `/admin/v1/organizations/${org.id}/api-keys`, key: OPERATOR_TOKEN, good: { userId: org.adminId, scopes: ['tickets:read'] } },
    { name: 'create contact', method: 'POST', path: `/admin/v1/organizations/${org.id}/contacts`, key: OPERATOR_TOKEN, good: { audienceExternalId: '4915100000001:2' } },
  ];

  const badBodies: [string, string, number][] = [
    ['malformed JSON', '{"subject": ', 400],
    ['JSON array', '[1,2,3]', 400],
    ['JSON string', '"hello"', 400],
    ['JSON null', 'null', 400],
    ['empty object', '{}', 400],
    ['wrong types', '{"subject": 1, "description": true, "status": 5, "name": [], "email": 3, "scopes": "x", "userId": 1, "audienceExternalId": 7}', 400],
    ['unknown enum values', '{"subject":"s","description":"d","status":"pending","priority":"asap","role":"root","scopes":["god"],"email":"a@b.c","name":"n","password":"0123456789ab","userId":"u"}', 400],
    ['oversized body', JSON.stringify({ subject: 's', description: 'x'.repeat(64 * 1024) }), 413],
  ];

  it('answers every bad body with a 4xx in the error shape', async () => {
    for (const ep of endpoints()) {
      for (const [what, raw, status] of badBodies) {
        const r = await svc.call(ep.method, ep.path, { key: ep.key, rawBody: raw });
        expect(r.status, `${ep.name}: ${what}`).toBe(status);
        expect(r.body, `${ep.name}: ${what}`).toMatchObject({ success: false, error: { code: expect.stringMatching(/^[a-z_]+$/), message: expect.any(String) } });
      }
      const wrongType = await svc.call(ep.method, ep.path, { key: ep.key, rawBody: 'subject=s', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(wrongType.status, `${ep.name}: form body`).toBe(415);
    }
  });

  it('names the failing fields in details', async () => {
    const r = await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: '', priority: 'asap' } });
    expect(r.status).toBe(400);
    const fields = r.body.error.details.map((d: any) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['body.subject', 'body.description', 'body.priority']));
  });

  it('stored nothing from the bad requests', async () => {
    const list = await svc.call('GET', '/v1/tickets?limit=100', { key: org.adminKey });
    expect(list.body.total).toBe(1);
    const t = (await svc.call('GET', `/v1/tickets/${ticketId}`, { key: org.adminKey })).body;
    expect(t.status).toBe('open');
    expect((await svc.call('GET', '/admin/v1/organizations', { key: OPERATOR_TOKEN })).body.organizations).toHaveLength(1);
  });

  it('answers unknown paths and methods with a JSON 404', async () => {
    for (const [m, p] of [['GET', '/v1/nope'], ['DELETE', '/v1/tickets'], ['PUT', `/v1/tickets/${ticketId}`]] as const) {
      const r = await svc.call(m, p, { key: org.adminKey });
      expect(r.status).toBe(404);
      expect(r.body.success).toBe(false);
    }
  });

  it('serves an OpenAPI 3.1 document built from the validating schemas, and a docs page', async () => {
    const doc = (await svc.call('GET', '/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    const create = doc.paths['/v1/tickets'].post;
    expect(create['x-required-scope']).toBe('tickets:create');
    const body = create.requestBody.content['application/json'].schema;
    expect(body.properties.priority.enum).toEqual(['low', 'medium', 'high', 'urgent']);
    expect(body.additionalProperties).toBe(false);
    expect(doc.paths['/v1/tickets'].get.parameters.map((p: any) => p.name)).toEqual(['audienceExternalId', 'status', 'priority', 'assigneeId', 'q', 'page', 'limit', 'cursor']);
    expect(doc.paths['/v1/tickets/{ticketId}'].patch.parameters[0]).toMatchObject({ name: 'ticketId', in: 'path', required: true });
    const page = await fetch(svc.url + '/docs');
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('/openapi.json');
  });

  it('echoes a request id and reports health and readiness', async () => {
    const r = await svc.call('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('abc-123');
    const ready = await svc.call('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.store).toBe('ok');
  });
});
