import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Config } from './config.js';
import { systemClock, type Clock } from './clock.js';
import { createLogger, type Logger } from './log.js';
import { closeNodeBacking, createPostgresStore, createSqliteStore, openNodeBacking, type NodeBacking, type Store } from './store/index.js';
import { AccountService } from './app/accounts.js';
import { TicketService } from './app/tickets.js';
import { CannedReplyService } from './app/canned-replies.js';
import { TeamService } from './app/teams.js';
import { PresenceService } from './ws/presence.js';
import { createMemoryPresenceStore } from './store/presence/memory.js';
import { createRedisPresenceStore } from './store/presence/redis.js';
import { OperatorAuth } from './app/operator.js';
import { demoBanner, seedDemo, type DemoCredentials } from './app/bootstrap.js';
import { daysUntilExpiry, GRAPH_VERSION_WARNING_DAYS } from './network/graph-versions.js';
import { createHttpApp } from './http/app.js';
import { buildOpenApi } from './http/openapi.js';
import type { RouteDef } from './http/route.js';
import { adminRoutes } from './http/routes/admin.js';
import { systemRoutes, type ReadinessCheck } from './http/routes/system.js';
import { ticketRoutes } from './http/routes/tickets.js';
import { integrationRoutes } from './http/routes/integrations.js';
import { McpGateway, mcpBaseUrl, startMcpListener } from './mcp/index.js';
import { openEventLog, OutboxRelay, type EventLog } from './events/index.js';
import { createPostgresCannedReplyStore, createPostgresTeamStore, createSqliteCannedReplyStore, createSqliteTeamStore, openWebhookStores } from './store/index.js';
import { createWebhooks, type Webhooks } from './webhooks/index.js';
import { ResourceService } from './resources/index.js';
import { webhookRoutes } from './http/routes/webhooks.js';
import { resourceRoutes } from './http/routes/resources.js';
import { Messaging, conversationGateway } from './messaging/index.js';
import { ConversationClient, HandoverService } from './conversations/index.js';
import { messageRoutes } from './http/routes/messages.js';
import { sessionRoutes } from './http/routes/sessions.js';
import { labelRoutes } from './http/routes/labels.js';
import { networkWebhookRoutes } from './http/routes/network-webhook.js';
import { channelAdminRoutes, channelRoutes } from './http/routes/channels.js';
import { sandboxDirectoryRoutes, sandboxRoutes } from './http/routes/sandbox.js';
import { ConversationTimers, openActors, timelineActorOf, type ActorSystem } from './actors/index.js';
import { SandboxOrigins } from './http/sandbox-origins.js';
import { MetricsRegistry } from './metrics.js';
import { serviceObservers, type ServiceObservers } from './service-metrics.js';
import { handoverRoutes } from './http/routes/handover.js';
import { metricsRoutes } from './http/routes/metrics.js';
import { asyncApiRoute, conversationRoutes } from './http/routes/conversations.js';
import { InboxService, LabelService } from './inbox/index.js';
import { buildAsyncApi, contactAnnouncer, conversationAnnouncer, INBOX_PATH, InboxServer, InProcessCredentialNotices, InProcessEphemeralBus, NatsCredentialNotices, NatsEphemeralBus, type CredentialNotices } from './ws/index.js';
import { hashApiKey } from './domain/secrets.js';
import { isActiveUser } from './domain/types.js';
import { connect as connectNats } from '@nats-io/transport-node';
import { AuthSessions, FailedAuthThrottle, RequestAuthenticator } from './auth/index.js';
import { authRoutes } from './http/routes/auth.js';
import { settingsRoutes } from './http/routes/settings.js';
import { teamRoutes } from './http/routes/team.js';
import { cannedReplyRoutes } from './http/routes/canned-replies.js';
import { presenceRoutes } from './http/routes/presence.js';
import { teamsRoutes } from './http/routes/teams.js';
import { AutoAssigner } from './routing/index.js';
import { createMemoryAssignmentStore } from './store/assignment/memory.js';
import { createRedisAssignmentStore } from './store/assignment/redis.js';
import { docsAssets } from './http/docs-page.js';
import { bearerToken } from './http/app.js';
import { DEFAULT_WEB_DIR, webAppHandlers } from './http/web-app.js';
import { DataDirLock } from './data-dir-lock.js';
import { ConnectedTools } from './tools/index.js';
import { toolRoutes } from './http/routes/tools.js';
import { automationRoutes } from './http/routes/automation.js';
import { AutomationEffects, AutomationService } from './automation/index.js';
import { InProcessVisitorNoticeBus, NatsVisitorNoticeBus, VISITOR_SOCKET_PATH, WebChat, type VisitorNoticeBus } from './webchat/index.js';
import { refuseUnclaimedUpgrades } from './http/upgrades.js';

