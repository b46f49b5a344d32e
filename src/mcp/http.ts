import { randomUUID } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../domain/types.js';
import { isAppError } from '../errors.js';
import type { Logger } from '../log.js';
import { checkOrigin, type RebindingPolicy } from './rebinding.js';
import { answerInvalidParams, createRequestServer, type McpServerDef } from './request-server.js';

/** JSON-RPC code for errors the HTTP layer answers before any message is read (the SDK transport uses the same). */
const TRANSPORT_ERROR = -32000;

export interface McpHttpOptions {
  log: Logger;
  /** Resolves a bearer API key to its principal; throws a 401 AppError. */
  authenticate(key: string | undefined): Promise<Principal>;
  /** The server at `/mcp/{id}` for this caller; undefined for unknown ids and for other organizations' tools. */
  resolve(principal: Principal, id: string): McpServerDef | undefined | Promise<McpServerDef | undefined>;
  policy: RebindingPolicy;
  maxBodyBytes: number;
}

function bearer(req: Request): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

/** An HTTP-level refusal in the JSON-RPC error shape MCP clients read (as the SDK transport answers its own). */
function rpcError(res: Response, status: number, message: string, opts: { code?: number; data?: unknown; headers?: Record<string, string> } = {}): void {
  for (const [k, v] of Object.entries(opts.headers ?? {})) res.setHeader(k, v);
  const error: Record<string, unknown> = { code: opts.code ?? TRANSPORT_ERROR, message };
  if (opts.data !== undefined) error.data = opts.data;
  res.status(status).json({ jsonrpc: '2.0', error, id: null });
}

/**
 * The Streamable HTTP endpoint `/mcp/{id}`, stateless: every POST gets a
 * fresh SDK server and transport bound to the caller, so any node can answer
 * any request and a restart breaks no client. Responses are JSON (the
 * transport demands that clients accept it). GET (a standalone SSE stream)
 * and DELETE (ending a session) have nothing to serve without sessions: 405.
 *
 * Checks, in order: Host and Origin (DNS rebinding) → API key (401 with
 * `WWW-Authenticate`) → scope `mcp:access` (403) → server id (404) → method.
 * What the transport refuses itself (no Accept, wrong Content-Type, bad JSON,
 * body too large, unsupported protocol version) keeps the SDK's answers.
 */
export function mcpHttpHandler(opts: McpHttpOptions): RequestHandler {
  const router = Router();
  router.use(hostHeaderValidation([...opts.policy.hosts]));
  router.use((req, res, next) => {
    const origin = checkOrigin(opts.policy, req.headers.origin);
    if (!origin.ok) return rpcError(res, 403, origin.reason);
    next();
  });

  router.all('/:id', async (req: Request, res: Response) => {
    const requestId = (res.locals.requestId as string | undefined) ?? randomUUID();
    const log = opts.log.child({ requestId });
    let principal: Principal;
    try {
      principal = await opts.authenticate(bearer(req));
    } catch (err) {
      if (isAppError(err) && err.status === 401) {
        const presented = req.headers.authorization !== undefined;
        return rpcError(res, 401, 'Unauthorized: send an API key as `Authorization: Bearer <key>`', {
          data: { code: 'unauthorized' },
          headers: { 'WWW-Authenticate': `Bearer realm="switchboard"${presented ? ', error="invalid_token"' : ''}` },
        });
      }
      if (isAppError(err) && err.status === 503) {
        return rpcError(res, 503, err.message, { data: { code: err.code }, headers: { 'Retry-After': String(err.retryAfterSeconds ?? 1) } });
      }
      log.error('mcp authentication failed', { err });
      return rpcError(res, 500, 'Internal error', { code: ErrorCode.InternalError, data: { requestId } });
    }
    res.locals.organizationId = principal.organizationId;
    if (!principal.scopes.has('mcp:access')) {
      return rpcError(res, 403, 'Forbidden: this API key lacks the scope mcp:access', {
        data: { code: 'insufficient_scope', requiredScope: 'mcp:access' },
        headers: { 'WWW-Authenticate': 'Bearer realm="switchboard", error="insufficient_scope", scope="mcp:access"' },
      });
    }
    const id = String(req.params.id);
    const def = await opts.resolve(principal, id);
    if (!def) return rpcError(res, 404, `No MCP server ${id} for this organization; GET /v1/integrations lists them`, { data: { code: 'not_found' } });
    if (req.method !== 'POST') {
      return rpcError(res, 405, 'Method not allowed: this stateless endpoint takes POST only', { headers: { Allow: 'POST' } });
    }

    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: opts.maxBodyBytes });
    const server = createRequestServer(def, { principal, log, requestId });
    transport.onerror = (err) => log.debug('mcp transport refused a request', { err: err.message });
    res.on('close', () => {
      void server.close();
    });
    try {
      await server.connect(transport);
      answerInvalidParams(transport);
      await transport.handleRequest(req, res);
    } catch (err) {
      log.error('mcp request failed', { err });
      if (!res.headersSent) rpcError(res, 500, 'Internal error', { code: ErrorCode.InternalError, data: { requestId } });
      else res.destroy();
    }
  });

  router.all('/', (_req, res) => rpcError(res, 404, 'Use /mcp/{id}; GET /v1/integrations lists the servers', { data: { code: 'not_found' } }));
  return router;
}
