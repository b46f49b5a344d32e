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
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  /** Public base URL of the REST API, used in links (Deprecation `Link`, MCP URLs). */
  PUBLIC_URL: optionalUrl,
  DATA_DIR: z.string().min(1).default('./data'),
  REDIS_URL: optionalUrl,
  NATS_URL: z.string().trim().optional().transform((v) => (v === '' ? undefined : v)),
  /** Prefix of every Redis key and NATS subject, so several deployments can share servers. */
  KEY_PREFIX: z.string().regex(/^[a-z0-9_-]{1,32}$/i).default('sb'),
  NODE_ID: z.string().regex(/^[a-zA-Z0-9_.-]{1,64}$/).optional(),
  /** Guards the operator (admin) API. Unset in embedded mode: generated on first start. */
  OPERATOR_TOKEN: z.string().min(16).optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Largest JSON request body accepted. */
  BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/i).default('256kb'),
  /** How long graceful shutdown waits for in-flight requests before closing them. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
  /** Seed a demo organization on the first embedded start (when nothing is stored yet). */
  SEED_DEMO: bool.default(true),
});

export type Config = z.infer<typeof configSchema> & {
  mode: 'embedded' | 'clustered';
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
  if (cfg.NATS_URL && !cfg.REDIS_URL) {
    throw new ConfigError([{ variable: 'REDIS_URL', message: 'required when NATS_URL is set (clustered mode keeps state in Redis)' }]);
  }
  return { ...cfg, mode: cfg.REDIS_URL ? 'clustered' : 'embedded' };
}
