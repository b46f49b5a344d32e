import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Config } from './config.js';
import { systemClock, type Clock } from './clock.js';
import { createLogger, type Logger } from './log.js';
import { connectRedis, createEmbeddedStore, createRedisStore, EmbeddedDb, type Store } from './store/index.js';
import { AccountService } from './app/accounts.js';
import { TicketService } from './app/tickets.js';
import { OperatorAuth } from './app/operator.js';
import { demoBanner, seedDemo, type DemoCredentials } from './app/bootstrap.js';
import { createHttpApp } from './http/app.js';
import { buildOpenApi } from './http/openapi.js';
import type { RouteDef } from './http/route.js';
import { adminRoutes } from './http/routes/admin.js';
import { systemRoutes, type ReadinessCheck } from './http/routes/system.js';
import { ticketRoutes } from './http/routes/tickets.js';

export const VERSION = '0.1.0';

/** Everything one node runs, wired once at start. */
export interface Services {
  config: Config;
  log: Logger;
  clock: Clock;
  store: Store;
  accounts: AccountService;
  tickets: TicketService;
  operator: OperatorAuth;
  readiness: ReadinessCheck[];
  /** Run in reverse order on shutdown, after the HTTP server stopped taking requests. */
  closers: (() => Promise<void>)[];
}

export interface ServiceOptions {
  log?: Logger;
  clock?: Clock;
}

async function openStore(config: Config): Promise<Store> {
  if (config.REDIS_URL) {
    const client = await connectRedis(config.REDIS_URL, `switchboard-${config.NODE_ID ?? process.pid}`);
    return createRedisStore(client, config.KEY_PREFIX);
  }
  const db = await EmbeddedDb.open(config.DATA_DIR === ':memory:' ? null : config.DATA_DIR);
  return createEmbeddedStore(db);
}

export async function createServices(config: Config, opts: ServiceOptions = {}): Promise<Services> {
  const log = opts.log ?? createLogger(config.LOG_LEVEL, { node: config.NODE_ID });
  const clock = opts.clock ?? systemClock;
  const closers: Services['closers'] = [];
  const store = await openStore(config);
  closers.push(() => store.close());
  const accounts = new AccountService(store, clock);
  const tickets = new TicketService(store, clock);
  const operator = await OperatorAuth.load(store, config.OPERATOR_TOKEN);
  const readiness: ReadinessCheck[] = [{ name: store.kind === 'redis' ? 'redis' : 'store', check: () => store.ping() }];
  return { config, log, clock, store, accounts, tickets, operator, readiness, closers };
}

export function buildRoutes(s: Services, state: { shuttingDown: boolean }): RouteDef[] {
  const routes: RouteDef[] = [...ticketRoutes(s.tickets), ...adminRoutes(s.accounts)];
  let openApi: Record<string, unknown> | undefined;
  routes.push(
    ...systemRoutes({
      checks: () => s.readiness,
      shuttingDown: () => state.shuttingDown,
      openApi: () => (openApi ??= buildOpenApi(routes, { version: VERSION, serverUrl: s.config.PUBLIC_URL })),
    }),
  );
  return routes;
}

export function buildApp(s: Services, state = { shuttingDown: false }): Express {
  return createHttpApp({
    routes: buildRoutes(s, state),
    log: s.log,
    bodyLimit: s.config.BODY_LIMIT,
    authenticate: (key) => s.accounts.authenticate(key),
    authenticateOperator: (token) => s.operator.authenticate(token),
    publicUrl: s.config.PUBLIC_URL,
  });
}

export interface RunningServer {
  services: Services;
  server: Server;
  url: string;
  port: number;
  demo: DemoCredentials | null;
  /** Graceful: stop accepting, finish in-flight requests (up to the timeout), then close services. */
  close(): Promise<void>;
}

export async function startServer(config: Config, opts: ServiceOptions = {}): Promise<RunningServer> {
  const services = await createServices(config, opts);
  const state = { shuttingDown: false };
  let demo: DemoCredentials | null = null;
  if (config.mode === 'embedded' && config.OPERATOR_TOKEN === undefined && config.SEED_DEMO) {
    demo = await seedDemo(services.store, services.accounts, services.operator);
  }
  const app = buildApp(services, state);
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  // While draining, a connection whose last response went out is closed at
  // once instead of idling until the shutdown timeout.
  server.on('request', (_req, res) => {
    res.once('finish', () => {
      if (state.shuttingDown) setImmediate(() => server.closeIdleConnections());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = config.PUBLIC_URL ?? `http://localhost:${port}`;
  if (demo) process.stdout.write(demoBanner(demo, url));
  services.log.info('listening', { port, mode: config.mode });

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      state.shuttingDown = true;
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
      await drained;
      clearTimeout(timer);
      for (const c of [...services.closers].reverse()) {
        try {
          await c();
        } catch (err) {
          services.log.error('error while closing', { err });
        }
      }
      services.log.info('stopped');
    })());
  return { services, server, url, port, demo, close };
}
