import { z } from 'zod';
import { defineRoute, type RouteDef } from '../route.js';
import { docsPage } from '../docs-page.js';
import type { GraphApiInUse } from '../../network/graph-versions.js';

export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency answers; rejects (or times out) otherwise. */
  check(): Promise<void>;
}

const READY_TIMEOUT_MS = 2000;

async function runCheck(c: ReadinessCheck): Promise<'ok' | string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      c.check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), READY_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  } finally {
    clearTimeout(timer);
  }
}

export function systemRoutes(opts: {
  checks: () => ReadinessCheck[];
  openApi: () => Record<string, unknown>;
  shuttingDown: () => boolean;
  /** Each real-network channel's Graph API version and Meta's expiry of it. */
  graphApi?: () => Promise<Record<string, GraphApiInUse>>;
}): RouteDef[] {
  const statusSchema = z.object({
    status: z.string(),
    checks: z.record(z.string(), z.string()).optional(),
    graphApi: z
      .record(z.string(), z.object({ version: z.string(), expiresOn: z.string().nullable() }))
      .meta({ examples: [{ ch_Q8wLr3VnT5kZx2Hb: { version: 'v27.0', expiresOn: null } }] })
      .optional()
      .describe("per WhatsApp channel on the real network: the Graph API version its requests use, and the day Meta retires it (null: not published yet)"),
  });
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'getHealth',
      summary: 'Liveness: the process is up',
      tag: 'Operations',
      auth: 'none',
      responses: { 200: { description: 'up', schema: statusSchema } },
      handler: () => ({ body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'getReadiness',
      summary: 'Readiness: every backing service answers',
      tag: 'Operations',
      auth: 'none',
      responses: { 200: { description: 'ready', schema: statusSchema }, 503: { description: 'not ready', schema: statusSchema } },
      handler: async () => {
        const checks = opts.checks();
        const results = await Promise.all(checks.map(runCheck));
        const byName = Object.fromEntries(checks.map((c, i) => [c.name, results[i]!]));
        const ready = !opts.shuttingDown() && results.every((r) => r === 'ok');
        // Informational: a version near its expiry does not make the node unready (it still sends today).
        const graphApi = opts.graphApi === undefined ? undefined : await opts.graphApi().catch(() => undefined);
        return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : opts.shuttingDown() ? 'shutting_down' : 'not_ready', checks: byName, ...(graphApi === undefined ? {} : { graphApi }) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This API description (OpenAPI 3.1)',
      tag: 'Operations',
      auth: 'none',
      responses: { 200: { description: 'OpenAPI document' } },
      handler: () => ({ body: opts.openApi() }),
    }),
    defineRoute({
      method: 'get',
      path: '/docs',
      operationId: 'getDocs',
      summary: 'Readable API documentation',
      tag: 'Operations',
      auth: 'none',
      responses: { 200: { description: 'HTML page' } },
      handler: ({ res }) => {
        res.type('html').send(docsPage);
        return { status: 200 };
      },
    }),
  ];
}
