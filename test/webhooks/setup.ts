import { randomUUID } from 'node:crypto';
import { EmbeddedEventLog, type DomainEvent, type EventLog } from '../../src/events/index.js';
import { createSqliteWebhookStore, openNodeDbIn, type WebhookStore } from '../../src/store/index.js';
import { WebhookDispatcher, WebhookHttpClient, WebhookRegistrations, type Resolver, type RetrySettings } from '../../src/webhooks/index.js';
import type { TestReceiver } from './receiver.js';

export interface Harness {
  store: WebhookStore;
  events: EventLog;
  http: WebhookHttpClient;
  registrations: WebhookRegistrations;
  dispatcher: WebhookDispatcher;
  register(org: string, receiver: TestReceiver, events?: string[]): Promise<{ id: string; secret: string }>;
  publish(org: string, type?: string, data?: unknown): Promise<DomainEvent>;
  close(): Promise<void>;
}

export const fastRetry: RetrySettings = { baseMs: 50, maxDelayMs: 400, windowMs: 60_000 };

/** An in-process webhook stack over the embedded store and log (in memory). */
export async function startHarness(opts: { timeoutMs?: number; retry?: Partial<RetrySettings>; allowLoopback?: boolean; resolver?: Resolver; concurrency?: number; store?: WebhookStore; events?: EventLog } = {}): Promise<Harness> {
  const store = opts.store ?? createSqliteWebhookStore(await openNodeDbIn(null));
  const events = opts.events ?? (await EmbeddedEventLog.open(null));
  const policy = { allowLoopback: opts.allowLoopback ?? true };
  const http = new WebhookHttpClient({ policy, timeoutMs: opts.timeoutMs ?? 2000, resolver: opts.resolver });
  const retry = { ...fastRetry, ...opts.retry };
  const dispatcher = new WebhookDispatcher({
    store, events, http, retry,
    concurrencyPerEndpoint: opts.concurrency ?? 4,
    maxActiveEndpoints: 64,
    leaseMs: 5000,
    pollMs: 50,
  });
  const registrations = new WebhookRegistrations({ store, http, policy, retryWindowMs: retry.windowMs, onScheduled: (l) => dispatcher.scheduled(l) });
  await dispatcher.start();
  return {
    store, events, http, registrations, dispatcher,
    async register(org, receiver, evs = ['*']) {
      const reg = await registrations.create(org, { url: receiver.url, events: evs });
      receiver.setSecret(reg.secret);
      return { id: reg.id, secret: reg.secret };
    },
    async publish(org, type = 'resource.created', data = { n: 1 }) {
      const e: DomainEvent = { id: randomUUID(), type, organizationId: org, createdAt: new Date().toISOString(), data };
      await events.publish(e);
      return e;
    },
    async close() {
      await dispatcher.stop(100);
      await events.close();
      http.close();
    },
  };
}
