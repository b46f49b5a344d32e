import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const optionalUrl = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .pipe(z.url().optional())
  .optional();

/**
 * Every setting of the service, parsed once at start. No other module reads
 * `process.env`: they receive the parsed `Config` (or the slice they need).
 */
export const configSchema = z.object({
  /** `production` in deployments; `test` is set by the test suite. */
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** The HTTP port: REST API, dashboard, live inbox socket and (unless MCP_PORT) the MCP gateway. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** The address the HTTP listener binds to. */
  HOST: z.string().default('0.0.0.0'),
  /**
   * Public base URL of the REST API, used in links (Deprecation `Link`, MCP URLs) and the only base of
   * addresses the service gives others to call or redirect to (the OAuth redirect URI, the payment
   * webhook); never taken from a request's `Host`. Unset: `http://localhost:PORT`. A WhatsApp (Graph)
   * channel whose webhook URL it makes a loopback address is warned about at start-up.
   */
  PUBLIC_URL: optionalUrl,
  /** Embedded mode: where the node's data lives (`switchboard.db` and the sandboxes' databases). `:memory:` keeps nothing (in-memory SQLite). */
  DATA_DIR: z.string().min(1).default('./data'),
  /**
   * Embedded mode: when a commit of the node's SQLite database is durable. FULL: fsynced before the answer
   * (survives a power loss). NORMAL: handed to the OS (survives a killed process; a power loss can lose the
   * last commits, never corrupts). See docs/embedded.md.
   */
  SQLITE_SYNCHRONOUS: z.enum(['FULL', 'NORMAL']).default('FULL'),
  /** The built dashboard (`vite build` output). Unset: `dist/web` in the package. */
  WEB_DIR: z.string().min(1).optional(),
  /**
   * Clustered mode: the PostgreSQL database that holds every record (`postgres://user:pass@host:5432/db`).
   * Set together with REDIS_URL (or REDIS_CLUSTER_NODES) and NATS_URL.
   */
  DATABASE_URL: z
    .string()
    .trim()
    .transform((v) => (v === '' ? undefined : v))
    .pipe(z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' }).optional())
    .optional(),
  /** Clustered mode: the PostgreSQL schema the tables live in (created when missing), so deployments can share a database. */
  DATABASE_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'lower-case letters, digits and _, not starting with a digit').default('public'),
  /** Clustered mode: PostgreSQL connections one node holds at most. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(20),
  /** Clustered mode: the Redis that holds what is bounded or expires (actor state and fencing, leases, rate limits, pacing, request keys, sign-in sessions). Set this or REDIS_CLUSTER_NODES. */
  REDIS_URL: optionalUrl,
  /**
   * Redis Cluster instead of one Redis: some of its nodes, comma-separated
   * (`redis://host:port,redis://host:port`); the rest are discovered. Set
   * this or REDIS_URL, not both.
   */
  REDIS_CLUSTER_NODES: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === undefined || v === '' ? undefined : v.split(',').map((n) => n.trim()).filter((n) => n !== '')))
    .pipe(z.array(z.url({ protocol: /^rediss?$/, error: 'each node is a redis:// or rediss:// URL' })).min(1).optional()),
  /** Clustered mode: the NATS server (with JetStream) that routes commands between nodes and carries the event log. */
  NATS_URL: z.string().trim().optional().transform((v) => (v === '' ? undefined : v)),
  /** Prefix of every Redis key and NATS subject, so several deployments can share servers. */
  KEY_PREFIX: z.string().regex(/^[a-z0-9_-]{1,32}$/i).default('sb'),
  /** Clustered mode: this node's name, distinct on every node. Unset: hostname + pid. */
  NODE_ID: z.string().regex(/^[a-zA-Z0-9_.-]{1,64}$/).optional(),
  /** Guards the operator (admin) API. Unset in embedded mode: generated on the first start and printed once (`npm run admin -- operator reset-token` makes a new one). */
  OPERATOR_TOKEN: z.string().min(16).optional(),
  /** Guards GET /metrics: when set, scrapers must send `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). Unset: public. */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** JSON logs on stdout, one line per request with its `X-Request-Id`. */
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Largest JSON request body accepted. */
  BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/i).default('256kb'),
  /** How long graceful shutdown waits for in-flight requests before closing them. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
  /** Seed a demo organization on the first embedded start (when nothing is stored yet). */
  SEED_DEMO: bool.default(true),
  /** Events: how long the JetStream stream keeps events whatever consumers did. */
  EVENTS_MAX_AGE_HOURS: z.coerce.number().int().min(1).max(24 * 365).default(168),
  /** Replicas of the events stream: 3 on a NATS cluster so a lost server loses no event. */
  EVENTS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** Embedded event log: the newest events kept readable for live-inbox replay (memory and disk), whatever consumers acknowledged. */
  EVENTS_REPLAY_RETAIN: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  /** An event a consumer took but did not acknowledge (its node died) goes to another node after this long. */
  EVENTS_ACK_WAIT_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  /** Webhooks: development only — allow http:// and loopback receivers (never private ranges). */
  WEBHOOK_ALLOW_LOOPBACK: bool.default(false),
  /** Webhooks: one delivery attempt (connect + response) gives up after this long. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /** Webhooks: first retry delay; doubles per attempt (with jitter) up to WEBHOOK_RETRY_MAX_DELAY_MS. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(5_000),
  /** Webhooks: the longest delay between two attempts. */
  WEBHOOK_RETRY_MAX_DELAY_MS: z.coerce.number().int().min(10).max(86_400_000).default(6 * 3_600_000),
  /** Webhooks: no retry is scheduled past this long after the first attempt (about three days). */
  WEBHOOK_RETRY_WINDOW_MS: z.coerce.number().int().min(0).max(30 * 86_400_000).default(72 * 3_600_000),
  /** Webhooks: requests in flight at once to one registration. */
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: z.coerce.number().int().min(1).max(256).default(8),
  /** Webhooks: registrations one node serves at once (each in its own queue). */
  WEBHOOK_MAX_ACTIVE_ENDPOINTS: z.coerce.number().int().min(1).max(10_000).default(256),
  /** Webhooks: finished deliveries (and their attempts) are kept this many days. */
  WEBHOOK_DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  /**
   * Messaging: the Graph API host for channels on the real WhatsApp Cloud API; the version is
   * appended (GRAPH_API_VERSION, or a channel's own). A URL that ends in a version
   * (`https://graph.facebook.com/v21.0`, the older form) names the default version.
   */
  GRAPH_API_BASE_URL: z.url().default('https://graph.facebook.com'),
  /** Messaging: the Graph API version requests name (`v27.0`); unset: the one in GRAPH_API_BASE_URL, else the current version this service was checked against. */
  GRAPH_API_VERSION: z.string().regex(/^v\d{1,3}\.\d$/, 'a Graph API version such as v27.0').optional(),
  /** Messaging: one Graph API request gives up after this long. */
  GRAPH_API_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /**
   * How long a keyed send whose earlier attempt may have reached the network
   * (its owner stopped mid-call) waits for a status of that attempt before
   * sending again.
   */
  SEND_RECOVERY_WAIT_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
  /**
   * Messaging: how long a send waits, at most, for its phone number's turn
   * when sends come faster than the number's tier (a channel setting); past
   * it the send is refused with 429 and Retry-After. Keep it below
   * ACTOR_ATTEMPT_TIMEOUT_MS (the wait happens inside the contact's actor).
   */
  SEND_PACING_MAX_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(4_000),
  /** Messaging: serve the sandbox chat network. Unset: on in embedded mode, off in clustered mode. */
  SANDBOX_NETWORK: bool.optional(),
  /** Messaging: where the adapter reaches the sandbox's Graph API. Unset: this process (`http://127.0.0.1:PORT/sandbox/graph`). */
  SANDBOX_GRAPH_URL: optionalUrl,
  /** Messaging: base URL the sandbox posts its webhooks to (this service's receiver). Unset: this process. */
  SANDBOX_WEBHOOK_BASE_URL: optionalUrl,
  /** Sandbox: pause before each of the sent / delivered / read status webhooks of a message. */
  SANDBOX_STATUS_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(250),
  /** Sandbox: messages per second one sandbox phone number accepts; past it sends fail with 130429. */
  SANDBOX_MAX_MPS: z.coerce.number().int().min(1).max(100_000).default(80),
  /**
   * Sandboxes: the port the sandbox chat network's Graph API answers on, at the root of an origin of its
   * own (a Cloud API client takes `http://<host>:<port>` as its Graph base URL). Unset: 12110, or a
   * free port when PORT is 0. `0`: a free port (printed at start and at `GET /sandbox`).
   */
  SANDBOX_GRAPH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Key that encrypts channel secrets and tool credentials at rest: 32 bytes as base64 or hex. Unset in embedded mode: generated under DATA_DIR (`messaging/secrets.key`). Clustered, every node needs the same one: WhatsApp channels are refused (500 `secrets_key_missing`) until then. */
  SECRETS_KEY: z
    .string()
    .trim()
    .transform((v) => (v === '' ? undefined : v))
    .pipe(z.string().regex(/^([A-Za-z0-9+/_-]{43}=?|[0-9a-fA-F]{64})$/, 'must be 32 bytes as base64 or hex (openssl rand -hex 32)').optional())
    .optional(),
  /** Keys rotated out of SECRETS_KEY, comma-separated: they still open what they sealed; values are sealed again under SECRETS_KEY when read. */
  SECRETS_KEY_PREVIOUS: z.string().trim().optional().transform((v) => (v === '' ? undefined : v)),
  /** Connected tools: serve the sandbox providers (identity, mailbox, calendar, payments). Unset: on in embedded mode, off in clustered mode. */
  SANDBOX_TOOLS: bool.optional(),
  /** Connected tools: where the adapters reach the sandbox providers. Unset: this process (`http://127.0.0.1:PORT/sandbox`). */
  SANDBOX_TOOLS_URL: optionalUrl,
  /** Sandboxes: the port the sandbox Google APIs (Gmail v1, Calendar v3) answer on at the root (googleapis' `rootUrl`). Unset: 12120, or a free port when PORT is 0. */
  SANDBOX_GOOGLE_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Sandboxes: the port the sandbox Google OAuth 2.0 endpoints answer on at the root (`/o/oauth2/v2/auth`, `/token`, `/revoke`). Unset: 12121, or a free port when PORT is 0. */
  SANDBOX_GOOGLE_OAUTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Sandboxes: the port the sandbox Stripe API answers on at the root (the `stripe` client's `host`/`port`/`protocol`). Unset: 12111 (stripe-mock's), or a free port when PORT is 0. */
  SANDBOX_STRIPE_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Sandbox providers: lifetime of the access tokens the sandbox identity provider issues, in seconds. */
  SANDBOX_TOOLS_TOKEN_TTL_S: z.coerce.number().int().min(1).max(86_400).default(3600),
  /** Connected tools: origins a connect `return_url` may point at, comma-separated (more with `npm run admin -- tools allow-origin`). */
  TOOLS_ALLOWED_RETURN_ORIGINS: z.string().trim().optional().transform((v) => (v ? v.split(',').map((o) => o.trim().toLowerCase().replace(/\/$/, '')).filter((o) => o !== '') : [])),
  /** Connected tools: how long a sign-in started by connect may take before its `state` expires. */
  TOOLS_OAUTH_STATE_TTL_MS: z.coerce.number().int().min(1000).max(3_600_000).default(600_000),
  /** Connected tools: one request to a provider gives up after this long. */
  TOOLS_HTTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /** Google OAuth client (email and calendar on Google's real APIs). Unset: those tools use the sandbox providers. */
  GOOGLE_CLIENT_ID: z.string().trim().optional().transform((v) => (v === '' ? undefined : v)),
  /** The Google OAuth client's secret, with GOOGLE_CLIENT_ID. */
  GOOGLE_CLIENT_SECRET: z.string().trim().optional().transform((v) => (v === '' ? undefined : v)),
  /** Google's OAuth authorization endpoint. */
  GOOGLE_AUTH_URL: z.url().default('https://accounts.google.com/o/oauth2/v2/auth'),
  /** Google's OAuth token endpoint. */
  GOOGLE_TOKEN_URL: z.url().default('https://oauth2.googleapis.com/token'),
  /** Google's OAuth revocation endpoint (called when a tool is deleted). */
  GOOGLE_REVOKE_URL: z.url().default('https://oauth2.googleapis.com/revoke'),
  /** Gmail REST API base (the path `/gmail/v1/...` is appended). */
  GMAIL_API_BASE_URL: z.url().default('https://gmail.googleapis.com'),
  /** Google Calendar REST API base (the path `/calendar/v3/...` is appended). */
  GOOGLE_CALENDAR_API_BASE_URL: z.url().default('https://www.googleapis.com'),
  /** Stripe REST API base (the path `/v1/...` is appended). */
  STRIPE_API_BASE_URL: z.url().default('https://api.stripe.com'),
  /** Credits one template send of a MARKETING template costs. */
  CREDIT_PRICE_MARKETING: z.coerce.number().int().min(0).max(1_000_000).default(2),
  /** Credits one template send of a UTILITY template costs. */
  CREDIT_PRICE_UTILITY: z.coerce.number().int().min(0).max(1_000_000).default(1),
  /** Credits one template send of an AUTHENTICATION template costs. */
  CREDIT_PRICE_AUTHENTICATION: z.coerce.number().int().min(0).max(1_000_000).default(1),
  /** POST /v2/wa/template (and its v1 / api-v1 siblings): requests per minute per API key, shared by all nodes. */
  TEMPLATE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(60),
  /** MCP gateway: serve `/mcp/{id}` on its own port. Unset: on the REST listener (PORT). */
  MCP_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** MCP gateway: base URL clients use to reach `/mcp/{id}` (the `mcp_url` of integrations). Unset: PUBLIC_URL, or http://localhost:MCP_PORT. */
  MCP_PUBLIC_URL: optionalUrl,
  /** MCP gateway: Host names accepted (DNS-rebinding guard), comma-separated, no ports. Unset: localhost, 127.0.0.1, [::1] and the hosts of PUBLIC_URL / MCP_PUBLIC_URL. */
  MCP_ALLOWED_HOSTS: z.string().trim().optional().transform((v) => (v ? v.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '') : undefined)),
  /** MCP gateway: browser Origins accepted, comma-separated (`https://app.example.com`). Unset: loopback origins and those of PUBLIC_URL / MCP_PUBLIC_URL. Requests without Origin are not affected. */
  MCP_ALLOWED_ORIGINS: z.string().trim().optional().transform((v) => (v ? v.split(',').map((o) => o.trim().toLowerCase().replace(/\/$/, '')).filter((o) => o !== '') : undefined)),
  /** MCP gateway: largest JSON-RPC request body, in bytes (413 beyond). */
  MCP_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  /** Dashboard sign-in: a session unused for this long ends (default 12 h). */
  SESSION_IDLE_TIMEOUT_MS: z.coerce.number().int().min(60_000).max(30 * 86_400_000).default(12 * 3_600_000),
  /** Dashboard sign-in: no session lives longer than this, however active (default 7 days). */
  SESSION_MAX_AGE_MS: z.coerce.number().int().min(60_000).max(365 * 86_400_000).default(7 * 86_400_000),
  /** Failed authentication (passwords, API keys, session cookies): the counting window. */
  AUTH_FAILURE_WINDOW_MS: z.coerce.number().int().min(1000).max(86_400_000).default(15 * 60_000),
  /** Failures per account (sign-in email) or per API key prefix in a window; past it, 429 until the window ends. */
  AUTH_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000_000).default(10),
  /** Failures per client address in a window; past it, 429 until the window ends. */
  AUTH_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(50),
  /** Actors: partitions contacts hash to. Fixed for a deployment's lifetime (Redis keys are tagged with it). */
  ACTOR_PARTITIONS: z.coerce.number().int().min(1).max(4096).default(64),
  /**
   * Actors (clustered): how often each node checks that the other nodes are still connected to NATS.
   * A node whose connection is gone (NATS answers "no responders" for it twice in a row) is evicted
   * at once, without waiting for its lease: a killed node's contacts move within about 1 s. 0: off
   * (a dead node's contacts then move when its lease runs out).
   */
  ACTOR_PROBE_MS: z.coerce.number().int().min(0).max(60_000).default(500),
  /** Actors: partition lease (and node membership) time to live. A dead node's contacts move after about 1.25x this (sooner when ACTOR_PROBE_MS finds its NATS connection gone; a paused node waits for this). */
  ACTOR_LEASE_MS: z.coerce.number().int().min(200).max(120_000).default(5_000),
  /** Actors: unfinished commands one actor may hold; more are refused with 503 `mailbox_full`. */
  ACTOR_MAILBOX_SIZE: z.coerce.number().int().min(1).max(100_000).default(1_000),
  /** Actors: an actor with nothing to do for this long is passivated (its state stays in the store). */
  ACTOR_IDLE_MS: z.coerce.number().int().min(100).max(86_400_000).default(300_000),
  /** Actors: how long a caller waits for a command's reply, failover included, before a retryable 503. */
  ACTOR_ASK_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  /** Actors (clustered): one NATS request's wait; must exceed the slowest command. Timed-out attempts are retried. */
  ACTOR_ATTEMPT_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(5_000),
  /**
   * Session messages older than this many days are deleted (checked hourly, a batch at a time, oldest first);
   * their sessions stay, empty. Unset: every message is kept.
   */
  MESSAGE_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).optional(),
  /** Actors: idempotency keys (with their first reply) remembered per contact. */
  ACTOR_IDEMPOTENCY_KEYS: z.coerce.number().int().min(1).max(10_000).default(100),
  /**
   * Actors (clustered): how long the reply of a command applied under an idempotency key is kept
   * (in PostgreSQL; the contact's state in Redis keeps only a digest of the key). A repeat after
   * this answers 409 `idempotency_reply_expired` and is not applied again.
   */
  ACTOR_REPLY_TTL_HOURS: z.coerce.number().int().min(1).max(24 * 30).default(24),
  /** Live inbox: ping interval; a socket that missed one pong is dropped at the next, so dead ones go within two intervals. */
  INBOX_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  /** Live inbox: unsent bytes per socket past which a slow client is closed (1013). */
  INBOX_MAX_BUFFERED_BYTES: z.coerce.number().int().min(1024).max(256 * 1024 * 1024).default(1024 * 1024),
  /** Live inbox: frames per second one socket may send (bursts of twice as many). */
  INBOX_FRAMES_PER_SECOND: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Live inbox: every socket's session or API key is read again this often (besides the notices of a change and the check of every command). */
  INBOX_CREDENTIAL_RECHECK_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** Web chat: messages one visitor may send per minute (every node counts together when clustered). */
  WEBCHAT_VISITOR_MESSAGES_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(30),
  /** Web chat: visitor requests (starts, sends, history, polls, socket opens) one IP address may make per minute. */
  WEBCHAT_ADDRESS_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  /** Web chat: the longest message a visitor may send, in characters. */
  WEBCHAT_MAX_MESSAGE_CHARS: z.coerce.number().int().min(1).max(4096).default(4096),
  /** Web chat: the largest attachment a visitor or an agent may send, in bytes (default 5 MiB). */
  WEBCHAT_MAX_ATTACHMENT_BYTES: z.coerce.number().int().min(1024).max(16 * 1024 * 1024).default(5 * 1024 * 1024),
});

