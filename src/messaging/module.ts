import type { RequestHandler } from 'express';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ContactRepo, OrganizationRepo, TicketRepo } from '../store/core/port.js';
import type { WhatsAppChannel } from '../store/channels/port.js';
import { openMessagingStores, type MessagingStores } from '../store/messaging-open.js';
import type { SqliteDb } from '../store/sqlite/db.js';
import { openSandboxDb, type NodeBacking } from '../store/backing.js';
import { createMemoryRateLimiter } from '../store/ratelimit/memory.js';
import { createRedisRateLimiter } from '../store/ratelimit/redis.js';
import { createMemorySendPacer } from '../store/send-pacing/memory.js';
import { createRedisSendPacer } from '../store/send-pacing/redis.js';
import { GraphApiNetwork } from '../network/graph-adapter.js';
import { DEFAULT_GRAPH_API_VERSION, splitGraphBase } from '../network/graph-versions.js';
import type { ChatNetwork } from '../network/port.js';
import { createSqliteSandboxState, createPostgresSandboxState, sandboxGraphRouter, SandboxNetwork } from '../network/sandbox/index.js';
import type { MessagingHandlerDeps } from '../actors/conversation/messaging.js';
import { ChannelService } from './channels.js';
import { MessagingService, type ConversationGateway, type TemplateSendObserver } from './service.js';
import { NetworkWebhookReceiver } from './webhook-receiver.js';
import { SandboxCustomer } from './sandbox-customer.js';

export interface MessagingOpenDeps {
  config: Config;
  clock: Clock;
  log: Logger;
  organizations: OrganizationRepo;
  contacts: ContactRepo;
  /** The contacts' tickets: an open ticket's priority picks a conversation's response targets. */
  tickets: Pick<TicketRepo, 'list'>;
  /** The node's backing: its SQLite database embedded, its PostgreSQL pool and Redis client clustered. */
  backing: NodeBacking;
  /** Told how each template send ended (for metrics). */
  observer?: TemplateSendObserver;
}

/** Where this service serves the sandbox network's Graph API (the version follows, as on graph.facebook.com). */
export const SANDBOX_GRAPH_PATH = '/sandbox/graph';

/** The version of channels that name none: GRAPH_API_VERSION, else the one GRAPH_API_BASE_URL ends in, else the current one. */
export function defaultGraphApiVersion(config: Pick<Config, 'GRAPH_API_VERSION' | 'GRAPH_API_BASE_URL'>): string {
  return config.GRAPH_API_VERSION ?? splitGraphBase(config.GRAPH_API_BASE_URL).version ?? DEFAULT_GRAPH_API_VERSION;
}

/**
 * Chat messaging, wired: stores, the real and sandbox networks, the services
 * behind the REST routes, and the dependencies the conversation actor's
 * messaging handlers need. Open it before the actors (they need
 * `actorDeps`), then `attach` the actor gateway, and tell it the URL it
 * listens on (`listening`) so the sandbox network and the adapter can reach
 * each other over HTTP.
 */
export class Messaging {
  readonly service: MessagingService;
  readonly channels: ChannelService;
  readonly receiver: NetworkWebhookReceiver;
  readonly sandbox: SandboxNetwork | null;
  /** Playing the customer on sandbox channels; null when the sandbox network is off. */
  readonly customer: SandboxCustomer | null;
  readonly actorDeps: MessagingHandlerDeps;
  private gateway: ConversationGateway | null = null;
  private selfUrl: string | null = null;
  private readonly pruning: NodeJS.Timeout[] = [];
  private readonly adapters: GraphApiNetwork[];