export const VERSION = '0.1.0';

/** Everything one node runs, wired once at start. */
export interface Services {
  config: Config;
  log: Logger;
  clock: Clock;
  /** The node's storage engine (its SQLite database, or its Redis client), shared by every store. */
  backing: NodeBacking;
  store: Store;
  accounts: AccountService;
  tickets: TicketService;
  /** The organization's canned replies (the composer's `/` snippets). */
  cannedReplies: CannedReplyService;
  /** Agents' presence (online, away, offline), and who is online per organization. */
  presence: PresenceService;
  /** The organization's teams of agents. */
  teams: TeamService;
  /** Gives queued conversations of the channels and teams that opted in to online agents. */
  autoAssign: AutoAssigner;
  operator: OperatorAuth;
  readiness: ReadinessCheck[];
  /** The durable event log: publish domain events here before acknowledging the operation. */
  events: EventLog;
  webhooks: Webhooks;
  resources: ResourceService;
  /** The MCP tool gateway: mounted at /mcp, or on its own listener with MCP_PORT. */
  mcp: McpGateway;
  /** Chat messaging: channels, templates, credits, sends, the network webhook receiver, the sandbox network. */
  messaging: Messaging;
  /** Run in reverse order on shutdown, after the HTTP server stopped taking requests. */
  closers: (() => Promise<void>)[];
  /** Prometheus metrics of this node, served at /metrics. */
  metrics: MetricsRegistry;
  /** What HTTP, webhooks and messaging report to the metrics. */
  observers: ServiceObservers;
  /** The actor runtime: per-contact conversation actors, routed over NATS when clustered. */
  actors: ActorSystem;
  /** The conversation actors' durable timers (`sweep()` runs one pass at once). */
  timers: ConversationTimers;
  handover: HandoverService;
  /** The live inbox's operations (conversations and contacts), behind /ws and its REST twins. */
  inbox: InboxService;
  labels: LabelService;
  /** The live inbox's WebSocket endpoint (`/ws`), attached to the REST listener by `startServer`. */
  inboxSockets: InboxServer;
  /** Dashboard sessions: sign-in, the cookie's principal, inbox tokens (for /ws: `authenticateInboxToken`, `authenticateSessionCookie`). */
  sessions: AuthSessions;
  /** API key or session cookie (+ CSRF), with failed-authentication throttling. */
  authenticator: RequestAuthenticator;
  /** Connected tools (email, calendar, payment) and their sandbox providers; null without a secrets key. */
  tools: ConnectedTools | null;
  /** The sandboxes at the root of origins of their own (their own ports), started by `startServer`. */
  sandboxes: SandboxOrigins;
  /** The organizations' automation rules (`/v1/automation-rules`). */
  automation: AutomationService;
  /** Web chat: the visitors' endpoints and socket, `/widget.js`. */
  webchat: WebChat;
}

export interface ServiceOptions {
  log?: Logger;
  clock?: Clock;
}

/** The main store of the configured mode (Redis clustered, else the embedded db under DATA_DIR). */
export async function openStore(config: Config, clock: Clock, backing: NodeBacking): Promise<Store> {
  if (backing.kind === 'clustered') return createPostgresStore(backing.pg, backing.redis.client, { prefix: config.KEY_PREFIX });
  return createSqliteStore(backing.db, clock);
}