/** Where a node's Redis is: one server (or a Sentinel-managed primary behind one address), or a Redis Cluster. */
export type RedisTarget = { kind: 'single'; url: string } | { kind: 'cluster'; nodes: string[] };

export type Config = z.infer<typeof configSchema> & {
  mode: 'embedded' | 'clustered';
  /** The node's Redis (from REDIS_URL or REDIS_CLUSTER_NODES); null in embedded mode. */
  redis: RedisTarget | null;
};

export class ConfigError extends Error {
  constructor(readonly issues: { variable: string; message: string }[]) {
    super(
      'invalid configuration:\n' +
        issues.map((i) => `  ${i.variable}: ${i.message}`).join('\n'),
    );
    this.name = 'ConfigError';
  }
}

/** Parses the environment; throws `ConfigError` naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => ({ variable: String(i.path[0] ?? '?'), message: i.message })),
    );
  }
  const cfg = parsed.data;
  if (cfg.REDIS_URL && cfg.REDIS_CLUSTER_NODES) {
    throw new ConfigError([{ variable: 'REDIS_CLUSTER_NODES', message: 'set REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (Redis Cluster), not both' }]);
  }
  const redis: RedisTarget | null = cfg.REDIS_CLUSTER_NODES
    ? { kind: 'cluster', nodes: cfg.REDIS_CLUSTER_NODES }
    : cfg.REDIS_URL
      ? { kind: 'single', url: cfg.REDIS_URL }
      : null;
  // Clustered mode is all three servers; any one of them set asks for it, and each missing one is named.
  const clustered = redis !== null || cfg.NATS_URL !== undefined || cfg.DATABASE_URL !== undefined;
  if (clustered) {
    const missing: { variable: string; message: string }[] = [];
    if (cfg.DATABASE_URL === undefined) missing.push({ variable: 'DATABASE_URL', message: 'required in clustered mode (PostgreSQL holds the records)' });
    if (redis === null) missing.push({ variable: 'REDIS_URL', message: 'required in clustered mode (Redis holds actor state, leases, rate limits and sessions; or REDIS_CLUSTER_NODES)' });
    if (cfg.NATS_URL === undefined) missing.push({ variable: 'NATS_URL', message: 'required in clustered mode (NATS routes commands and carries the event log)' });
    if (missing.length > 0) throw new ConfigError(missing);
  }
  return { ...cfg, mode: clustered ? 'clustered' : 'embedded', redis };
}

/** Default ports of the sandboxes' own origins (a free port each when PORT is 0, as in tests). */
export const SANDBOX_DEFAULT_PORTS = { graph: 12110, stripe: 12111, google: 12120, googleOAuth: 12121 } as const;

export type SandboxOrigin = keyof typeof SANDBOX_DEFAULT_PORTS;

/** The port each sandbox's own origin listens on: its variable, else the default (0 when PORT is 0). */
export function sandboxPort(cfg: Config, which: SandboxOrigin): number {
  const set = { graph: cfg.SANDBOX_GRAPH_PORT, stripe: cfg.SANDBOX_STRIPE_PORT, google: cfg.SANDBOX_GOOGLE_PORT, googleOAuth: cfg.SANDBOX_GOOGLE_OAUTH_PORT }[which];
  if (set !== undefined) return set;
  return cfg.PORT === 0 ? 0 : SANDBOX_DEFAULT_PORTS[which];
}
