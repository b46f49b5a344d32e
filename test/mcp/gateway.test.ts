import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { call, errorText, MCP_HEADERS, mcpClient, rawPost, structured } from './helpers.js';

const TICKET_TOOLS = ['get_ticket', 'list_tickets', 'create_ticket', 'update_ticket'];

describe('MCP gateway: platform server over Streamable HTTP', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let url: string;
  let clientA: Client;
  let clientB: Client;
  beforeAll(async () => {
    svc = await startTestService();
    a = await svc.createOrg('A');
    b = await svc.createOrg('B');
    url = `${svc.running.mcpUrl}/mcp/platform`;
    clientA = await mcpClient(url, a.adminKey);
    clientB = await mcpClient(url, b.adminKey);
  });
  afterAll(async () => {
    await clientA?.close();
    await clientB?.close();
    await svc?.close();
  });

  it('create_ticket with an idempotencyKey creates once, returns the first ticket on a repeat, and refuses the key with other arguments', async () => {
    const args = { subject: 'MCP once', description: 'd', idempotencyKey: 'mcp-once-1' };
    const first = structured(await call(clientA, 'create_ticket', args));
    const again = structured(await call(clientA, 'create_ticket', args));
    expect(again.ticketId).toBe(first.ticketId);
    expect(first.audienceExternalId).toBeNull();
    const reused = await call(clientA, 'create_ticket', { ...args, priority: 'high' });
    expect(errorText(reused)).toMatch(/idempotency/i);
    const inB = structured(await call(clientB, 'create_ticket', args));
    expect(inB.organizationId).toBe(b.id);
  });

  it('tools/list shows a key only the tools its scopes allow', async () => {
    const readOnly = await mcpClient(url, await a.keyWith(['mcp:access', 'tickets:read']));
    try {
      const names = (await readOnly.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(['get_ticket', 'list_channels', 'list_tickets']);
      // A tool left out still answers, naming the scope it needs.
      expect(errorText(await call(readOnly, 'create_ticket', { subject: 's', description: 'd' }))).toContain('tickets:create');
    } finally {
      await readOnly.close();
    }
    const all = (await clientA.listTools()).tools.map((t) => t.name);
    for (const n of TICKET_TOOLS) expect(all).toContain(n);
  });

  it('initializes with server info and tool capability, and answers ping', async () => {
    expect(clientA.getServerVersion()).toMatchObject({ name: 'switchboard-platform' });
    expect(clientA.getServerCapabilities()?.tools).toBeDefined();
    expect(clientA.getInstructions()).toContain('list_tickets');
    expect(await clientA.ping()).toEqual({});
  });

  it('lists every tool with a description, described input fields, an output schema and the three hints', async () => {
    const { tools } = await clientA.listTools();
    const names = tools.map((t) => t.name);
    for (const n of TICKET_TOOLS) expect(names).toContain(n);
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(80);
      expect(t.inputSchema.type).toBe('object');
      for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${t.name}.${field}`).toBeTruthy();
      }
      expect(t.outputSchema?.type).toBe('object');
      expect(typeof t.annotations?.readOnlyHint).toBe('boolean');
      expect(typeof t.annotations?.destructiveHint).toBe('boolean');
      expect(typeof t.annotations?.idempotentHint).toBe('boolean');
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.get_ticket!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.create_ticket!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(byName.create_ticket!.inputSchema.required).toEqual(expect.arrayContaining(['subject', 'description']));
  });

  it('creates, fetches, lists and updates tickets, with structured results matching the output schemas', async () => {
    const contact = await a.contact('4915112345678:100200');
    const created = structured(
      await call(clientA, 'create_ticket', { subject: 'Refund for order 42', description: 'Customer wants a refund', priority: 'high', audienceExternalId: contact.audienceExternalId }),
    );
    expect(created).toMatchObject({ title: 'Refund for order 42', priority: 'high', status: 'open', organizationId: a.id, audienceId: contact.id });
    expect(created.ticketId).toMatch(/^T-\d+-\d+$/);

    const got = structured(await call(clientA, 'get_ticket', { ticketId: created.ticketId }));
    expect(got).toEqual(created);

    const list = structured(await call(clientA, 'list_tickets', { audienceExternalId: contact.audienceExternalId }));
    expect(list).toMatchObject({ total: 1, page: 1, totalPages: 1 });
    expect(list.tickets[0].ticketId).toBe(created.ticketId);

    const updated = structured(await call(clientA, 'update_ticket', { ticketId: created.ticketId, status: 'resolved', assigneeId: a.agentId }));
    expect(updated).toMatchObject({ status: 'resolved', assigneeId: a.agentId });
    expect(updated.resolutionDate).not.toBeNull();

    // The REST API sees the same ticket: one application service behind both.
    const rest = await svc.call('GET', `/v1/tickets/${created.ticketId}`, { key: a.adminKey });
    expect(rest.body).toEqual(updated);

    // Text content carries the same JSON for clients that ignore structuredContent.
    const r = await call(clientA, 'get_ticket', { ticketId: created.ticketId });
    expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
  });

  it('paginates list_tickets and filters by status, priority and assignee', async () => {
    const org = await svc.createOrg('Pager');
    const c = await mcpClient(url, org.adminKey);
    for (let i = 0; i < 5; i++) structured(await call(c, 'create_ticket', { subject: `t${i}`, description: 'd', status: i % 2 ? 'in_progress' : 'open' }));
    const page2 = structured(await call(c, 'list_tickets', { limit: 2, page: 2 }));
    expect(page2).toMatchObject({ total: 5, page: 2, totalPages: 3 });
    expect(page2.tickets.map((t: { title: string }) => t.title)).toEqual(['t2', 't1']);
    const inProgress = structured(await call(c, 'list_tickets', { status: 'in_progress' }));
    expect(inProgress.total).toBe(2);
    structured(await call(c, 'create_ticket', { subject: 'urgent-agent', description: 'd', priority: 'urgent', assigneeId: org.agentId }));
    structured(await call(c, 'create_ticket', { subject: 'urgent-nobody', description: 'd', priority: 'urgent' }));
    const titles = async (args: Record<string, unknown>) => structured(await call(c, 'list_tickets', args)).tickets.map((t: { title: string }) => t.title);
    expect(await titles({ priority: 'urgent' })).toEqual(['urgent-nobody', 'urgent-agent']);
    expect(await titles({ priority: 'urgent', assigneeId: org.agentId })).toEqual(['urgent-agent']);
    expect(await titles({ assigneeId: 'none', priority: 'urgent' })).toEqual(['urgent-nobody']);
    expect((await call(c, 'list_tickets', { priority: 'critical' })).isError).toBe(true);
    await c.close();
  });

  it('reports a missing scope as a tool error naming the scope, not a crash', async () => {
    const key = await a.keyWith(['mcp:access', 'tickets:read']);
    const c = await mcpClient(url, key);
    const r = await call(c, 'create_ticket', { subject: 'S', description: 'd' });
    expect(r.isError).toBe(true);
    expect(errorText(r)).toContain('lacks the scope tickets:create');
    expect(errorText(r)).toContain('insufficient_scope');
    const u = await call(c, 'update_ticket', { ticketId: 'T-1-1', status: 'closed' });
    expect(errorText(u)).toContain('tickets:update');
    // The scope it has works.
    expect(structured(await call(c, 'list_tickets')).tickets).toBeInstanceOf(Array);
    await c.close();
  });

  it('turns application failures into actionable tool errors (unknown contact, unknown assignee, missing ticket)', async () => {
    expect(errorText(await call(clientA, 'create_ticket', { subject: 'S', description: 'd', audienceExternalId: '1234567:999' }))).toMatch(/unknown_contact/);
    expect(errorText(await call(clientA, 'create_ticket', { subject: 'S', description: 'd', assigneeId: 'nobody' }))).toMatch(/unknown_assignee/);
    expect(errorText(await call(clientA, 'get_ticket', { ticketId: 'T-999999-999999' }))).toMatch(/not_found.*list_tickets/);
  });

  it('keeps the key owner\'s visibility: an agent\'s key does not see tickets assigned to someone else', async () => {
    const t = structured(await call(clientA, 'create_ticket', { subject: 'Admin only', description: 'd', assigneeId: a.adminId }));
    const agent = await mcpClient(url, a.agentKey);
    expect(errorText(await call(agent, 'get_ticket', { ticketId: t.ticketId }))).toMatch(/not_found/);
    await agent.close();
  });

  describe('cross-organization isolation', () => {
    it('a key of organization B cannot see or change organization A\'s tickets through any tool', async () => {
      const contactA = await a.contact('4917000000001:55');
      const t = structured(await call(clientA, 'create_ticket', { subject: 'Secret of A', description: 'only A', audienceExternalId: contactA.audienceExternalId }));

      expect(errorText(await call(clientB, 'get_ticket', { ticketId: t.ticketId }))).toMatch(/not_found/);
      expect(errorText(await call(clientB, 'update_ticket', { ticketId: t.ticketId, status: 'closed', description: 'overwritten by B' }))).toMatch(/not_found/);
      const listB = structured(await call(clientB, 'list_tickets', { limit: 100 }));
      expect(listB.tickets.every((x: { organizationId: string }) => x.organizationId === b.id)).toBe(true);
      expect(listB.tickets.map((x: { ticketId: string }) => x.ticketId)).not.toContain(t.ticketId);
      expect(structured(await call(clientB, 'list_tickets', { audienceExternalId: contactA.audienceExternalId })).total).toBe(0);
      expect(errorText(await call(clientB, 'create_ticket', { subject: 'S', description: 'd', audienceExternalId: contactA.audienceExternalId }))).toMatch(/unknown_contact/);
      expect(errorText(await call(clientB, 'create_ticket', { subject: 'S', description: 'd', assigneeId: a.agentId }))).toMatch(/unknown_assignee/);

      // A's ticket is untouched.
      expect(structured(await call(clientA, 'get_ticket', { ticketId: t.ticketId }))).toEqual(t);
    });

    it('answers another organization\'s id, and any unknown id, with 404', async () => {
      for (const id of [a.id, b.id, 'email', 'nope']) {
        const r = await rawPost(`${svc.running.mcpUrl}/mcp/${id}`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { ...MCP_HEADERS, authorization: `Bearer ${b.adminKey}` });
        expect(r.status).toBe(404);
        expect(r.json.error.code).toBe(-32000);
      }
    });

    it('serves concurrent callers of different organizations without crossing their answers', async () => {
      // Same JSON-RPC ids on purpose: a shared transport would route answers by id.
      const [ta, tb] = [
        structured(await call(clientA, 'create_ticket', { subject: 'mine-A', description: 'd' })),
        structured(await call(clientB, 'create_ticket', { subject: 'mine-B', description: 'd' })),
      ];
      const post = (key: string, ticketId: string) =>
        rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_ticket', arguments: { ticketId } } }), { ...MCP_HEADERS, authorization: `Bearer ${key}` });
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? post(b.adminKey, tb.ticketId) : post(a.adminKey, ta.ticketId))));
      answers.forEach((r, i) => {
        expect(r.status).toBe(200);
        expect(r.json.result.structuredContent.title).toBe(i % 2 ? 'mine-B' : 'mine-A');
      });
    });
  });

  describe('GET /v1/integrations', () => {
    it('lists the platform integration with its MCP URL and tools', async () => {
      const r = await svc.call('GET', '/v1/integrations', { key: a.adminKey });
      expect(r.status).toBe(200);
      const platform = r.body.integrations.find((i: { id: string }) => i.id === 'platform');
      // No PUBLIC_URL configured: the address the caller used.
      expect(platform.mcp_url).toBe(`${svc.url}/mcp/platform`);
      expect(platform.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(TICKET_TOOLS));
      expect(platform.tools.find((t: { name: string }) => t.name === 'create_ticket').scopes).toEqual(['tickets:create']);
    });

    it('needs a key with mcp:access, and shows organization B nothing of A', async () => {
      expect((await svc.call('GET', '/v1/integrations')).status).toBe(401);
      const r = await svc.call('GET', '/v1/integrations', { key: await a.keyWith(['tickets:read']) });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('insufficient_scope');
      const ra = await svc.call('GET', '/v1/integrations', { key: a.adminKey });
      const rb = await svc.call('GET', '/v1/integrations', { key: b.adminKey });
      expect(rb.body).toEqual(ra.body);
      expect(JSON.stringify(rb.body)).not.toContain(a.id);
    });
  });
});
