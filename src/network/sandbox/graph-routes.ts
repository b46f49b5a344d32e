import { randomBytes } from 'node:crypto';
import { jsonTooDeep } from '../../json-depth.js';
import { unstorableTextInJson, unstorableTextMessage } from '../../storable-text.js';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { graphError } from '../graph-api.js';
import type { GraphReply, SandboxNetwork } from './sandbox-network.js';

function bearer(req: Request): string | undefined {
  const h = req.headers.authorization;
  const m = h === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(h);
  if (m) return m[1];
  // The Graph API also takes the token as a query parameter.
  return typeof req.query.access_token === 'string' ? req.query.access_token : undefined;
}

const VERSION = /^v\d+\.\d+$/;

/**
 * The sandbox network's Graph API over HTTP, mounted at `/sandbox/graph` of
 * the service and at the root of its own origin (SANDBOX_GRAPH_PORT): the
 * real adapter reaches it exactly as it reaches graph.facebook.com, with
 * `SANDBOX_GRAPH_URL` (default `<this service>/sandbox/graph`) as its host,
 * the version after it. It serves every version Meta's calendar still has
 * alive; an expired one is answered by the oldest alive version, as Meta
 * does; one Meta never released is an unknown path.
 */
export function sandboxGraphRouter(sandbox: SandboxNetwork): Router {
  const r = Router();
  r.use(
    express.json({
      limit: '1mb',
      type: ['application/json', 'application/*+json'],
      verify: (_req, _res, buf) => {
        if (jsonTooDeep(buf)) throw Object.assign(new Error('too deep'), { type: 'entity.too.deep' });
        const found = unstorableTextInJson(buf);
        if (found !== null) throw Object.assign(new Error(unstorableTextMessage(found, 'body')), { type: 'entity.unstorable.text' });
      },
    }),
  );
  // The request headers Graph answers carry (a trace id to quote to Meta's support, the version served).
  r.use((req, res, next) => {
    res.setHeader('x-fb-trace-id', randomBytes(8).toString('base64url'));
    res.setHeader('x-fb-request-id', randomBytes(16).toString('base64url'));
    // An expired version is served by the oldest one still alive, as Meta does, and the header says which answered.
    const version = /^\/(v\d+\.\d+)\//.exec(req.path)?.[1];
    const served = version === undefined ? null : sandbox.servedGraphVersion(version);
    if (served !== null) res.setHeader('facebook-api-version', served);
    next();
  });
  const reply = (fn: (req: Request) => Promise<GraphReply>) => async (req: Request, res: Response) => {
    if (!VERSION.test(String(req.params.version)) || sandbox.servedGraphVersion(String(req.params.version)) === null) {
      const e = graphError(100, `Unknown path components: /${req.params.version}`);
      res.status(e.status).json(e.body);
      return;
    }
    let out: GraphReply;
    try {
      out = await fn(req);
    } catch {
      const e = graphError(131000, 'the sandbox network failed to process the request');
      out = { status: 500, body: e.body };
    }
    res.setHeader('x-sandbox-network', 'true');
    res.status(out.status).json(out.body);
  };
  // Media downloads: the URL `GET /{media-id}` gives, like the network's lookaside host it needs the bearer token.
  r.get('/files/:mediaId', async (req, res) => {
    res.setHeader('x-sandbox-network', 'true');
    try {
      const out = await sandbox.mediaFile(String(req.params.mediaId), bearer(req));
      if ('bytes' in out) {
        res.status(200).setHeader('content-type', out.mimeType).setHeader('x-content-type-options', 'nosniff').end(out.bytes);
        return;
      }
      res.status(out.status).json(out.body);
    } catch {
      const e = graphError(131000, 'the sandbox network failed to process the request');
      res.status(500).json(e.body);
    }
  });
  r.get('/:version/:mediaId', reply((req) => sandbox.mediaInfo(String(req.params.mediaId), bearer(req), `${req.protocol}://${req.get('host') ?? 'localhost'}${req.baseUrl}/files`)));
  r.post('/:version/:phoneNumberId/messages', reply((req) => sandbox.send(String(req.params.phoneNumberId), bearer(req), req.body)));
  r.get('/:version/:wabaId/phone_numbers', reply((req) => sandbox.listPhoneNumbers(String(req.params.wabaId), bearer(req))));
  r.get('/:version/:wabaId/message_templates', reply((req) => sandbox.listTemplates(String(req.params.wabaId), bearer(req), req.query as Record<string, unknown>)));
  r.post('/:version/:wabaId/message_templates', reply((req) => sandbox.createTemplate(String(req.params.wabaId), bearer(req), req.body)));
  r.delete('/:version/:wabaId/message_templates', reply((req) => sandbox.deleteTemplate(String(req.params.wabaId), bearer(req), req.query as Record<string, unknown>)));
  r.use((req, res) => {
    const e = graphError(100, `Unsupported ${req.method.toLowerCase()} request to the sandbox network: ${req.path}`);
    res.status(e.status).json(e.body);
  });
  // Unreadable bodies get the network's answer, not the service's error shape.
  r.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const type = (err as { type?: string })?.type;
    const e = graphError(100, type === 'entity.too.large' ? 'the request body is too large' : type === 'entity.unstorable.text' ? (err as Error).message : 'the request body is not valid JSON');
    res.status(e.status).json(e.body);
  });
  return r;
}
