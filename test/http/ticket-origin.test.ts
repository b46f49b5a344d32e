import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { call as callTool, mcpClient, structured } from '../mcp/helpers.js';

describe('ticket origin: who or what made each ticket', () => {
  let svc: TestService;
  let org: TestOrg;
  beforeAll(async () => {
    svc = await startTestService();
    org = await svc.createOrg('Origins');
  });
  afterAll(async () => svc?.close());

  it('records the API key, the dashboard user or the MCP tool that made it, and shows it on every read', async () => {
    const key = await org.keyWith(['tickets:create', 'tickets:read'], 'agent');
    const viaKey = await svc.call('POST', '/v1/tickets', { key, body: { subject: 'By key', description: 'x' } });
    expect(viaKey.status).toBe(201);
    expect(viaKey.body.createdBy).toEqual({ kind: 'api_key', userId: org.agentId, keyId: expect.any(String), keyName: expect.any(String) });

    const login = await fetch(`${svc.url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `admin@${org.id}.test`, password: 'correct horse battery' }) });
    expect(login.status).toBe(200);
    const { csrfToken } = (await login.json()) as { csrfToken: string };
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const viaSession = await svc.call('POST', '/v1/tickets', { headers: { cookie, 'x-csrf-token': csrfToken }, body: { subject: 'By hand', description: 'x' } });
    expect(viaSession.status).toBe(201);
    expect(viaSession.body.createdBy).toEqual({ kind: 'session', userId: org.adminId, keyId: null, keyName: null });

    const client = await mcpClient(`${svc.running.mcpUrl}/mcp/platform`, org.adminKey);
    try {
      const viaMcp = structured(await callTool(client, 'create_ticket', { subject: 'By a model', description: 'x' }));
      expect(viaMcp.createdBy).toMatchObject({ kind: 'mcp', userId: org.adminId, keyId: expect.any(String) });
    } finally {
      await client.close();
    }
    const listed = await svc.call('GET', '/v1/tickets?limit=10', { key: org.adminKey });
    expect(Object.fromEntries(listed.body.tickets.map((t: { title: string; createdBy: { kind: string } }) => [t.title, t.createdBy.kind]))).toEqual({ 'By key': 'api_key', 'By hand': 'session', 'By a model': 'mcp' });
  });
});
