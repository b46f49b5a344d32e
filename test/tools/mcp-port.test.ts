import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { call, mcpClient, structured } from '../mcp/helpers.js';

/** With MCP_PORT the gateway has a listener of its own: connect and the tools are at `{mcp_url}` there, as the spec places them. */
describe('connected tools on the MCP_PORT listener', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  beforeAll(async () => {
    svc = await startTestService({ env: { MCP_PORT: '0' } });
    a = await svc.createOrg('A');
    b = await svc.createOrg('B');
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('connect, sign-in callback, tools and the tool\'s MCP server all answer at {mcp_url}', async () => {
    const mcpUrl = svc.running.mcpUrl;
    expect(mcpUrl).not.toBe(svc.url);
    const post = await fetch(`${mcpUrl}/v1/integrations/email/connect`, { method: 'POST', headers: { authorization: `Bearer ${a.adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Inbox' }) });
    expect(post.status).toBe(201);
    const tool = (await post.json()) as { id: string; mcp_url: string; redirect_url: string };
    expect(tool.mcp_url).toBe(`${mcpUrl}/mcp/${tool.id}`);
    // The callback is the service's public address (PUBLIC_URL, else http://localhost:<PORT>), wherever connect was called.
    expect(new URL(tool.redirect_url).searchParams.get('redirect_uri')).toBe(`${svc.running.url}/v1/tools/oauth/callback`);
    const page = await (await fetch(tool.redirect_url)).text();
    const request = /name="request" value="([^"]+)"/.exec(page)![1]!;
    const action = /action="([^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&');
    const back = await fetch(action, { method: 'POST', body: new URLSearchParams({ request, email: 'port@shop.example', decision: 'approve' }), redirect: 'manual' });
    expect((await fetch(back.headers.get('location')!)).status).toBe(200);
    const list = (await (await fetch(`${mcpUrl}/v1/tools`, { headers: { authorization: `Bearer ${a.adminKey}` } })).json()) as { tools: { id: string; status: string }[] };
    expect(list.tools).toEqual([expect.objectContaining({ id: tool.id, status: 'active' })]);
    expect((await fetch(`${mcpUrl}/v1/tools/${tool.id}`, { headers: { authorization: `Bearer ${b.adminKey}` } })).status).toBe(404);
    const client = await mcpClient(`${mcpUrl}/mcp/${tool.id}`, a.adminKey);
    expect(structured(await call(client, 'list_labels', {})).labels.length).toBeGreaterThan(5);
    await client.close();
    expect((await fetch(`${mcpUrl}/admin/v1/tools/return-origins`)).status).toBe(404);
  });
});