  private constructor(
    readonly stores: MessagingStores,
    /** The sandbox network's own SQLite database (embedded mode with the sandbox on): Meta's side, kept apart from the service's data. */
    private readonly sandboxDb: SqliteDb | null,
    readonly config: Config,
    private readonly log: Logger,
    clock: Clock,
    deps: MessagingOpenDeps,
  ) {
    const self = () => {
      if (this.selfUrl === null) throw new AppError(503, 'not_ready', 'the service is still starting', undefined, { retryAfterSeconds: 1 });
      return this.selfUrl;
    };
    const version = defaultGraphApiVersion(config);
    const graph = new GraphApiNetwork({ baseUrl: config.GRAPH_API_BASE_URL, version, timeoutMs: config.GRAPH_API_TIMEOUT_MS });
    const sandboxGraph = new GraphApiNetwork({ baseUrl: () => config.SANDBOX_GRAPH_URL ?? `${self()}${SANDBOX_GRAPH_PATH}`, version, timeoutMs: config.GRAPH_API_TIMEOUT_MS });
    this.adapters = [graph, sandboxGraph];
    const sandboxOn = config.SANDBOX_NETWORK ?? config.mode === 'embedded';
    const networkFor = (c: WhatsAppChannel): ChatNetwork => {
      if (c.network === 'graph') return graph;
      if (!sandboxOn && config.SANDBOX_GRAPH_URL === undefined) {
        throw new AppError(409, 'sandbox_disabled', 'this channel is on the sandbox network, which is off on this deployment');
      }
      return sandboxGraph;
    };
    this.sandbox = sandboxOn
      ? new SandboxNetwork({
          state:
            sandboxDb !== null
              ? createSqliteSandboxState(sandboxDb)
              : 'pg' in stores.backing
                ? createPostgresSandboxState(stores.backing.pg)
                : createSqliteSandboxState(stores.backing.db),
          // Throughput is a real-time limit, whatever clock the service runs on.
          limiter: 'db' in stores.backing ? createMemoryRateLimiter(systemClock) : createRedisRateLimiter(stores.backing.redis, stores.backing.prefix),
          clock,
          log: log.child({ component: 'sandbox-network' }),
          statusDelayMs: config.SANDBOX_STATUS_DELAY_MS,
          maxMessagesPerSecond: config.SANDBOX_MAX_MPS,
          webhookBaseUrl: () => config.SANDBOX_WEBHOOK_BASE_URL ?? self(),
        })
      : null;
    this.customer = this.sandbox ? new SandboxCustomer(stores.channels, this.sandbox) : null;
    const prices = { MARKETING: config.CREDIT_PRICE_MARKETING, UTILITY: config.CREDIT_PRICE_UTILITY, AUTHENTICATION: config.CREDIT_PRICE_AUTHENTICATION };
    const conversations: ConversationGateway = {
      ask: (org, aeid, cmd, key) => {
        if (this.gateway === null) throw new AppError(503, 'not_ready', 'the actor runtime is still starting', undefined, { retryAfterSeconds: 1 });
        return this.gateway.ask(org, aeid, cmd, key);
      },
    };
    this.actorDeps = {
      channels: stores.channels,
      networkFor,
      messages: stores.messages,
      contacts: deps.contacts,
      tickets: deps.tickets,
      credits: stores.credits,
      log: log.child({ component: 'messaging' }),
      sendRecoveryWaitMs: config.SEND_RECOVERY_WAIT_MS,
      // Embedded: one node sends, so its own memory holds the budget. Clustered: every node sends on every number.
      pacer: 'db' in stores.backing ? createMemorySendPacer() : createRedisSendPacer(stores.backing.redis, stores.backing.prefix),
      pacingMaxWaitMs: config.SEND_PACING_MAX_WAIT_MS,
      rules: stores.automationRules,
      labels: stores.labels,
    };
    this.service = new MessagingService({
      channels: stores.channels,
      contacts: deps.contacts,
      templates: stores.templates,
      credits: stores.credits,
      rateLimiter: stores.rateLimiter,
      messages: stores.messages,
      requestKeys: stores.requestKeys,
      conversations,
      visitors: stores.visitors,
      prices,
      templateRatePerMinute: config.TEMPLATE_RATE_LIMIT_PER_MINUTE,
      log,
      sendInFlightWaitMs: config.SEND_RECOVERY_WAIT_MS + 5_000,
      observer: deps.observer,
    });
    this.channels = new ChannelService({
      channels: stores.channels,
      defaultGraphApiVersion: version,
      templates: stores.templates,
      credits: stores.credits,
      organizations: deps.organizations,
      networkFor,
      sandbox: this.sandbox,
      publicBaseUrl: () => config.PUBLIC_URL ?? this.selfUrl ?? `http://localhost:${config.PORT}`,
      prices,
      clock,
      log,
      secretsKey: stores.secretsKey,
      visitors: stores.visitors,
    });
    this.receiver = new NetworkWebhookReceiver({ channels: stores.channels, messages: stores.messages, contacts: deps.contacts, conversations, log: log.child({ component: 'network-webhooks' }) });
  }

