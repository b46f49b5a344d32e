import type { RequestHandler } from 'express';
import type { Principal } from '../domain/types.js';
import type { Logger } from '../log.js';
import { mcpHttpHandler } from './http.js';
import { platformServer, type PlatformDeps } from './platform.js';
import { rebindingPolicy, type RebindingPolicy } from './rebinding.js';
import type { McpServerDef } from './request-server.js';
import type { ToolAnnotations } from './tool.js';
import type { ToolRegistry } from './registry.js';

export interface McpGatewayOptions {
  version: string;
  log: Logger;
  /** `address` is the client's, for the failed-attempt throttle. */
  authenticate(key: string | undefined, address?: string): Promise<Principal>;
  platform: PlatformDeps;
  allowedHosts?: string[] | undefined;
  allowedOrigins?: string[] | undefined;
  /** The URLs clients reach the service under (PUBLIC_URL, MCP_PUBLIC_URL): their hosts are allowed by default. */
  publicUrls: (string | undefined)[];
  maxBodyBytes: number;
  /** Connected tools (`/mcp/{tool_id}`), when the service has them. */
  connected?: ConnectedServers | undefined;
}

/** Servers of connected tools, looked up per request within the caller's organization. */
export interface ConnectedServers {
  /** Undefined for unknown ids and other organizations' tools; throws a 4xx AppError for a tool that is not usable now. */
  resolve(principal: Principal, id: string): Promise<McpServerDef | undefined>;
  integrations(mcpBaseUrl: string): IntegrationInfo[];
}

/** An integration as `GET /v1/integrations` lists it. */
export interface IntegrationInfo {
  id: string;
  name: string;
  description: string;
  /** `none`: usable at once with the caller's own API key (the platform); `oauth`: connect, then the user signs in at `redirect_url`; `api_key`: connect with the provider's key in `data`. */
  connect: 'none' | 'oauth' | 'api_key';
  mcp_url: string;
  tools: { name: string; title: string; description: string; scopes: string[]; annotations: ToolAnnotations; inputSchema: Record<string, unknown> }[];
}

/**
 * The MCP tool gateway of one node: every server it serves, their tool
 * registries (built here, once), and the HTTP handler to mount at `/mcp`.
 * Holds no per-caller state.
 */
export class McpGateway {
  readonly platform: McpServerDef;
  /** What the platform tools were built from (to build a variant, e.g. with a conformance fixture). */
  readonly options: McpGatewayOptions;
  readonly policy: RebindingPolicy;
  readonly handler: RequestHandler;
  /** The port of the MCP_PORT listener once it listens (for `mcp_url`). */
  listenPort: number | undefined;

  constructor(opts: McpGatewayOptions) {
    this.options = opts;
    this.platform = platformServer(opts.platform, opts.version);
    this.policy = rebindingPolicy({ allowedHosts: opts.allowedHosts, allowedOrigins: opts.allowedOrigins, publicUrls: opts.publicUrls });
    this.handler = mcpHttpHandler({
      log: opts.log,
      authenticate: opts.authenticate,
      resolve: (principal, id) => this.resolve(principal, id),
      policy: this.policy,
      maxBodyBytes: opts.maxBodyBytes,
    });
  }

  /**
   * The server at `/mcp/{id}` for this caller. The platform server is every
   * organization's; connected tools are looked up by id within the caller's
   * organization only, so another organization's tool id answers exactly
   * like an unknown one.
   */
  resolve(principal: Principal, id: string): McpServerDef | undefined | Promise<McpServerDef | undefined> {
    if (id === this.platform.id) return this.platform;
    return this.options.connected?.resolve(principal, id);
  }

  integrations(mcpBaseUrl: string): IntegrationInfo[] {
    const base = mcpBaseUrl.replace(/\/+$/, '');
    const p = this.platform;
    return [
      {
        id: p.id,
        name: p.title,
        description: 'The platform itself: tickets, handover, conversation history and chat messages, acting with the caller\'s API key and its scopes. Needs no connect step.',
        connect: 'none',
        mcp_url: `${base}/mcp/${p.id}`,
        tools: integrationTools(p.registry),
      },
      ...(this.options.connected?.integrations(base) ?? []),
    ];
  }
}

/** A registry's tools as `GET /v1/integrations` lists them, with their input schemas. */
export function integrationTools(registry: ToolRegistry): IntegrationInfo['tools'] {
  return registry.tools.map((t, i) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    scopes: [...t.scopes],
    annotations: { ...t.annotations },
    inputSchema: registry.listResult.tools[i]!.inputSchema as Record<string, unknown>,
  }));
}

/**
 * `{mcp_url}`, where clients reach the gateway: MCP_PUBLIC_URL when set;
 * on the REST listener, PUBLIC_URL or the address the caller used; on its
 * own listener (MCP_PORT), the caller's host with that port.
 */
export function mcpBaseUrl(
  config: { MCP_PUBLIC_URL?: string | undefined; PUBLIC_URL?: string | undefined; MCP_PORT?: number | undefined },
  req: { protocol: string; hostname: string; host: string },
  listenPort: number | undefined,
): string {
  if (config.MCP_PUBLIC_URL) return config.MCP_PUBLIC_URL.replace(/\/+$/, '');
  if (config.MCP_PORT === undefined) return (config.PUBLIC_URL ?? `${req.protocol}://${req.host}`).replace(/\/+$/, '');
  return `${req.protocol}://${req.hostname}:${listenPort ?? config.MCP_PORT}`;
}
