/**
 * MCP gateway: tool calls per second (list_tickets, get_ticket) over
 * Streamable HTTP, beside a bare SDK server with one trivial tool (the SDK's
 * stateless pattern: McpServer + transport per request, JSON responses), the
 * leaner low-level SDK Server doing the same, and the REST twins of the same
 * operations, all in the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { inRounds, report, type LoadTarget } from './lib.js';

const OPERATOR = 'bench-operator-token-0123456789';
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const toolCall = (name: string, args: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

/** The SDK's documented stateless server: a fresh McpServer and transport per request, one trivial tool. */
async function bareSdkServer(): Promise<{ url: string; leanUrl: string; close(): Promise<void> }> {
  const app = express();
  app.use(express.json());
  app.post('/mcp', async (req, res) => {
    const server = new McpServer({ name: 'bare', version: '1.0.0' });
    server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } }, ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
      structuredContent: { sum: a + b },
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // The leanest stateless SDK server: the low-level Server (no per-request
  // Ajv instance, no per-request zod-to-JSON-Schema), as the gateway does it.
  const validator = new AjvJsonSchemaValidator();
  app.post('/mcp-lean', async (req, res) => {
    const server = new Server({ name: 'bare-lean', version: '1.0.0' }, { capabilities: { tools: {} }, jsonSchemaValidator: validator });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'add', inputSchema: { type: 'object' } }] }));
    server.setRequestHandler(CallToolRequestSchema, (r) => {
      const { a, b } = r.params.arguments as { a: number; b: number };
      return { content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `${url}/mcp`, leanUrl: `${url}/mcp-lean`, close: () => new Promise((r) => server.close(() => r())) };
}

async function check(url: string, headers: Record<string, string>, body: string): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers, body });
  const json = (await res.json()) as { result?: { isError?: boolean }; error?: unknown };
  if (res.status !== 200 || json.error || json.result?.isError) throw new Error(`bench request failed: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-mcp-'));
  const bare = await bareSdkServer();
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OPERATOR_TOKEN: OPERATOR, LOG_LEVEL: 'silent', SEED_DEMO: 'false', DATA_DIR: dir });
  const running = await startServer(config, { log: silentLogger });
  try {
    const base = `http://127.0.0.1:${running.port}`;
    const op = async (path: string, body: unknown) =>
      (await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
    const org = await op('/admin/v1/organizations', { name: 'Bench' });
    const user = await op(`/admin/v1/organizations/${org.id}/users`, { email: 'b@x.io', name: 'B', role: 'admin', password: 'bench password' });
    const key = (await op(`/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes: ['mcp:access', 'tickets:create', 'tickets:read'] })).key as string;
    const auth = { authorization: `Bearer ${key}` };
    let ticketId = '';
    for (let i = 0; i < 50; i++) {
      const r = await fetch(`${base}/v1/tickets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ subject: `Ticket ${i}`, description: 'bench' }) });
      ticketId = ((await r.json()) as { ticketId: string }).ticketId;
    }
    const mcpUrl = `${running.mcpUrl}/mcp/platform`;
    const mcpHeaders = { ...MCP_HEADERS, ...auth };
    const bareBody = toolCall('add', { a: 1, b: 2 });
    const listBody = toolCall('list_tickets', { limit: 20 });
    const getBody = toolCall('get_ticket', { ticketId });
    await check(bare.url, MCP_HEADERS, bareBody);
    await check(bare.leanUrl, MCP_HEADERS, bareBody);
    await check(mcpUrl, mcpHeaders, listBody);
    await check(mcpUrl, mcpHeaders, getBody);

    const targets: LoadTarget[] = [
      { name: 'bare SDK server, 1 trivial tool (tools/call)', opts: { url: bare.url, method: 'POST', headers: MCP_HEADERS, body: bareBody } },
      { name: 'bare low-level SDK Server, 1 trivial tool', opts: { url: bare.leanUrl, method: 'POST', headers: MCP_HEADERS, body: bareBody } },
      { name: 'MCP get_ticket', opts: { url: mcpUrl, method: 'POST', headers: mcpHeaders, body: getBody } },
      { name: 'REST twin GET /v1/tickets/{id}', opts: { url: `${base}/v1/tickets/${ticketId}`, headers: auth } },
      { name: 'MCP list_tickets (limit 20)', opts: { url: mcpUrl, method: 'POST', headers: mcpHeaders, body: listBody } },
      { name: 'REST twin GET /v1/tickets?limit=20', opts: { url: `${base}/v1/tickets?limit=20`, headers: auth } },
    ];
    const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
    const [baseline, ...rows] = await inRounds(targets, rounds);
    report(`MCP gateway, embedded store on disk (16 connections, autocannon, median of ${rounds} interleaved rounds)`, baseline!, rows);
  } finally {
    await running.close();
    await bare.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
