import type { Config } from '../config.js';
import type { EventLog } from '../events/index.js';
import type { Logger } from '../log.js';
import type { WebhookStore } from '../store/index.js';
import { WebhookDispatcher, type DispatchObserver } from './dispatcher.js';
import { WebhookHttpClient, type Resolver } from './http-client.js';
import { WebhookRegistrations } from './registrations.js';

export { blockedReason, checkWebhookUrl, isLoopback, type AddressPolicy } from './address-guard.js';
export { deliveryId, registrationMatches, signingSecrets, webhookBody, WebhookDispatcher, type AttemptOutcome, type DispatchObserver, type WebhookDispatcherOptions } from './dispatcher.js';
export { parseRetryAfter, WebhookHttpClient, type HttpOutcome, type Resolver, type WebhookHttpOptions } from './http-client.js';
export { publicDelivery, publicRegistration, SUBSCRIBABLE_EVENTS, WebhookRegistrations, type PublicRegistration, type WebhookRegistrationsOptions } from './registrations.js';
export { judge, nextAttemptAt, retryDelayMs, type RetrySettings, type Verdict } from './retry-policy.js';
export { generateSecret, signRequest, standardSignature, verifyXSignature, xSignature, type SignedHeaders } from './signing.js';

export interface Webhooks {
  registrations: WebhookRegistrations;
  dispatcher: WebhookDispatcher;
  http: WebhookHttpClient;
  /** Starts fan-out and delivery on this node. */
  start(): Promise<void>;
  /** Stops delivery (requests in flight get `graceMs`) and closes sockets. */
  stop(graceMs?: number): Promise<void>;
}

/** Wires the webhook feature from config: one HTTP client, the registrations service and this node's dispatcher. */
export function createWebhooks(
  config: Config,
  deps: { store: WebhookStore; events: EventLog; log: Logger; resolver?: Resolver; observer?: DispatchObserver },
): Webhooks {
  const policy = { allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK };
  const http = new WebhookHttpClient({ policy, timeoutMs: config.WEBHOOK_TIMEOUT_MS, resolver: deps.resolver });
  const retry = { baseMs: config.WEBHOOK_RETRY_BASE_MS, maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS, windowMs: config.WEBHOOK_RETRY_WINDOW_MS };
  const dispatcher = new WebhookDispatcher({
    store: deps.store,
    events: deps.events,
    http,
    retry,
    concurrencyPerEndpoint: config.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
    maxActiveEndpoints: config.WEBHOOK_MAX_ACTIVE_ENDPOINTS,
    // The lease must outlive one attempt comfortably; it is renewed every third of it.
    leaseMs: Math.max(2_000, config.WEBHOOK_TIMEOUT_MS * 2),
    nodeId: config.NODE_ID,
    log: deps.log.child({ component: 'webhooks' }),
    observer: deps.observer,
  });
  const registrations = new WebhookRegistrations({
    store: deps.store,
    http,
    policy,
    retryWindowMs: retry.windowMs,
    onScheduled: (lane) => dispatcher.scheduled(lane),
  });
  return {
    registrations,
    dispatcher,
    http,
    start: () => dispatcher.start(),
    async stop(graceMs) {
      await dispatcher.stop(graceMs);
      http.close();
    },
  };
}