export async function createServices(config: Config, opts: ServiceOptions = {}): Promise<Services> {
  const log = opts.log ?? createLogger(config.LOG_LEVEL, { node: config.NODE_ID });
  const clock = opts.clock ?? systemClock;
  const closers: Services['closers'] = [];
  if (config.mode === 'embedded' && config.DATA_DIR !== ':memory:') {
    const lock = DataDirLock.acquire(config.DATA_DIR);
    closers.push(async () => lock.release());
  }
  // One backing per node, handed to every module; closed last (after the store, which closes nothing of it twice).
  const backing = await openNodeBacking(config);
  closers.push(() => closeNodeBacking(backing));
  const store = await openStore(config, clock, backing);
  closers.push(() => store.close());
  const accounts = new AccountService(store, clock);
  const tickets = new TicketService(store, clock);
  const operator = await OperatorAuth.load(store, config.OPERATOR_TOKEN);
  const throttle = new FailedAuthThrottle(store.authFailures, log, {
    windowMs: config.AUTH_FAILURE_WINDOW_MS,
    perAccount: config.AUTH_FAILURES_PER_ACCOUNT,
    perAddress: config.AUTH_FAILURES_PER_ADDRESS,
  });
  const sessions = new AuthSessions(store, clock, log, throttle, {
    idleMs: config.SESSION_IDLE_TIMEOUT_MS,
    maxAgeMs: config.SESSION_MAX_AGE_MS,
    secureCookie: config.PUBLIC_URL?.startsWith('https:') ?? false,
  });
  const authenticator = new RequestAuthenticator((key) => accounts.authenticate(key), sessions, throttle);
  const metrics = new MetricsRegistry();
  const observers = serviceObservers(metrics);
  if (backing.kind === 'sqlite') {
    const stats = backing.db.stats;
    metrics.gauge('switchboard_sqlite_commits', 'Commits of the node\'s SQLite database since start (each one fsync of the WAL with SQLITE_SYNCHRONOUS=FULL).', () => stats.commits);
    metrics.gauge('switchboard_sqlite_failed_commits', 'Commits that failed since start (full disk, I/O error): their writes were answered 503 and kept nothing.', () => stats.failedCommits);
    metrics.gauge('switchboard_sqlite_units_cut_short', 'Units of work (one conversation command) that held the database\'s commits past 2 s since start and were committed in pieces; anything above 0 is a bug to report.', () => stats.unitsCutShort);
  }
  const readiness: ReadinessCheck[] =
    backing.kind === 'clustered'
      ? [
          { name: 'postgres', check: () => backing.pg.ping() },
          { name: 'redis', check: async () => void (await backing.redis.client.ping()) },
        ]
      : [{ name: 'store', check: () => store.ping() }];
  // Events and webhooks. Closers run in reverse: dispatcher, then its stores, then the log.
  const events = await openEventLog(config, log, backing);
  closers.push(() => events.close());
  const webhookStores = await openWebhookStores(config, backing);
  closers.push(() => webhookStores.close());
  const webhooks = createWebhooks(config, { store: webhookStores.webhooks, events, log, observer: observers.webhooks });
  await webhooks.start();
  closers.push(() => webhooks.stop(Math.min(5000, config.SHUTDOWN_TIMEOUT_MS)));
  const resources = new ResourceService(webhookStores.resources, events, () => clock.now());
  // Ticket events are written to the store's outbox with the change (one atomic write) and relayed to
  // the log after the answer; the relay stops before the log and the store close.
  const ticketEvents = new OutboxRelay(store.outbox, events, log, { owner: `${config.NODE_ID ?? 'node'}:${randomUUID()}` });
  ticketEvents.start();
  closers.push(() => ticketEvents.stop());
  tickets.onChange(async (_type, ticket) => ticketEvents.kick(ticket.organizationId));
  // Actors stop first on shutdown: they hand their partitions over while events and store still work.
  // Messaging opens before the actors (its handlers run in the conversation actor) and closes after them.
  const messaging = await Messaging.open({ config, clock, log, organizations: store.organizations, contacts: store.contacts, tickets: store.tickets, backing, observer: observers.templates });
  closers.push(() => messaging.close());
  const resends = metrics.counter('switchboard_send_resends_total', 'Keyed sends sent to the chat network again because no status came for an earlier attempt (the one case that can deliver a second copy)');
  const messagingActorDeps = { ...messaging.actorDeps, onResend: () => resends.inc() };
  // Presence, typing and conversation row changes cross nodes on NATS core subjects (best effort, never stored);
  // open before the actors, which announce the rows they listed, and closed after them.
  let bus: InProcessEphemeralBus | NatsEphemeralBus = new InProcessEphemeralBus();
  // So do notices of changed credentials: every node closes the sockets that outlived theirs.
  let notices: CredentialNotices = new InProcessCredentialNotices();
  // And web chat's notices (revoked visitor tokens).
  let visitorNotices: VisitorNoticeBus = new InProcessVisitorNoticeBus();
  if (config.NATS_URL !== undefined) {
    const nc = await connectNats({ servers: config.NATS_URL, name: `${config.NODE_ID ?? 'node'}-inbox`, maxReconnectAttempts: -1, noAsyncTraces: true });
    closers.push(() => nc.drain());
    bus = new NatsEphemeralBus(nc, config.KEY_PREFIX, log.child({ component: 'inbox' }));
    notices = new NatsCredentialNotices(nc, config.KEY_PREFIX, log.child({ component: 'inbox' }));
    visitorNotices = new NatsVisitorNoticeBus(nc, config.KEY_PREFIX, log.child({ component: 'webchat' }));
  }
  const actors = await openActors(config, backing, { log, events, clock, metrics, messaging: messagingActorDeps, conversations: messaging.stores.conversations, conversationListed: conversationAnnouncer(bus) });
  closers.push(() => actors.close());
  readiness.push(...actors.readiness);
  // The actors' durable timers (the bot's fallback): each node sweeps for the partitions it owns. Stopped before the actors.
  const timers = new ConversationTimers({ index: messaging.stores.conversations, system: actors.system, clock, log: log.child({ component: 'timers' }) });
  timers.start();
  closers.push(() => timers.stop());
  const cannedReplies = new CannedReplyService(backing.kind === 'clustered' ? createPostgresCannedReplyStore(backing.pg) : createSqliteCannedReplyStore(backing.db), clock);
  const teams = new TeamService(backing.kind === 'clustered' ? createPostgresTeamStore(backing.pg) : createSqliteTeamStore(backing.db), store.users, clock);
  // The one way every front and service reaches a contact's conversation.
  const conversationClient = new ConversationClient(actors.system, store.contacts);
  const handover = new HandoverService(store.contacts, conversationClient);
  const automation = new AutomationService({
    rules: messaging.stores.automationRules,
    isActiveUser: async (org, userId) => {
      const user = await store.users.get(org, userId);
      return user !== null && user !== undefined && isActiveUser(user);
    },
    isTeam: async (org, teamId) => (await teams.find(org, teamId)) !== null,
    clock,
  });
  messaging.attach(conversationGateway(conversationClient));
  // Automation's replies, from the rules' events (stopped before the actors and the log).
  const automationEffects = new AutomationEffects({
    events,
    messaging: messaging.service,
    tickets,
    recordEntry: async (org, aeid, entry) => {
      await conversationClient.askPlaced(org, aeid, { kind: 'automation.entry', ...entry }, { idempotencyKey: `automation.entry:${entry.entryId}` });
    },
    recordFailure: async (org, aeid, failure) => {
      await conversationClient.askPlaced(org, aeid, { kind: 'automation.failed', ...failure }, { idempotencyKey: `automation.failed:${failure.failureId}` });
    },
    clock,
    log: log.child({ component: 'automation' }),
  });
  await automationEffects.start();
  closers.push(() => automationEffects.stop());
  messaging.startRetention();
  const contactChanged = contactAnnouncer(bus);
  const labels = new LabelService({ labels: messaging.stores.labels, events, conversations: messaging.stores.conversations, contacts: store.contacts, clock, contactChanged });
  const inbox = new InboxService({
    labels,
    contactChanged,
    teams,
    conversations: messaging.stores.conversations,
    contacts: store.contacts,
    users: store.users,
    messages: messaging.stores.messages,
    search: messaging.stores.search,
    messaging: messaging.service,
    conversationClient,
    clock,
  });
  // A ticket made for a contact shows in its conversation's timeline. The ticket is made either way: a
  // failure here leaves the entry out (logged), and the actor's key (the ticket's id) writes it once.
  tickets.onChange(async (type, ticket, principal) => {
    // A ticket an automation rule made (no principal) is written to the timeline by the rule's effects, naming the rule.
    if (type !== 'ticket.created' || ticket.audienceExternalId === null || principal === null) return;
    const actor = timelineActorOf(principal, ticket.createdBy?.kind === 'mcp' ? 'mcp' : undefined);
    await inbox.ticketCreated(ticket.organizationId, { id: ticket.ticketId, subject: ticket.title, audienceExternalId: ticket.audienceExternalId }, actor).catch((e: unknown) => {
      log.warn('ticket not written to its conversation timeline', { ticketId: ticket.ticketId, err: e });
    });
  });
  accounts.onCredentialsChanged((c) => notices.publish(c));
  sessions.onCredentialsChanged((c) => notices.publish(c));
  // Agents' presence: shared in Redis across the nodes (leases that lapse with their node), in memory embedded.
  const presence = new PresenceService(
    backing.kind === 'clustered' ? createRedisPresenceStore(backing.redis.client, config.KEY_PREFIX) : createMemoryPresenceStore(clock),
    store.users,
    bus,
  );
  // Auto-assignment: queues that opted in are served to online agents under capacity (stopped before the actors and the log).
  const autoAssign = new AutoAssigner({
    index: messaging.stores.conversations,
    channels: (org) => messaging.channels.list(org),
    teams: (org) => teams.all(org),
    online: (org) => presence.online(org),
    capacities: async (org) => new Map((await store.users.list(org)).flatMap((u) => (typeof u.capacity === 'number' ? [[u.id, u.capacity] as const] : []))),
    store: backing.kind === 'clustered' ? createRedisAssignmentStore(backing.redis.client, config.KEY_PREFIX) : createMemoryAssignmentStore(),
    conversations: conversationClient,
    events,
    clock,
    log: log.child({ component: 'auto-assign' }),
  });
  await autoAssign.start();
  closers.push(() => autoAssign.stop());
  presence.onAvailable((org) => autoAssign.nudge(org));
  accounts.onCapacityChanged((org) => autoAssign.nudge(org));
  const inboxSockets = new InboxServer({
    feed: events,
    inbox,
    tickets,
    presenceService: presence,
    bus,
    log: log.child({ component: 'inbox' }),
    notices,
    recheckMs: config.INBOX_CREDENTIAL_RECHECK_MS,
    auth: {
      apiKey: async (key, address) => {
        const principal = await authenticator.apiKey(key, address);
        const hash = hashApiKey(key);
        return { principal, current: () => accounts.principalOfKeyHash(hash) };
      },
      inboxToken: async (token) => {
        const s = await sessions.inboxTokenCredential(token);
        return { principal: s.principal, current: () => sessions.principalOfSession(s.sessionIdHash) };
      },
      sessionCookie: async (cookie) => {
        const s = await sessions.cookieCredential(cookie);
        return { principal: s.principal, current: () => sessions.principalOfSession(s.sessionIdHash) };
      },
    },
    allowedOrigins: config.PUBLIC_URL === undefined ? [] : [new URL(config.PUBLIC_URL).origin],
    heartbeatMs: config.INBOX_HEARTBEAT_MS,
    limits: { maxBufferedBytes: config.INBOX_MAX_BUFFERED_BYTES, framesPerSecond: config.INBOX_FRAMES_PER_SECOND, maxRefusedFrames: 100, maxInFlight: 16 },
  });
  closers.push(() => inboxSockets.close());
  metrics.gauge('switchboard_inbox_sockets', 'Live inbox WebSockets open on this node.', () => inboxSockets.stats().sockets);
  metrics.gauge('switchboard_inbox_buffered_bytes', 'Bytes queued but not yet sent to this node\'s inbox sockets (slow clients).', () => inboxSockets.stats().bufferedBytes);
  const webchat = new WebChat({ config, clock, log, messaging, contacts: store.contacts, conversations: conversationGateway(conversationClient), feed: events, inboxBus: bus, notices: visitorNotices });
  closers.push(() => webchat.close());
  metrics.gauge('switchboard_webchat_visitor_sockets', 'Web chat visitors\' WebSockets open on this node.', () => webchat.sockets.size);
  const tools = await ConnectedTools.open({ config, log, clock, version: VERSION, backing, authenticate: (key, address) => authenticator.apiKey(key, address) });
  if (tools) closers.push(() => tools.close());
  const sandboxes = new SandboxOrigins(config, messaging, tools, log.child({ component: 'sandboxes' }));
  closers.push(() => sandboxes.close());
  // The MCP gateway calls the same services as the REST routes.
  const mcp = new McpGateway({
    version: VERSION,
    log,
    authenticate: (key, address) => authenticator.apiKey(key, address),
    platform: { tickets, conversations: { handover, messaging: messaging.service, contacts: store.contacts, channels: messaging.channels, conversations: conversationClient }, inbox },
    allowedHosts: config.MCP_ALLOWED_HOSTS,
    allowedOrigins: config.MCP_ALLOWED_ORIGINS,
    publicUrls: [config.PUBLIC_URL, config.MCP_PUBLIC_URL],
    maxBodyBytes: config.MCP_BODY_LIMIT_BYTES,
    connected: tools ?? undefined,
  });
  return { sandboxes, tools, config, log, clock, backing, store, accounts, tickets, cannedReplies, presence, teams, autoAssign, operator, readiness, closers, events, webhooks, resources, mcp, metrics, observers, actors: actors.system, timers, handover, automation, messaging, inbox, labels, inboxSockets, sessions, authenticator, webchat };
}

