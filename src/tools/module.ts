import { join } from 'node:path';
import type { RequestHandler } from 'express';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Principal } from '../domain/types.js';
import type { ConnectedIntegrationId, ToolRecord } from '../domain/tools.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import { integrationTools, ToolRegistry, type IntegrationInfo, type McpServerDef } from '../mcp/index.js';
import { openKeyValueDb, type NodeBacking } from '../store/backing.js';
import type { SandboxProviderRecords } from '../store/sandbox-providers/port.js';
import { createSqliteSandboxProviderRecords } from '../store/sandbox-providers/sqlite.js';
import { createPostgresSandboxProviderRecords } from '../store/sandbox-providers/postgres.js';
import { openToolStore } from '../store/tools/open.js';
import type { ToolRepo } from '../store/tools/port.js';
import { calendarTools } from './calendar-tools.js';
import { emailTools } from './email-tools.js';
import { paymentTools } from './payment-tools.js';
import { SandboxOutbound, SandboxProviders, SANDBOX_PROVIDERS_PATH } from './sandbox/index.js';
import { OAUTH_CALLBACK_PATH, ToolService } from './service.js';

const DESCRIPTIONS: Record<ConnectedIntegrationId, { name: string; description: string; instructions: string }> = {
  email: {
    name: 'Email (Gmail)',
    description: 'A Gmail mailbox: read, search, send, reply, draft and label email. Connect signs the user in with Google (OAuth); the tool then acts as that mailbox.',
    instructions:
      'Email tools for one connected Gmail mailbox. Find mail with list_emails (a folder) or search_emails (Gmail search syntax), read it with get_email (its attachments with get_attachment), answer with reply_email (keeps the thread), ' +
      'write new mail with send_email, or create_draft to let the user review first. list_labels and modify_email organize mail (read/unread, star, archive, labels). ' +
      'Sending reaches real people: when unsure, draft instead.',
  },
  calendar: {
    name: 'Calendar (Google Calendar)',
    description: 'A Google Calendar account: calendars, availability (free/busy) and events. Connect signs the user in with Google (OAuth).',
    instructions:
      'Calendar tools for one connected Google Calendar account. list_calendars names the calendars ("primary" is the main one). Before proposing a time, check_availability; then create_event. ' +
      'list_events, get_event, update_event and delete_event manage events. Times are RFC 3339: give an offset (+01:00, Z) or a timeZone such as Europe/Berlin.',
  },
  payment: {
    name: 'Payments (Stripe)',
    description: 'A Stripe account: payment requests (hosted payment pages) for customers, their status, cancelling, and instructions to send. Connect takes the account\'s secret API key.',
    instructions:
      'Payment tools for one connected Stripe account. create_payment_request makes a payment page for an amount and returns its url and paymentId; get_payment_instructions gives text to send the customer; ' +
      'check_payment_status says open, paid or expired; cancel_payment stops an open request. Never tell a customer a payment arrived unless check_payment_status says paid.',
  },
};

export interface ToolsOpenDeps {
  config: Config;
  log: Logger;
  clock: Clock;
  version: string;
  /** The node's backing: its SQLite database embedded, its PostgreSQL pool and Redis client clustered. */
  backing: NodeBacking;
  /** An organization's API key (with the failed-attempt throttle), for the sandbox-only calls that need one. */
  authenticate(key: string | undefined, address?: string): Promise<Principal>;
}

/**
 * Connected tools, wired: the tool store, the sandbox providers (on by
 * default in embedded mode), the service, and the MCP servers of connected
 * tools (one tool registry per integration, built once). Tell it where this
 * node listens (`listening`) so the adapters reach the sandbox over HTTP.
 */
export class ConnectedTools {
  readonly service: ToolService;
  private readonly registries: Record<ConnectedIntegrationId, ToolRegistry>;
  /** This node's own base URL, once it listens. */
  selfUrl: string | null = null;
  private defaultPublicUrl: string | null = null;
  private outbound: SandboxOutbound | null = null;

  private constructor(
    readonly repo: ToolRepo,
    readonly sandbox: SandboxProviders | null,
    private readonly sandboxRecords: SandboxProviderRecords | null,
    private readonly deps: ToolsOpenDeps,
  ) {
    const { config, log } = deps;
    this.service = new ToolService({
      repo,
      log: log.child({ component: 'tools' }),
      clock: deps.clock,
      config,
      sandbox,
      sandboxUrl: () => config.SANDBOX_TOOLS_URL ?? `${this.self()}${SANDBOX_PROVIDERS_PATH}`,
    });
    this.registries = { email: new ToolRegistry(emailTools()), calendar: new ToolRegistry(calendarTools()), payment: new ToolRegistry(paymentTools()) };
  }

