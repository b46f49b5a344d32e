import { randomUUID } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { requestBodyTooLargeMessage } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../domain/types.js';
import { isAppError } from '../errors.js';
import type { Logger } from '../log.js';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../json-depth.js';
import { unstorableTextInJson, unstorableTextMessage } from '../storable-text.js';
import { checkOrigin, type RebindingPolicy } from './rebinding.js';
import { answerInvalidParams, createRequestServer, type McpServerDef } from './request-server.js';

/** JSON-RPC code for errors the HTTP layer answers before any message is read (the SDK transport uses the same). */
const TRANSPORT_ERROR = -32000;

export interface McpHttpOptions {
  log: Logger;
  /** Resolves a bearer API key to its principal; throws a 401 AppError (429 while throttled). `address` is the client's. */
  authenticate(key: string | undefined, address?: string): Promise<Principal>;
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

/** The raw body, up to `max` bytes (a declared or observed larger body is not read further). */
function readBody(req: Request, max: number): Promise<{ tooLarge: true } | { tooLarge: false; text: string }> {
  if (Number(req.headers['content-length']) > max) return Promise.resolve({ tooLarge: true });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.off('data', onData);
        req.resume();
        resolve({ tooLarge: true });
      } else chunks.push(c);
    };
    req.on('data', onData);
    req.once('end', () => resolve({ tooLarge: false, text: Buffer.concat(chunks).toString('utf8') }));
    req.once('error', reject);
  });
}

/**
 * The body of a POST the transport will go on to parse, read here on the
 * Node stream and handed over as `parsedBody`: the transport would otherwise
 * read it through a web-standard Request built over the Node stream, a good
 * part of each call's cost. Only when the transport's own header checks
 * (Accept, Content-Type) will pass, so its answers keep their order; the
 * size limit, the 413 and the -32700 are the transport's own.
 */
async function preParse(req: Request, res: Response, max: number): Promise<{ ok: true; body: unknown } | { ok: false }> {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream') || !isJsonContentType(req.headers['content-type'])) return { ok: true, body: undefined };
  const raw = await readBody(req, max);
  if (raw.tooLarge) {
    rpcError(res, 413, requestBodyTooLargeMessage(max));
    return { ok: false };
  }
  const bytes = Buffer.from(raw.text);
  if (jsonTooDeep(bytes)) {
    rpcError(res, 400, `Parse error: JSON nested deeper than ${MAX_JSON_DEPTH} levels`, { code: ErrorCode.ParseError });
    return { ok: false };
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.text) as unknown;
  } catch {
    rpcError(res, 400, 'Parse error: Invalid JSON', { code: ErrorCode.ParseError });
    return { ok: false };
  }
  const found = unstorableTextInJson(bytes, { value: body });
  if (found !== null) {
    rpcError(res, 400, `Invalid params: ${unstorableTextMessage(found, 'body')}`, { code: ErrorCode.InvalidParams });
    return { ok: false };
  }
  // JSON-RPC 2.0: an empty batch is one Invalid Request (the transport would take it for a batch of notifications and answer 202).
  if (Array.isArray(body) && body.length === 0) {
    rpcError(res, 400, 'Invalid Request: an empty batch', { code: ErrorCode.InvalidRequest });
    return { ok: false };
  }
  return { ok: true, body };
}

/**
 * The Streamable HTTP endpoint `/mcp/{id}`, stateless: every POST gets a
 * fresh SDK server and transport bound to the caller, so any node can answer
 * any request and a restart breaks no client. Responses are JSON (the
 * transport demands that clients accept it). GET (a standalone SSE stream)
 * and DELETE (ending a session) have nothing to serve without sessions: 405.
 *
 * Checks, in order: Host and Origin (DNS rebinding) → API key (401 with
 * `WWW-Authenticate`; 429 with `Retry-After` while the key is throttled
 * after failed attempts, as REST) → scope `mcp:access` (403) → server id
 * (404) → method. An empty JSON-RPC batch is answered Invalid Request.
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
      principal = await opts.authenticate(bearer(req), req.ip);
    } catch (err) {
      if (isAppError(err) && err.status === 401) {
        const presented = req.headers.authorization !== undefined;
        return rpcError(res, 401, 'Unauthorized: send an API key as `Authorization: Bearer <key>`', {
          data: { code: 'unauthorized' },
          headers: { 'WWW-Authenticate': `Bearer realm="switchboard"${presented ? ', error="invalid_token"' : ''}` },
        });
      }
      // Throttled (too many failed attempts with this key's prefix) or briefly unavailable: as REST answers them.
      if (isAppError(err) && (err.status === 429 || err.status === 503)) {
        return rpcError(res, err.status, err.message, { data: { code: err.code }, headers: { 'Retry-After': String(err.retryAfterSeconds ?? 1) } });
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
    let def: McpServerDef | undefined;
    try {
      def = await opts.resolve(principal, id);
    } catch (err) {
      // A refusal the caller can act on (a connected tool that is not active yet, or any more).
      if (isAppError(err) && err.status < 500) return rpcError(res, err.status, err.message, { data: { code: err.code } });
      log.error('mcp server lookup failed', { err, id });
      const status = isAppError(err) && err.status === 503 ? 503 : 500;
      return rpcError(res, status, status === 503 ? 'Service unavailable; retry shortly' : 'Internal error', { code: ErrorCode.InternalError, data: { requestId } });
    }
    if (!def) return rpcError(res, 404, `No MCP server ${id} for this organization; GET /v1/integrations lists them`, { data: { code: 'not_found' } });
    if (req.method !== 'POST') {
      return rpcError(res, 405, 'Method not allowed: this stateless endpoint takes POST only', { headers: { Allow: 'POST' } });
    }

    let pre: Awaited<ReturnType<typeof preParse>>;
    try {
      pre = await preParse(req, res, opts.maxBodyBytes);
    } catch {
      // The client went away while sending the body: nobody to answer.
      res.destroy();
      return;
    }
    if (!pre.ok) return;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: opts.maxBodyBytes });
    const server = createRequestServer(def, { principal, log, requestId });
    transport.onerror = (err) => log.debug('mcp transport refused a request', { err: err.message });
    res.on('close', () => {
      void server.close();
    });
    try {
      await server.connect(transport);
      answerInvalidParams(transport);
      await transport.handleRequest(req, res, pre.body);
    } catch (err) {
      log.error('mcp request failed', { err });
      if (!res.headersSent) rpcError(res, 500, 'Internal error', { code: ErrorCode.InternalError, data: { requestId } });
      else res.destroy();
    }
  });

  router.all('/', (_req, res) => rpcError(res, 404, 'Use /mcp/{id}; GET /v1/integrations lists the servers', { data: { code: 'not_found' } }));
  return router;
}