/** `GET /v1/integrations`, connect, the tools and their callbacks (and the operator's return origins): at `{mcp_url}` as well when MCP_PORT is set. */
function toolGatewayRoutes(s: Services): RouteDef[] {
  const routes = integrationRoutes(s.mcp, (req) => mcpBaseUrl(s.config, req, s.mcp.listenPort));
  if (s.tools) {
    const tools = s.tools;
    // Addresses the service will call or redirect to come from PUBLIC_URL, never from the request's Host.
    routes.push(...toolRoutes(tools, () => tools.publicUrl(), (req) => mcpBaseUrl(s.config, req, s.mcp.listenPort)));
  }
  return routes;
}

export function buildRoutes(s: Services, state: { shuttingDown: boolean }): RouteDef[] {
  const routes: RouteDef[] = [...authRoutes(s.sessions), ...ticketRoutes(s.tickets), ...adminRoutes(s.accounts), ...webhookRoutes(s.webhooks.registrations), ...resourceRoutes(s.resources)];
  routes.push(...handoverRoutes(s.handover), ...conversationRoutes(s.inbox, s.tickets), ...labelRoutes(s.labels), ...metricsRoutes(s.metrics, s.config.METRICS_TOKEN));
  routes.push(...messageRoutes(s.messaging.service), ...sessionRoutes(s.messaging.service), ...networkWebhookRoutes(s.messaging.receiver));
  routes.push(...channelAdminRoutes(s.messaging.channels), ...channelRoutes(s.messaging.channels), ...settingsRoutes(s.accounts, s.messaging.channels), ...teamRoutes(s.accounts), ...cannedReplyRoutes(s.cannedReplies), ...presenceRoutes(s.presence), ...teamsRoutes(s.teams), ...automationRoutes(s.automation));
  if (s.messaging.customer) routes.push(...sandboxRoutes(s.messaging.customer));
  routes.push(...s.webchat.routes());
  if (s.sandboxes.on) {
    routes.push(...sandboxDirectoryRoutes({ urls: () => s.sandboxes.urls(), credentials: (p) => s.sandboxes.credentials(p), authenticate: (key, address) => s.authenticator.apiKey(key, address) }));
  }
  routes.push(...toolGatewayRoutes(s));
  let openApi: Record<string, unknown> | undefined;
  let asyncApi: Record<string, unknown> | undefined;
  routes.push(asyncApiRoute(() => (asyncApi ??= buildAsyncApi({ version: VERSION, serverUrl: s.config.PUBLIC_URL }))));
  routes.push(
    ...systemRoutes({
      checks: () => s.readiness,
      shuttingDown: () => state.shuttingDown,
      graphApi: () => s.messaging.channels.graphApiVersions(),
      openApi: () => (openApi ??= buildOpenApi(routes, { version: VERSION, serverUrl: s.config.PUBLIC_URL })),
    }),
  );
  return routes;
}

