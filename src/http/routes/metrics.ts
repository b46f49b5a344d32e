import { PROMETHEUS_CONTENT_TYPE, type MetricsRegistry } from '../../metrics.js';
import { defineRoute, type RouteDef } from '../route.js';

/** `GET /metrics` in the Prometheus text format. Unauthenticated, like /readyz: counts only, no organization data. */
export function metricsRoutes(metrics: MetricsRegistry): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics of this node (actors, mailboxes, partitions, command latency)',
      tag: 'Operations',
      auth: 'none',
      responses: { 200: { description: 'Prometheus text exposition format 0.0.4' } },
      handler: ({ res }) => {
        res.setHeader('Content-Type', PROMETHEUS_CONTENT_TYPE);
        res.send(metrics.render());
        return { status: 200 };
      },
    }),
  ];
}
