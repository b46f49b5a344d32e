/**
 * Connected tools: tool calls per second through `/mcp/{tool_id}` against
 * the sandbox providers (email `list_labels`: one Gmail API call; payment
 * `check_payment_status`: one Stripe API call plus the webhook record), beside
 * a bare stateless MCP SDK server whose tools call the same sandbox
 * endpoints with a plain fetch, all in the same run. The gateway's extra
 * work per call: API key check, tool lookup in the store, credential
 * unsealing, the adapter, the output schema.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { SANDBOX_CLIENT_ID } from '../src/tools/index.js';
import { inRounds, report, type LoadTarget } from './lib.js';

const OPERATOR = 'bench-operator-token-0123456789';
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const toolCall = (name: string, args: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

/** The SDK's documented stateless server with two tools calling the sandbox APIs directly. */
async function bareSdkServer(sandbox: string, token: string, stripeKey: string): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(express.json());
  app.post('/mcp', async (req, res) => {
    const server = new McpServer({ name: 'bare', version: '1.0.0' });
    server.registerTool('list_labels', { description: 'Gmail labels', inputSchema: {}, outputSchema: { labels: z.array(z.object({ id: z.string(), name: z.string() })) } }, async () => {
      const r = (await (await fetch(`${sandbox}/google/gmail/v1/users/me/labels`, { headers: { authorization: `Bearer ${token}` } })).json()) as { labels: { id: string; name: string }[] };
      const labels = r.labels.map((l) => ({ id: l.id, name: l.name }));
      return { content: [{ type: 'text', text: JSON.stringify({ labels }) }], structuredContent: { labels } };
    });
    server.registerTool('check_payment_status', { description: 'Checkout Session status', inputSchema: { paymentId: z.string() }, outputSchema: { status: z.string() } }, async ({ paymentId }) => {
      const s = (await (await fetch(`${sandbox}/stripe/v1/checkout/sessions/${paymentId}`, { headers: { authorization: `Bearer ${stripeKey}` } })).json()) as { status: string };
      return { content: [{ type: 'text', text: JSON.stringify({ status: s.status }) }], structuredContent: { status: s.status } };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => new Promise((r) => server.close(() => r())) };
}

async function check(url: string, headers: Record<string, string>, body: string): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers, body });
  const json = (await res.json()) as { result?: { isError?: boolean }; error?: unknown };
  if (res.status !== 200 || json.error || json.result?.isError) throw new Error(`bench request failed: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
}

/** Approves a consent page as a person would; returns the provider's redirect (with code and state). */
async function approve(redirectUrl: string, email: string): Promise<URL> {
  const page = await (await fetch(redirectUrl)).text();
  const request = /name="request" value="([^"]+)"/.exec(page)![1]!;
  const action = /action="([^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&');
  const r = await fetch(action, { method: 'POST', body: new URLSearchParams({ request, email, decision: 'approve' }), redirect: 'manual' });
  return new URL(r.headers.get('location')!);
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-tools-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OPERATOR_TOKEN: OPERATOR, LOG_LEVEL: 'silent', SEED_DEMO: 'false', DATA_DIR: dir });
  const running = await startServer(config, { log: silentLogger });
  let bare: { url: string; close(): Promise<void> } | undefined;
  try {
    const base = `http://127.0.0.1:${running.port}`;
    const sandbox = `${base}/sandbox/providers`;
    const op = async (path: string, body: unknown) =>
      (await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
    const org = await op('/admin/v1/organizations', { name: 'Bench' });
    const user = await op(`/admin/v1/organizations/${org.id}/users`, { email: 'b@x.io', name: 'B', role: 'admin', password: 'bench password' });
    const key = (await op(`/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes: ['mcp:access'] })).key as string;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    // The gateway's tools: an email tool signed in at the sandbox, a payment tool with a sandbox key.
    const email = (await (await fetch(`${base}/v1/integrations/email/connect`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Bench inbox' }) })).json()) as { id: string; redirect_url: string };
    const back = await approve(email.redirect_url, 'bench@shop.example');
    await fetch(back, { redirect: 'manual' });
    const stripeKey = ((await (await fetch(`${sandbox}/stripe/accounts`, { method: 'POST', headers: auth, body: '{"name":"Bench"}' })).json()) as { api_key: string }).api_key;
    const payment = (await (await fetch(`${base}/v1/integrations/payment/connect`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Bench shop', data: { api_key: stripeKey } }) })).json()) as { id: string };
    const created = await fetch(`${base}/mcp/${payment.id}`, { method: 'POST', headers: { ...MCP_HEADERS, ...auth }, body: toolCall('create_payment_request', { amount: 10, currency: 'EUR', description: 'Bench' }) });
    const paymentId = ((await created.json()) as { result: { structuredContent: { paymentId: string } } }).result.structuredContent.paymentId;

    // The bare server's own token for the same sandbox user (its own OAuth client exchange).
    const verifier = randomBytes(32).toString('base64url');
    const auth2 = new URL(`${sandbox}/google/o/oauth2/v2/auth`);
    for (const [k, v] of Object.entries({ client_id: SANDBOX_CLIENT_ID, redirect_uri: `${running.url}/v1/tools/oauth/callback`, response_type: 'code', scope: 'https://www.googleapis.com/auth/gmail.modify', state: 's', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' })) auth2.searchParams.set(k, v);
    const code = (await approve(auth2.toString(), 'bench@shop.example')).searchParams.get('code')!;
    const tokenRes = await fetch(`${sandbox}/google/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: `${running.url}/v1/tools/oauth/callback`, client_id: SANDBOX_CLIENT_ID, client_secret: running.services.tools!.sandbox!.identity.clientSecret }),
    });
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;
    bare = await bareSdkServer(sandbox, token, stripeKey);

    const gw = { ...MCP_HEADERS, authorization: `Bearer ${key}` };
    const labelsBody = toolCall('list_labels', {});
    const statusBody = toolCall('check_payment_status', { paymentId });
    await check(bare.url, MCP_HEADERS, labelsBody);
    await check(bare.url, MCP_HEADERS, statusBody);
    await check(`${base}/mcp/${email.id}`, gw, labelsBody);
    await check(`${base}/mcp/${payment.id}`, gw, statusBody);

    const targets: LoadTarget[] = [
      { name: 'bare SDK server: list_labels → sandbox Gmail', opts: { url: bare.url, method: 'POST', headers: MCP_HEADERS, body: labelsBody } },
      { name: '/mcp/{tool_id} email list_labels', opts: { url: `${base}/mcp/${email.id}`, method: 'POST', headers: gw, body: labelsBody } },
      { name: 'bare SDK server: check_payment_status → sandbox Stripe', opts: { url: bare.url, method: 'POST', headers: MCP_HEADERS, body: statusBody } },
      { name: '/mcp/{tool_id} payment check_payment_status', opts: { url: `${base}/mcp/${payment.id}`, method: 'POST', headers: gw, body: statusBody } },
    ];
    const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
    const [bareLabels, gwLabels, bareStatus, gwStatus] = await inRounds(targets, rounds);
    report(`Connected tools: email through /mcp/{tool_id} vs a bare SDK server, same sandbox endpoint (median of ${rounds} rounds)`, bareLabels!, [gwLabels!]);
    report(`Connected tools: payment through /mcp/{tool_id} vs a bare SDK server, same sandbox endpoint (median of ${rounds} rounds)`, bareStatus!, [gwStatus!]);
  } finally {
    await bare?.close();
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