export function buildApp(s: Services, state = { shuttingDown: false }): Express {
  const web = webAppHandlers(s.config.WEB_DIR ?? DEFAULT_WEB_DIR);
  return createHttpApp({
    routes: buildRoutes(s, state),
    log: s.log,
    bodyLimit: s.config.BODY_LIMIT,
    authenticate: (key) => s.authenticator.apiKey(key),
    authenticateRequest: (req, kind) =>
      s.authenticator.authenticate(
        {
          method: req.method,
          authorization: req.headers.authorization,
          bearer: bearerToken(req),
          cookieHeader: req.headers.cookie,
          csrfToken: typeof req.headers['x-csrf-token'] === 'string' ? req.headers['x-csrf-token'] : undefined,
          address: req.ip,
        },
        kind,
      ),
    authenticateOperator: (token) => s.operator.authenticate(token),
    publicUrl: s.config.PUBLIC_URL,
    observeRequest: s.observers.httpRequest,
    mounts: [...(s.config.MCP_PORT === undefined ? [{ path: '/mcp', handler: s.mcp.handler }] : []), ...s.messaging.mounts(), ...s.webchat.mounts(), ...(s.tools?.mounts() ?? []), { path: '/assets', handler: web.assets }, { path: '/docs/assets', handler: docsAssets() }],
    fallbacks: [web.pages],
  });
}

