import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Principal } from '../domain/types.js';
import { createHttpApp } from '../http/app.js';
import type { Logger } from '../log.js';
import type { McpGateway } from './gateway.js';
import type { RouteDef } from '../http/route.js';

export interface McpListener {
  port: number;
  /** Stops taking connections, lets in-flight requests finish (up to `timeoutMs`), then resolves. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * MCP_PORT set: the gateway on a listener of its own, with the same request
 * logging, request ids and 404 as the REST app, and only the REST routes
 * given (the tool gateway's, which the spec places at `{mcp_url}`).
 */
export async function startMcpListener(
  gateway: McpGateway,
  opts: {
    port: number;
    host: string;
    log: Logger;
    authenticate(key: string | undefined): Promise<Principal>;
    /** REST routes served at `{mcp_url}` too (the tool gateway's: integrations, connect, tools). */
    routes?: RouteDef[];
  },
): Promise<McpListener> {
  const app = createHttpApp({
    routes: opts.routes ?? [],
    log: opts.log,
    bodyLimit: opts.routes ? '64kb' : '1kb',
    authenticate: opts.authenticate,
    authenticateOperator: () => Promise.reject(new Error('no operator routes on the MCP listener')),
    mounts: [{ path: '/mcp', handler: gateway.handler }],
  });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  gateway.listenPort = port;
  opts.log.info('mcp listening', { port });
  return {
    port,
    close: async (timeoutMs) => {
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
      await drained;
      clearTimeout(timer);
    },
  };
}
