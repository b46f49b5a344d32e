import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { NodeBacking } from '../backing.js';
import { SecretBox } from '../secret-box.js';
import { createSqliteToolRepo } from './sqlite.js';
import { createPostgresToolRepo } from './postgres.js';
import type { ToolRepo } from './port.js';

/**
 * The tool store: clustered, the records in the node's PostgreSQL and what
 * expires (OAuth states, refresh locks) on its Redis client; the node's
 * SQLite database otherwise. Credentials are sealed with the same key
 * as channel secrets (SECRETS_KEY, or DATA_DIR/messaging/secrets.key in
 * embedded mode), with SECRETS_KEY_PREVIOUS for rotation. Null in clustered
 * mode without SECRETS_KEY: connected tools are then off.
 */
export async function openToolStore(config: Config, backing: NodeBacking): Promise<ToolRepo | null> {
  const memory = config.DATA_DIR === ':memory:';
  if (backing.kind === 'clustered') {
    if (config.SECRETS_KEY === undefined) return null;
    const box = SecretBox.fromString(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS);
    // The node's pool and client: closed by whoever opened them.
    return createPostgresToolRepo(backing.pg, backing.redis.client, config.KEY_PREFIX, box);
  }
  const box = SecretBox.load(config.SECRETS_KEY, memory ? null : join(config.DATA_DIR, 'messaging'), config.SECRETS_KEY_PREVIOUS)!;
  return createSqliteToolRepo(backing.db, box);
}