export interface RunningServer {
  services: Services;
  server: Server;
  url: string;
  port: number;
  demo: DemoCredentials | null;
  /** Base URL of the MCP gateway (`{mcp_url}`): the REST URL, or the MCP_PORT listener's. */
  mcpUrl: string;
  /** Graceful: stop accepting, finish in-flight requests (up to the timeout), then close services. */
  close(): Promise<void>;
}

export async function startServer(config: Config, opts: ServiceOptions = {}): Promise<RunningServer> {
  const services = await createServices(config, opts);
  const state = { shuttingDown: false };
  const app = buildApp(services, state);
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await services.inboxSockets.start(server);
  await services.webchat.start(server);
  refuseUnclaimedUpgrades(server, [INBOX_PATH, VISITOR_SOCKET_PATH]);
  // While draining, a connection whose last response went out is closed at
  // once instead of idling until the shutdown timeout.
  server.on('request', (_req, res) => {
    res.once('finish', () => {
      if (state.shuttingDown) setImmediate(() => server.closeIdleConnections());
    });
  });
  let mcpListener: Awaited<ReturnType<typeof startMcpListener>> | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.PORT, config.HOST, () => resolve());
    });
    mcpListener =
      config.MCP_PORT === undefined
        ? undefined
        : await startMcpListener(services.mcp, {
            port: config.MCP_PORT,
            host: config.HOST,
            log: services.log,
            authenticate: (key) => services.authenticator.apiKey(key),
            routes: toolGatewayRoutes(services).filter((r) => r.auth !== 'operator'),
          });
    await services.sandboxes.listen();
  } catch (err) {
    if (server.listening) await new Promise((r) => server.close(r));
    await mcpListener?.close(0);
    await closeAll(services);
    throw err;
  }
  // Only once the ports are ours: a start that fails to listen (EADDRINUSE) must leave the store
  // empty, so the next start seeds again and prints credentials that work.
  let demo: DemoCredentials | null = null;
  if (config.mode === 'embedded' && config.OPERATOR_TOKEN === undefined && config.SEED_DEMO) {
    demo = await seedDemo(services.store, services.accounts, services.operator);
  }
  const port = (server.address() as AddressInfo).port;
  // The sandbox network and the Graph adapter meet over HTTP on this node's own address.
  const selfHost = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  services.messaging.listening(`http://${selfHost.includes(':') ? `[${selfHost}]` : selfHost}:${port}`);
  const url = config.PUBLIC_URL ?? `http://localhost:${port}`;
  services.tools?.listening(`http://${selfHost.includes(':') ? `[${selfHost}]` : selfHost}:${port}`, `http://localhost:${port}`);
  if (demo) {
    const channel = await services.messaging.seedDemo(demo.organizationId).catch((err: unknown) => {
      services.log.warn('could not create the demo sandbox channel', { err });
      return null;
    });
    // A customer who taps the demo templates' "Talk to an agent" reaches the queue, with no bot running.
    await services.automation.seedDemo(demo.organizationId).catch((err: unknown) => services.log.warn('could not add the demo automation rule', { err }));
    const sandboxLines = services.sandboxes.bannerLines();
    process.stdout.write(demoBanner(demo, url, [...(channel === null ? [] : channel.split('\n')), ...(sandboxLines.length > 0 ? ['', ...sandboxLines] : [])]));
  }
  services.log.info('listening', { port, mode: config.mode });
  await warnOfGraphApiExpiry(services);
  // Best effort: a store that cannot list channels now must not stop the start.
  await services.messaging.channels.unreachableGraphWebhooks().then(
    (unreachable) => {
      for (const w of unreachable) {
        services.log.warn('a WhatsApp (Graph) channel\'s webhook URL is a loopback address the network cannot reach: set PUBLIC_URL to the address Meta reaches this service at', w);
      }
    },
    (err: unknown) => services.log.warn('could not check the channels\' webhook URLs', { err }),
  );
  const mcpUrl = mcpListener ? (config.MCP_PUBLIC_URL ?? `http://localhost:${mcpListener.port}`) : url;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      state.shuttingDown = true;
      // Upgraded sockets are not the HTTP server's to drain: close them first (1012), so clients reconnect elsewhere.
      await services.inboxSockets.close();
      await services.webchat.closeSockets();
      const mcpDrained = mcpListener?.close(config.SHUTDOWN_TIMEOUT_MS);
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
      await drained;
      await mcpDrained;
      clearTimeout(timer);
      await closeAll(services);
      services.log.info('stopped');
    })());
  return { services, server, url, port, demo, mcpUrl, close };
}

async function closeAll(services: Services): Promise<void> {
  for (const c of [...services.closers].reverse()) {
    try {
      await c();
    } catch (err) {
      services.log.error('error while closing', { err });
    }
  }
}

/** Warns at start of each real-network channel whose Graph API version Meta retires within 90 days (or already did). */
async function warnOfGraphApiExpiry(services: Services): Promise<void> {
  try {
    const now = new Date();
    for (const [channelId, g] of Object.entries(await services.messaging.channels.graphApiVersions())) {
      const days = daysUntilExpiry(g.version, now);
      if (days !== null && days <= GRAPH_VERSION_WARNING_DAYS) {
        services.log.warn(days < 0 ? 'a channel names a Graph API version Meta has retired: its calls are served by a newer version' : 'a channel names a Graph API version Meta retires soon', {
          channelId,
          version: g.version,
          expiresOn: g.expiresOn,
          daysLeft: days,
          fix: 'set GRAPH_API_VERSION (or the channel\'s graphApiVersion) to a current version',
        });
      }
    }
  } catch (err) {
    services.log.warn('could not check the channels\' Graph API versions', { err });
  }
}
