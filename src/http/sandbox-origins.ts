import { createServer, type Server } from 'node:http';
import { DEFAULT_GRAPH_API_VERSION } from '../network/graph-versions.js';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { sandboxPort, type Config, type SandboxOrigin } from '../config.js';
import type { Principal } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { Messaging } from '../messaging/index.js';
import { sandboxGraphRouter } from '../network/sandbox/index.js';
import { CALENDAR_SCOPE, GMAIL_SCOPE, SANDBOX_CLIENT_ID, SANDBOX_PROVIDERS_PATH, type ConnectedTools } from '../tools/index.js';


export type SandboxBaseUrls = Record<SandboxOrigin, string | null>;

/** What a developer needs to point their own code at the sandboxes (`GET /sandbox` with an API key). */
export interface SandboxCredentials {
  googleOAuth?: { clientId: string; clientSecret: string; redirectUris: string[]; loopbackRedirectUris: string; scopes: string[] };
  stripe?: { keyPrefix: string; createAccount: { method: 'POST'; url: string; authorization: string; body: string } };
  graph?: { apiVersion: string; channels: { channelId: string; name: string; phoneNumberId: string; businessAccountId: string; accessToken: string }[] };
}

/**
 * The sandboxes of one node, each at the root of an origin of its own (its
 * own port), so an official client reaches it with nothing but its
 * documented base-URL option: the Graph API (the sandbox chat network), the
 * Google APIs, Google's OAuth endpoints, Stripe. The service's own adapters
 * keep reaching the same handlers under `/sandbox/…` of the main port.
 *
 * Clustered, every node with the sandboxes on serves all four on its own
 * ports; their records are shared (PostgreSQL), what lives in a node's memory
 * (the Google access tokens its identity provider issued, injected faults)
 * is that node's: a client keeps to one node.
 */
export class SandboxOrigins {
  private readonly servers: Server[] = [];
  private readonly bases: SandboxBaseUrls = { graph: null, google: null, googleOAuth: null, stripe: null };

  constructor(
    private readonly config: Config,
    private readonly messaging: Messaging,
    private readonly tools: ConnectedTools | null,
    private readonly log: Logger,
  ) {}

  /** True when any sandbox is on (then `GET /sandbox` answers). */
  get on(): boolean {
    return this.messaging.sandbox !== null || (this.tools?.sandbox ?? null) !== null;
  }

  urls(): SandboxBaseUrls {
    return { ...this.bases };
  }

  /** Starts a listener per sandbox that is on; a port that is taken fails the start (the error carries `variable`, the setting to change). */
  async listen(): Promise<SandboxBaseUrls> {
    const handlers: [SandboxOrigin, string, RequestHandler][] = [];
    if (this.messaging.sandbox) handlers.push(['graph', 'SANDBOX_GRAPH_PORT', sandboxGraphRouter(this.messaging.sandbox)]);
    const providers = this.tools?.sandbox ?? null;
    if (providers) {
      handlers.push(['google', 'SANDBOX_GOOGLE_PORT', providers.googleApisRouter()]);
      handlers.push(['googleOAuth', 'SANDBOX_GOOGLE_OAUTH_PORT', providers.googleOAuthRouter(() => this.bases.googleOAuth ?? '')]);
      handlers.push(['stripe', 'SANDBOX_STRIPE_PORT', providers.stripeRouter()]);
    }
    for (const [name, variable, handler] of handlers) {
      const app = express();
      app.disable('x-powered-by');
      app.set('query parser', 'extended');
      app.use(handler);
      const server = createServer(app);
      server.keepAliveTimeout = 65_000;
      await new Promise<void>((resolve, reject) => {
        // The start fails as for PORT, naming the variable to change (src/main.ts prints it).
        server.once('error', (err: NodeJS.ErrnoException) => reject(Object.assign(err, { variable })));
        server.listen(sandboxPort(this.config, name), this.config.HOST, () => resolve());
      });
      this.servers.push(server);
      this.bases[name] = `http://localhost:${(server.address() as AddressInfo).port}`;
    }
    if (handlers.length > 0) this.log.info('sandboxes listening', { ...this.bases });
    return this.urls();
  }

  /** The lines the start banner prints (shell exports the docs' examples use). */
  bannerLines(): string[] {
    const b = this.bases;
    const vars = [b.graph && `SB_GRAPH_URL=${b.graph}`, b.google && `SB_GOOGLE_URL=${b.google}`, b.googleOAuth && `SB_GOOGLE_OAUTH_URL=${b.googleOAuth}`, b.stripe && `SB_STRIPE_URL=${b.stripe}`].filter((x): x is string => typeof x === 'string');
    if (vars.length === 0) return [];
    return ['  sandboxes (base URLs for the official clients; GET /sandbox lists them):', `  export ${vars.join(' ')}`];
  }

  /** The organization's credentials for the sandboxes that are on. */
  async credentials(principal: Principal): Promise<SandboxCredentials> {
    const out: SandboxCredentials = {};
    const providers = this.tools?.sandbox ?? null;
    if (providers && this.tools) {
      out.googleOAuth = {
        clientId: SANDBOX_CLIENT_ID,
        clientSecret: providers.identity.clientSecret,
        redirectUris: providers.registeredRedirectUris(),
        loopbackRedirectUris: 'any http://127.0.0.1:<port>/… or http://localhost:<port>/… (as Google allows for desktop clients)',
        scopes: [GMAIL_SCOPE, CALENDAR_SCOPE],
      };
      out.stripe = {
        keyPrefix: 'sk_test_sbx_',
        createAccount: { method: 'POST', url: `${this.tools.publicUrl()}${SANDBOX_PROVIDERS_PATH}/stripe/accounts`, authorization: 'Bearer <an API key of your organization>', body: '{"name":"My Shop"} (optional): the answer carries api_key' },
      };
    }
    if (this.messaging.sandbox) {
      const channels: NonNullable<SandboxCredentials['graph']>['channels'] = [];
      for (const v of await this.messaging.channels.list(principal.organizationId)) {
        if (v.kind !== 'whatsapp_cloud' || v.network !== 'sandbox') continue;
        const c = await this.messaging.channels.get(principal.organizationId, v.id);
        if (c.kind !== 'whatsapp_cloud') continue;
        channels.push({ channelId: c.id, name: c.name, phoneNumberId: c.phoneNumberId, businessAccountId: c.businessAccountId, accessToken: c.credentials.accessToken });
      }
      out.graph = { apiVersion: DEFAULT_GRAPH_API_VERSION, channels };
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
    this.servers.length = 0;
  }
}