  /** Null when connected tools cannot run (clustered mode without SECRETS_KEY: credentials could not be sealed). */
  static async open(deps: ToolsOpenDeps): Promise<ConnectedTools | null> {
    const repo = await openToolStore(deps.config, deps.backing);
    if (repo === null) {
      deps.log.warn('SECRETS_KEY is not set: connected tools (email, calendar, payment) are off until every node has the same key');
      return null;
    }
    const { config, backing } = deps;
    const sandboxOn = config.SANDBOX_TOOLS ?? config.mode === 'embedded';
    const memory = config.DATA_DIR === ':memory:';
    // Clustered, every node serves the same sandbox accounts: their records are in PostgreSQL.
    const records = !sandboxOn
      ? null
      : backing.kind === 'clustered'
        ? createPostgresSandboxProviderRecords(backing.pg)
        : createSqliteSandboxProviderRecords(openKeyValueDb(memory ? null : join(config.DATA_DIR, 'sandbox-providers.db'), memory ? null : join(config.DATA_DIR, 'sandbox-providers')));
    // The sandbox's pages link to this node's own URL, known once it listens.
    const opened: { tools?: ConnectedTools } = {};
    const publicUrl = () => opened.tools!.publicUrl();
    let sandbox: SandboxProviders | null = null;
    let outbound: SandboxOutbound | null = null;
    try {
      if (records !== null) {
        // The sandbox's own outbound calls (webhook deliveries) pass the same address guard as customer webhooks.
        outbound = new SandboxOutbound({
          policy: { allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK },
          ownBaseUrls: () => [publicUrl(), ...(opened.tools?.selfUrl == null ? [] : [opened.tools.selfUrl])],
          callbackPrefix: '/v1/tools/',
          timeoutMs: 10_000,
          userAgent: 'Stripe/1.0 (+https://stripe.com/docs/webhooks) sandbox',
        });
        sandbox = await SandboxProviders.open({
          records,
          log: deps.log.child({ component: 'sandbox-providers' }),
          publicUrl,
          redirectUris: () => [`${publicUrl()}${OAUTH_CALLBACK_PATH}`],
          serviceOrigins: () => [publicUrl(), ...(opened.tools?.selfUrl == null ? [] : [opened.tools.selfUrl])],
          authenticate: deps.authenticate,
          outbound,
          tokenTtlSeconds: config.SANDBOX_TOOLS_TOKEN_TTL_S,
        });
      }
    } catch (e) {
      await records?.close();
      throw e;
    }
    opened.tools = new ConnectedTools(repo, sandbox, records, deps);
    opened.tools.outbound = outbound;
    return opened.tools;
  }

  private self(): string {
    if (this.selfUrl === null) throw new AppError(503, 'not_ready', 'the service is still starting', undefined, { retryAfterSeconds: 1 });
    return this.selfUrl;
  }

  /**
   * The base URL this node answers on (the adapters reach the sandbox
   * providers there), and the public URL to use when PUBLIC_URL is unset
   * (`http://localhost:<port>`).
   */
  listening(url: string, defaultPublicUrl: string): void {
    this.selfUrl = url.replace(/\/+$/, '');
    this.defaultPublicUrl = defaultPublicUrl.replace(/\/+$/, '');
  }

  /**
   * Where people and providers reach this service: PUBLIC_URL, else
   * `http://localhost:<port>`. The OAuth redirect URI and the payment
   * webhook address are built from it, never from a request's headers.
   */
  publicUrl(): string {
    if (this.deps.config.PUBLIC_URL !== undefined) return this.deps.config.PUBLIC_URL.replace(/\/+$/, '');
    if (this.defaultPublicUrl === null) throw new AppError(503, 'not_ready', 'the service is still starting', undefined, { retryAfterSeconds: 1 });
    return this.defaultPublicUrl;
  }

  mounts(): { path: string; handler: RequestHandler }[] {
    return this.sandbox ? [{ path: SANDBOX_PROVIDERS_PATH, handler: this.sandbox.router() }] : [];
  }

  /** TOOLS_ALLOWED_RETURN_ORIGINS. */
  get configuredReturnOrigins(): readonly string[] {
    return this.deps.config.TOOLS_ALLOWED_RETURN_ORIGINS;
  }

  registry(integration: ConnectedIntegrationId): ToolRegistry {
    return this.registries[integration];
  }

  /** The MCP server at `/mcp/{tool_id}` for this caller (see `ToolService.session`). */
  async resolve(principal: Principal, id: string): Promise<McpServerDef | undefined> {
    const session = await this.service.session(principal, id);
    if (session === undefined) return undefined;
    const t = session.tool;
    const d = DESCRIPTIONS[t.integration];
    return {
      id: t.id,
      name: `switchboard-${t.integration}`,
      title: `${t.name} (${d.name}${t.provider === 'sandbox' ? ', sandbox' : ''})`,
      version: this.deps.version,
      instructions: `${d.instructions}${t.account ? `\nConnected account: ${t.account}.` : ''}${t.provider === 'sandbox' ? '\nThis tool is connected to a sandbox provider: nothing reaches real people or moves real money.' : ''}`,
      registry: this.registries[t.integration],
      target: session,
    };
  }

  integrations(mcpBase: string): IntegrationInfo[] {
    return (['email', 'calendar', 'payment'] as const).map((id) => ({
      id,
      name: DESCRIPTIONS[id].name,
      description: DESCRIPTIONS[id].description,
      connect: id === 'payment' ? ('api_key' as const) : ('oauth' as const),
      mcp_url: `${mcpBase}/mcp/{tool_id}`,
      tools: integrationTools(this.registries[id]),
    }));
  }

  async close(): Promise<void> {
    this.outbound?.close();
    await this.repo.close();
    await this.sandboxRecords?.close();
  }
}

/** A tool as the API shows it: never its credentials. */
export function toolView(t: ToolRecord, mcpBase: string) {
  return {
    id: t.id,
    name: t.name,
    integration: t.integration,
    status: t.status,
    status_reason: t.statusReason,
    provider: t.provider,
    sandbox: t.provider === 'sandbox',
    account: t.account,
    mcp_url: `${mcpBase}/mcp/${t.id}`,
    return_url: t.returnUrl,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    last_used_at: t.lastUsedAt,
  };
}
