import { createHash, timingSafeEqual } from 'node:crypto';
import type { MetricsRegistry } from '../../metrics.js';
import { AppError } from '../../errors.js';
import { errorSchema } from '../../app/schemas.js';
import { bearerToken } from '../app.js';
import { defineRoute, type RouteDef } from '../route.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * `GET /metrics` in the Prometheus text format: counts and timings, no organization data. Public
 * unless `token` (METRICS_TOKEN) is set; then only `Authorization: Bearer <token>` gets it.
 */
export function metricsRoutes(metrics: MetricsRegistry, token?: string): RouteDef[] {
  const expected = token === undefined ? null : digest(token);
  return [
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'getMetrics',
      summary: 'Prometheus metrics of this node (HTTP, webhooks, template sends, event lag, actors, inbox, process); with METRICS_TOKEN set, only with `Authorization: Bearer <METRICS_TOKEN>`',
      tag: 'Operations',
      auth: 'none',
      responses: {
        200: { description: 'Prometheus text exposition format 0.0.4 (names: docs/metrics.md)' },
        401: { description: 'METRICS_TOKEN is set and the request does not carry it', schema: errorSchema },
      },
      handler: async ({ req, res }) => {
        if (expected !== null) {
          const given = bearerToken(req);
          // Compared as digests: equal lengths, so timingSafeEqual never throws and the length is not revealed.
          if (given === undefined || !timingSafeEqual(digest(given), expected)) {
            res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
            throw new AppError(401, 'unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
          }
        }
        res.setHeader('Content-Type', metrics.contentType);
        res.send(await metrics.render());
        return { status: 200 };
      },
    }),
  ];
}