  static async open(deps: MessagingOpenDeps): Promise<Messaging> {
    const stores = await openMessagingStores(deps.config, deps.clock, deps.backing);
    if (!stores.secretsKey) deps.log.warn('SECRETS_KEY is not set: WhatsApp channels cannot be created or used until every node has the same key');
    const sandboxOn = deps.config.SANDBOX_NETWORK ?? deps.config.mode === 'embedded';
    const sandboxDb =
      sandboxOn && 'db' in stores.backing
        ? openSandboxDb(deps.config.DATA_DIR === ':memory:' ? null : deps.config.DATA_DIR, deps.config.SQLITE_SYNCHRONOUS)
        : null;
    return new Messaging(stores, sandboxDb, deps.config, deps.log, deps.clock, deps);
  }

  /** Connects the services to the contacts' conversation actors. */
  attach(gateway: ConversationGateway): void {
    this.gateway = gateway;
  }

  /** The base URL this node answers on (`http://127.0.0.1:<port>`): the sandbox network and the adapter meet there. */
  listening(url: string): void {
    this.selfUrl = url.replace(/\/+$/, '');
  }

  /** Non-JSON-route handlers to mount: the sandbox network's Graph API. */
  mounts(): { path: string; handler: RequestHandler }[] {
    return this.sandbox ? [{ path: SANDBOX_GRAPH_PATH, handler: sandboxGraphRouter(this.sandbox) }] : [];
  }

  /**
   * First embedded start: a WhatsApp channel on the sandbox network and some
   * credits for the demo organization, so every flow works at once. Returns
   * the line to print.
   */
  async seedDemo(organizationId: string): Promise<string | null> {
    if (this.sandbox === null) return null;
    const ch = await this.channels.create(organizationId, { kind: 'whatsapp_cloud', name: 'Sandbox WhatsApp', network: 'sandbox' });
    const { balance } = await this.channels.topUp(organizationId, 1000, 'demo-seed');
    return `  sandbox channel : ${ch.id}  (WhatsApp on the sandbox network, ${ch.templateSync?.synced ?? 0} templates, ${balance} credits)\n  export SB_CHANNEL=${ch.id}`;
  }

  /**
   * With MESSAGE_RETENTION_DAYS, deletes older messages hourly (and a minute
   * after start), a thousand at a time. Every node may run it: deleting in
   * turns is harmless.
   */
  startRetention(): void {
    const days = this.config.MESSAGE_RETENTION_DAYS;
    if (days === undefined || this.pruning.length > 0) return;
    const log = this.log;
    const prune = async () => {
      const before = new Date(Date.now() - days * 86_400_000);
      let deleted = 0;
      try {
        for (let n = 1000; n === 1000; deleted += n) n = await this.stores.messages.pruneBefore(before, 1000);
        if (deleted > 0) log.info('session messages past the retention deleted', { deleted, before: before.toISOString() });
      } catch (e) {
        log.warn('pruning session messages failed; tried again within the hour', { err: e });
      }
    };
    this.pruning.push(setTimeout(() => void prune(), 60_000), setInterval(() => void prune(), 3_600_000));
    for (const t of this.pruning) t.unref();
  }

  async close(): Promise<void> {
    for (const t of this.pruning) clearTimeout(t);
    await this.sandbox?.close();
    for (const a of this.adapters) a.close();
    await this.sandboxDb?.close();
    await this.stores.close();
  }
}
