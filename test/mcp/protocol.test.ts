import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { call, MCP_HEADERS, mcpClient, rawPost, structured } from './helpers.js';

/** An HTTP request with exactly the headers given (fetch would add Host and Accept itself). */
function rawHttp(url: string, opts: { method?: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: opts.method ?? 'POST', headers: opts.headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = text;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const rpc = (method: string, params?: unknown, id: number | string = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

describe('MCP gateway: HTTP edge, auth and bad input', () => {
  let svc: TestService;
  let org: TestOrg;
  let url: string;
  let auth: Record<string, string>;
  beforeAll(async () => {
    svc = await startTestService({ env: { MCP_BODY_LIMIT_BYTES: '65536' } });
    org = await svc.createOrg('Edge');
    url = `${svc.running.mcpUrl}/mcp/platform`;
    auth = { ...MCP_HEADERS, authorization: `Bearer ${org.adminKey}` };
  });
  afterAll(() => svc?.close());

  describe('authentication', () => {
    it('answers a missing key with 401 and WWW-Authenticate', async () => {
      const r = await rawPost(url, rpc('tools/list'), MCP_HEADERS);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer realm="switchboard"');
      expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'unauthorized' } } });
    });

    it('answers an invalid or revoked key with 401 invalid_token', async () => {
      for (const key of ['org_not-a-real-key', 'garbage']) {
        const r = await rawPost(url, rpc('tools/list'), { ...MCP_HEADERS, authorization: `Bearer ${key}` });
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toContain('error="invalid_token"');
      }
    });

    it('answers a key without mcp:access with 403 naming the scope, whatever tool scopes it has', async () => {
      const key = await org.keyWith(['tickets:read', 'tickets:create']);
      const r = await rawPost(url, rpc('tools/list'), { ...MCP_HEADERS, authorization: `Bearer ${key}` });
      expect(r.status).toBe(403);
      expect(r.headers.get('www-authenticate')).toContain('scope="mcp:access"');
      expect(r.json.error.data).toEqual({ code: 'insufficient_scope', requiredScope: 'mcp:access' });
    });

    it('lets the SDK client surface a 401 as an error instead of hanging', async () => {
      await expect(mcpClient(url, 'org_wrong')).rejects.toThrow(/Unauthorized/);
    });
  });

  describe('bad input gets the protocol\'s errors, never a 500', () => {
    it('malformed JSON: 400 parse error -32700', async () => {
      const r = await rawPost(url, '{"jsonrpc": "2.0", "id": 1, "method": ', auth);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe(-32700);
    });

    it('JSON that is not JSON-RPC: 400', async () => {
      for (const body of ['{"hello": "world"}', '42', '{"jsonrpc": "1.0", "id": 1, "method": "ping"}', 'null', '[1, 2]']) {
        const r = await rawPost(url, body, auth);
        expect(r.status, body).toBeGreaterThanOrEqual(400);
        expect(r.status, body).toBeLessThan(500);
        expect(r.json.jsonrpc, body).toBe('2.0');
      }
    });

    it('unknown method: JSON-RPC -32601', async () => {
      const r = await rawPost(url, rpc('tickets/steal'), auth);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ id: 1, error: { code: -32601 } });
      // Capabilities this server does not have are unknown methods too.
      expect((await rawPost(url, rpc('resources/list'), auth)).json.error.code).toBe(-32601);
    });

    it('unknown tool: JSON-RPC -32602; arguments that fail the input schema: an isError result naming the field (SEP-1303)', async () => {
      const unknown = await rawPost(url, rpc('tools/call', { name: 'delete_everything', arguments: {} }), auth);
      expect(unknown.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: delete_everything') });
      const cases = [
        { name: 'get_ticket', arguments: { ticketId: 42 } },
        { name: 'get_ticket', arguments: {} },
        { name: 'list_tickets', arguments: { limit: 'twenty' } },
        { name: 'list_tickets', arguments: { limit: 1000 } },
        { name: 'create_ticket', arguments: { subject: 'S' } },
        { name: 'create_ticket', arguments: { subject: 'S', description: 'd', priority: 'whenever' } },
        { name: 'create_ticket', arguments: { subject: 'S', description: 'd', organizationId: 'other' } },
        { name: 'update_ticket', arguments: { ticketId: 'T-1-1' } },
      ];
      // Requests that are not a tools/call at all stay protocol errors.
      expect((await rawPost(url, rpc('initialize', { protocolVersion: 5 }), auth)).json.error.code).toBe(-32602);
      expect((await rawPost(url, rpc('tools/list', { cursor: 5 }), auth)).json.error.code).toBe(-32602);
      expect((await rawPost(url, rpc('tools/call', { name: 'get_ticket', arguments: 'not an object' }), auth)).json.error.code).toBe(-32602);
      expect((await rawPost(url, rpc('tools/call', { name: 42 }), auth)).json.error.code).toBe(-32602);
      for (const params of cases) {
        const r = await rawPost(url, rpc('tools/call', params), auth);
        expect(r.status, JSON.stringify(params)).toBe(200);
        expect(r.json.error, JSON.stringify(params)).toBeUndefined();
        expect(r.json.result.isError, JSON.stringify(params)).toBe(true);
        expect(r.json.result.content[0].text, JSON.stringify(params)).toMatch(/^Invalid arguments for tool /);
      }
      const r = await rawPost(url, rpc('tools/call', { name: 'list_tickets', arguments: { limit: 'twenty' } }), auth);
      expect(r.json.result.content[0].text).toContain('limit');
    });

    it('requests without an Accept header (or without text/event-stream in it): 406', async () => {
      const { accept: _drop, ...noAccept } = auth;
      const host = new URL(url).host;
      const r = await rawHttp(url, { headers: { ...noAccept, host }, body: rpc('tools/list') });
      expect(r.status).toBe(406);
      expect(r.json.jsonrpc).toBe('2.0');
      expect((await rawPost(url, rpc('tools/list'), { ...auth, accept: 'application/json' })).status).toBe(406);
    });

    it('a body that is not JSON: 415', async () => {
      const r = await rawPost(url, rpc('tools/list'), { ...auth, 'content-type': 'text/plain' });
      expect(r.status).toBe(415);
    });

    it('a huge payload: 413 before it is parsed', async () => {
      const huge = rpc('tools/call', { name: 'create_ticket', arguments: { subject: 'S', description: 'x'.repeat(200_000) } });
      const r = await rawPost(url, huge, auth);
      expect(r.status).toBe(413);
      expect(r.json.jsonrpc).toBe('2.0');
      // A description over the tool's own limit, within the body limit, is an invalid argument.
      const big = await rawPost(url, rpc('tools/call', { name: 'create_ticket', arguments: { subject: 'S', description: 'x'.repeat(30_000) } }), auth);
      expect(big.json.result.isError).toBe(true);
    });

    it('a huge chunked payload (no Content-Length) is cut off at the limit: 413', async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(url, { method: 'POST', headers: { ...auth, 'transfer-encoding': 'chunked' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_ticket","arguments":{"subject":"S","description":"');
        for (let i = 0; i < 10; i++) req.write('x'.repeat(10_000));
        req.end('"}}}');
      });
      expect(status).toBe(413);
      // The service still answers afterwards.
      expect((await rawPost(url, rpc('ping'), auth)).json.result).toEqual({});
    });

    it('an unsupported protocol version header: 400', async () => {
      const r = await rawPost(url, rpc('tools/list'), { ...auth, 'mcp-protocol-version': '1999-01-01' });
      expect(r.status).toBe(400);
    });

    it('GET (no standalone SSE stream) and DELETE (no sessions): 405 with Allow', async () => {
      for (const method of ['GET', 'DELETE', 'PUT']) {
        const res = await fetch(url, { method, headers: { ...auth, accept: 'text/event-stream' } });
        expect(res.status, method).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
        await res.body?.cancel();
      }
    });

    it('a batch mixing good and bad calls answers each on its own', async () => {
      const batch = JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'ping' },
        { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'nope', arguments: {} } },
      ]);
      const r = await rawPost(url, batch, auth);
      expect(r.status).toBeLessThan(500);
    });
  });

  describe('DNS rebinding protection', () => {
    it('refuses a foreign Host with 403 before looking at the key', async () => {
      const r = await rawHttp(url, { headers: { ...auth, host: 'evil.example.com' }, body: rpc('tools/list') });
      expect(r.status).toBe(403);
      expect(r.json.error.message).toContain('evil.example.com');
    });

    it('refuses a foreign Origin (and the opaque null origin) with 403', async () => {
      for (const origin of ['http://evil.example.com', 'https://localhost.evil.example.com', 'null']) {
        const r = await rawPost(url, rpc('tools/list'), { ...auth, origin });
        expect(r.status, origin).toBe(403);
      }
    });

    it('accepts loopback hosts and origins on any port', async () => {
      const port = new URL(url).port;
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
        const r = await rawHttp(url, { headers: { ...auth, host, origin: `http://${host}` }, body: rpc('tools/list') });
        expect(r.status, host).toBe(200);
      }
      expect((await rawPost(url, rpc('tools/list'), { ...auth, origin: 'http://localhost:6274' })).status).toBe(200);
    });
  });

  it('is stateless: a node that never saw the initialize answers the next request', async () => {
    const other = await startTestService();
    try {
      const o = await other.createOrg('Other');
      const r = await rawPost(`${other.running.mcpUrl}/mcp/platform`, rpc('tools/call', { name: 'list_tickets', arguments: {} }), {
        ...MCP_HEADERS,
        authorization: `Bearer ${o.adminKey}`,
        'mcp-protocol-version': '2025-06-18',
      });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain('application/json');
      expect(r.headers.get('mcp-session-id')).toBeNull();
      expect(r.json.result.structuredContent.total).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe('MCP gateway on its own listener (MCP_PORT)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { MCP_PORT: '0' } });
  });
  afterAll(() => svc?.close());

  it('serves /mcp on the MCP port only, and GET /v1/integrations points there', async () => {
    const org = await svc.createOrg('Split');
    const mcpPort = new URL(svc.running.mcpUrl).port;
    expect(mcpPort).not.toBe(String(svc.running.port));

    const c = await mcpClient(`http://127.0.0.1:${mcpPort}/mcp/platform`, org.adminKey);
    expect(structured(await call(c, 'list_tickets')).total).toBe(0);
    await c.close();

    const onRest = await rawPost(`${svc.url}/mcp/platform`, rpc('tools/list'), { ...MCP_HEADERS, authorization: `Bearer ${org.adminKey}` });
    expect(onRest.status).toBe(404);
    const onMcpPortRest = await fetch(`http://127.0.0.1:${mcpPort}/v1/tickets`, { headers: { authorization: `Bearer ${org.adminKey}` } });
    expect(onMcpPortRest.status).toBe(404);

    const integrations = await svc.call('GET', '/v1/integrations', { key: org.adminKey });
    expect(integrations.body.integrations[0].mcp_url).toBe(`http://127.0.0.1:${mcpPort}/mcp/platform`);
  });
});
