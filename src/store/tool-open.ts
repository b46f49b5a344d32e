import { join } from 'node:path';
import type { Config } from '../config.js';
import { EmbeddedDb } from './embedded-db.js';
import { connectRedis } from './redis-client.js';
import { SecretBox } from './secret-box.js';
import { createEmbeddedToolRepo } from './tool-embedded.js';
import { createRedisToolRepo } from './tool-redis.js';
import type { ToolRepo } from './tool-types.js';

/**
 * The tool store: its own Redis connection in clustered mode, an EmbeddedDb
 * under DATA_DIR/tools otherwise. Credentials are sealed with the same key
 * as channel secrets (SECRETS_KEY, or DATA_DIR/messaging/secrets.key in
 * embedded mode), with SECRETS_KEY_PREVIOUS for rotation. Null in clustered
 * mode without SECRETS_KEY: connected tools are then off.
 */
export async function openToolStore(config: Config): Promise<ToolRepo | null> {
  const memory = config.DATA_DIR === ':memory:';
  if (config.REDIS_URL) {
    if (config.SECRETS_KEY === undefined) return null;
    const box = SecretBox.fromString(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS);
    const redis = await connectRedis(config.REDIS_URL, `switchboard-tools-${config.NODE_ID ?? process.pid}`);
    return createRedisToolRepo(redis, config.KEY_PREFIX, box, true);
  }
  const box = SecretBox.load(config.SECRETS_KEY, memory ? null : join(config.DATA_DIR, 'messaging'), config.SECRETS_KEY_PREVIOUS)!;
  const db = await EmbeddedDb.open(memory ? null : join(config.DATA_DIR, 'tools'));
  return createEmbeddedToolRepo(db, box);
}
