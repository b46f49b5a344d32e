import { join } from 'node:path';
import type { Config } from '../config.js';
import { openNodeRedis, type NodeRedis } from './redis/client.js';
import { SqliteDb } from './sqlite/db.js';
import { KEY_VALUE_MIGRATIONS, NODE_MIGRATIONS, SANDBOX_MIGRATIONS } from './sqlite/schema.js';
import { importJsonStore, importKeyValueJsonStore, importSandboxJsonStore } from './sqlite/import.js';
import { PgDb } from './postgres/db.js';
import { foldTextOnCommit } from './search/sqlite.js';
import { NODE_PG_MIGRATIONS } from './postgres/schema.js';

/**
 * What a node keeps its state in, opened once at start and handed to every
 * module, closed by whoever opened it after every module stopped. Embedded:
 * the node's one SQLite database (`DATA_DIR/switchboard.db`, or an in-memory
 * one with `DATA_DIR=:memory:`). Clustered: the node's PostgreSQL pool (every
 * record: what accumulates with use) and its one Redis client (a single
 * server or a Redis Cluster: what is bounded or expires), shared by every
 * store. docs/storage.md says which store lives where, and why.
 */
export type NodeBacking = { kind: 'sqlite'; db: SqliteDb } | { kind: 'clustered'; pg: PgDb; redis: NodeRedis };

/** The path of the node's database under `dataDir`; null for `:memory:`. */
export function nodeDbPath(dataDir: string): string | null {
  return dataDir === ':memory:' ? null : join(dataDir, 'switchboard.db');
}

/** Opens the node's SQLite database: migrations applied, an older JSON store under DATA_DIR imported once. */
export function openNodeDb(config: Pick<Config, 'DATA_DIR' | 'SQLITE_SYNCHRONOUS'>): SqliteDb {
  const file = nodeDbPath(config.DATA_DIR);
  const db = SqliteDb.open(file, {
    migrations: NODE_MIGRATIONS,
    synchronous: config.SQLITE_SYNCHRONOUS,
    afterMigrate: file === null ? undefined : (db) => importJsonStore(db, config.DATA_DIR),
  });
  foldTextOnCommit(db);
  return db;
}

export async function openNodeBacking(config: Config): Promise<NodeBacking> {
  if (config.mode === 'embedded' || config.redis === null || config.DATABASE_URL === undefined) return { kind: 'sqlite', db: openNodeDb(config) };
  const name = `switchboard-${config.NODE_ID ?? process.pid}`;
  const pg = await PgDb.open(config.DATABASE_URL, { migrations: NODE_PG_MIGRATIONS, schema: config.DATABASE_SCHEMA, poolSize: config.DATABASE_POOL_SIZE, applicationName: name });
  try {
    return { kind: 'clustered', pg, redis: await openNodeRedis(config.redis, name) };
  } catch (e) {
    await pg.close();
    throw e;
  }
}

/** The node's database in `dir` (`dir/switchboard.db`), or in memory for null: what tests and benchmarks open. */
export function openNodeDbIn(dir: string | null, synchronous?: 'FULL' | 'NORMAL'): SqliteDb {
  return openNodeDb({ DATA_DIR: dir ?? ':memory:', SQLITE_SYNCHRONOUS: synchronous ?? 'FULL' });
}

/** Closes what `openNodeBacking` opened, after every module using it stopped. */
export async function closeNodeBacking(backing: NodeBacking): Promise<void> {
  if (backing.kind === 'sqlite') await backing.db.close();
  else await Promise.all([backing.redis.close(), backing.pg.close()]);
}

/**
 * The sandbox network's own database, `DATA_DIR/sandbox-network.db` (null:
 * in memory); an older JSON store of it is imported once.
 */
export function openSandboxDb(dataDir: string | null, synchronous?: 'FULL' | 'NORMAL'): SqliteDb {
  return SqliteDb.open(dataDir === null ? null : join(dataDir, 'sandbox-network.db'), {
    migrations: SANDBOX_MIGRATIONS,
    synchronous,
    afterMigrate: dataDir === null ? undefined : (db) => importSandboxJsonStore(db, dataDir),
  });
}

/**
 * A database of key-value collections at `file` (null: in memory), importing
 * once the older JSON store in `oldJsonDir` when there is one.
 */
export function openKeyValueDb(file: string | null, oldJsonDir: string | null, synchronous?: 'FULL' | 'NORMAL'): SqliteDb {
  return SqliteDb.open(file, {
    migrations: KEY_VALUE_MIGRATIONS,
    synchronous,
    afterMigrate: oldJsonDir === null ? undefined : (db) => importKeyValueJsonStore(db, oldJsonDir),
  });
}
