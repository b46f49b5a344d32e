import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolRegistry } from './registry.js';
import type { ToolContext } from './tool.js';

/** One MCP server the gateway serves at `/mcp/{id}`: its identity and its tools, built once at start. */
export interface McpServerDef {
  /** The `{id}` of `/mcp/{id}`: an integration id (`platform`) or, later, a connected tool's id. */
  id: string;
  name: string;
  title: string;
  version: string;
  /** Sent in the initialize result: how a model should use this server. */
  instructions: string;
  registry: ToolRegistry;
  /** Handed to every tool call of this server as `ToolContext.target` (a connected tool's session). */
  target?: unknown;
}

// The SDK's Server builds a JSON Schema validator (an Ajv instance) when it
// is given none; it only uses it to check elicitation answers, which these
// servers never request. One instance for the process keeps that cost off
// every request; it holds compiled schemas, never a caller's data.
let sharedValidator: AjvJsonSchemaValidator | undefined;

/**
 * A fresh SDK `Server` for one HTTP request, bound to one caller. Nothing in
 * it outlives the request or is shared with another caller (GHSA-345p-7cg4-v4c7):
 * the tool registry it points at is immutable.
 */
export function createRequestServer(def: McpServerDef, ctx: Omit<ToolContext, 'signal'>): Server {
  const server = new Server(
    { name: def.name, title: def.title, version: def.version },
    { capabilities: { tools: { listChanged: false } }, instructions: def.instructions, jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()) },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => def.registry.listFor(ctx.principal.scopes));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    def.registry.call({ ...ctx, signal: extra.signal, ...(def.target === undefined ? {} : { target: def.target }) }, request.params.name, request.params.arguments),
  );
  return server;
}

/** The request schemas of the methods these servers answer; params that fail them are -32602. */
const REQUEST_SCHEMAS = new Map<string, { safeParse(v: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } }>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

/**
 * The SDK parses a request's params with the method's schema before calling
 * its handler and reports a failure as -32603 Internal error. Invalid params
 * are the caller's mistake: this answers them as -32602 Invalid params,
 * naming the field, before the request reaches the server. Call after
 * `server.connect(transport)` (which installs `onmessage`).
 */
export function answerInvalidParams(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('connect the server before guarding its transport');
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      const parsed = REQUEST_SCHEMAS.get(message.method)?.safeParse(message);
      if (parsed && !parsed.success) {
        const issue = parsed.error?.issues[0];
        const where = issue ? issue.path.map(String).join('.') : 'params';
        void transport.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: ${where}: ${issue?.message ?? 'invalid'}` },
        });
        return;
      }
    }
    deliver(message, extra);
  };
}
