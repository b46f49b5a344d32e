import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The SDK's own client, connected over Streamable HTTP with a bearer API key. */
export async function mcpClient(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'switchboard-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  // Caches the output schemas so every later callTool checks structuredContent against them.
  await client.listTools();
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured result of a successful call; fails the test with the tool's error text otherwise. */
export function structured<T = any>(r: CallToolResult): T {
  if (r.isError) throw new Error(`tool error: ${JSON.stringify(r.content)}`);
  if (r.structuredContent === undefined) throw new Error('no structuredContent');
  return r.structuredContent as T;
}

export function errorText(r: CallToolResult): string {
  if (!r.isError) throw new Error(`expected a tool error, got ${JSON.stringify(r.structuredContent)}`);
  const first = r.content[0];
  return first?.type === 'text' ? first.text : '';
}

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A raw JSON-RPC POST, for what the SDK client would never send. */
export async function rawPost(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}
