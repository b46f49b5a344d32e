/**
 * `storage import-redis`: copies a clustered deployment's records from the
 * layout that kept every record in Redis into PostgreSQL, then checks every
 * one of them (docs/storage.md, "Moving a clustered deployment from Redis to
 * PostgreSQL"). It reads the service's own configuration: DATABASE_URL,
 * DATABASE_SCHEMA, REDIS_URL or REDIS_CLUSTER_NODES, KEY_PREFIX. Redis is
 * only read, never written.
 *
 *   --verify-only      check, copy nothing
 *   --remove-missing   also delete rows whose record left Redis since an
 *                      earlier run (relayed outbox entries, deleted
 *                      webhooks, resources, tools): for the final run
 *
 * Exit code 0 when every record is in PostgreSQL as in Redis, 1 otherwise.
 */
import { ConfigError, loadConfig } from '../config.js';
import type { LocalContext } from './local-command.js';
import { table } from './table.js';

export async function importRedisCommand(ctx: LocalContext): Promise<number> {
  let config;
  try {
    // The import never talks to NATS: a configuration without it is fine here.
    config = loadConfig({ ...ctx.env, NATS_URL: ctx.env.NATS_URL || 'nats://unused.invalid:4222' });
  } catch (e) {
    if (e instanceof ConfigError) {
      ctx.err(e.message);
      return 2;
    }
    throw e;
  }
  if (config.DATABASE_URL === undefined || config.redis === null) {
    ctx.err('set DATABASE_URL (the PostgreSQL to copy into) and REDIS_URL or REDIS_CLUSTER_NODES (the Redis to copy from), as for the clustered service');
    return 2;
  }
  const { PgDb } = await import('../store/postgres/db.js');
  const { NODE_PG_MIGRATIONS } = await import('../store/postgres/schema.js');
  const { openNodeRedis } = await import('../store/redis/client.js');
  const { importRedisRecords, redisImportSource, verifyRedisImport } = await import('../store/redis-import/index.js');
  const db = await PgDb.open(config.DATABASE_URL, { migrations: NODE_PG_MIGRATIONS, schema: config.DATABASE_SCHEMA, poolSize: 4, applicationName: 'switchboard-import-redis' });
  try {
    const redis = await openNodeRedis(config.redis, 'switchboard-import-redis');
    try {
      const src = redisImportSource(redis, config.KEY_PREFIX);
      const verifyOnly = ctx.flags['verify-only'] === 'true';
      const imported = verifyOnly ? null : await importRedisRecords(src, db, { removeMissing: ctx.flags['remove-missing'] === 'true', log: ctx.json ? undefined : ctx.err });
      const verification = await verifyRedisImport(src, db);
      if (ctx.json) {
        ctx.out(JSON.stringify({ imported, verification }));
      } else {
        if (imported !== null) ctx.out(`Copied from Redis (prefix ${config.KEY_PREFIX}) into PostgreSQL (schema ${config.DATABASE_SCHEMA}):\n\n${table(imported as unknown as Record<string, unknown>[], ['table', 'read', 'inserted', 'updated', 'unchanged', 'refused', 'removed'])}\n`);
        ctx.out(`Verification (every Redis record read again and looked up in PostgreSQL):\n\n${table(verification.tables as unknown as Record<string, unknown>[], ['table', 'checked', 'missing', 'different', 'extra'])}\n`);
        if (verification.total === 0) ctx.out('Every record is in PostgreSQL as it is in Redis.');
        else {
          ctx.out(`${verification.total} mismatch(es)${verification.total > verification.mismatches.length ? `, the first ${verification.mismatches.length}` : ''}:`);
          for (const m of verification.mismatches) ctx.out(`  ${m.problem.padEnd(9)} ${m.table} ${m.key.join(' ')}`);
          if (verification.tables.some((t) => t.extra > 0)) ctx.out('extra: rows whose record left Redis since an earlier run; run again with --remove-missing (only while no node of the new build runs).');
        }
      }
      return verification.total === 0 ? 0 : 1;
    } finally {
      await redis.close();
    }
  } finally {
    await db.close();
  }
}
