import { LAG_BUCKETS, type MetricsRegistry } from './metrics.js';
import type { DispatchObserver } from './webhooks/index.js';
import type { TemplateSendObserver } from './messaging/index.js';

/** Methods kept as a label value; anything else is counted as `other` (a label must not take arbitrary values). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The observers the service's parts report to, each writing its metrics (names: docs/metrics.md). */
export interface ServiceObservers {
  /** One answered HTTP request: `route` is the route's template (`/v1/tickets/:ticketId`), never the raw path. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  webhooks: DispatchObserver;
  templates: TemplateSendObserver;
}

export function serviceObservers(m: MetricsRegistry): ServiceObservers {
  const labels = ['method', 'route', 'status'] as const;
  const requests = m.counter('switchboard_http_requests_total', 'HTTP requests answered, by method, route template and status code.', labels);
  const duration = m.histogram('switchboard_http_request_duration_seconds', 'Time to answer an HTTP request (until the response was handed to the socket), by method, route template and status code.', labels);
  const attempts = m.counter('switchboard_webhook_deliveries_total', 'Webhook delivery attempts by outcome: succeeded, retry (will be tried again), failed (for good), gave_up (out of retries), disabled (410 Gone).', ['outcome']);
  const attemptDuration = m.histogram('switchboard_webhook_delivery_duration_seconds', 'Time of one webhook delivery attempt (the HTTP exchange with the receiver), by outcome.', ['outcome']);
  const lag = m.histogram('switchboard_event_lag_seconds', 'Time from an event being created to a consumer on this node handling it, by consumer (webhooks: the fan-out into deliveries).', ['consumer'], LAG_BUCKETS);
  const sends = m.counter('switchboard_template_sends_total', 'Template sends by category and outcome: sent, rejected (by the network), unavailable (the network did not answer), insufficient_credits.', ['category', 'outcome']);
  const credits = m.counter('switchboard_template_credits_total', 'Credits charged for template sends, by category (a send the network may have taken stays charged).', ['category']);
  return {
    httpRequest(method, route, status, seconds) {
      const l = { method: METHODS.has(method) ? method : 'other', route, status: String(status) };
      requests.inc(l);
      duration.observe(l, seconds);
    },
    webhooks: {
      attempt(outcome, seconds) {
        attempts.inc({ outcome });
        attemptDuration.observe({ outcome }, seconds);
      },
      eventLag(seconds) {
        lag.observe({ consumer: 'webhooks' }, seconds);
      },
    },
    templates: {
      templateSend(category, outcome, charged) {
        sends.inc({ category, outcome });
        if (charged > 0) credits.inc({ category }, charged);
      },
    },
  };
}
