import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { SqliteDb } from './sqlite/db.js';
import type { RedisClient } from './redis/client.js';
import type { NodeBacking } from './backing.js';
import { SecretBox } from './secret-box.js';
import type { ChannelRepo } from './channels/port.js';
import type { TemplateRepo } from './templates/port.js';
import type { CreditRepo } from './credits/port.js';
import type { RateLimiter } from './ratelimit/port.js';
import type { SessionMessageRepo } from './session-messages/port.js';
import type { ConversationIndexRepo } from './conversations/port.js';
import { createSqliteConversationIndex } from './conversations/sqlite.js';
import { createRedisConversationIndex } from './conversations/redis.js';
import type { RequestKeyRepo } from './request-keys/port.js';
import { createSqliteRequestKeyRepo } from './request-keys/sqlite.js';
import { createRedisRequestKeyRepo } from './request-keys/redis.js';
import { createSqliteChannelRepo } from './channels/sqlite.js';
import { createRedisChannelRepo } from './channels/redis.js';
import { createSqliteTemplateRepo } from './templates/sqlite.js';
import { createRedisTemplateRepo } from './templates/redis.js';
import { createSqliteCreditRepo } from './credits/sqlite.js';
import { createRedisCreditRepo } from './credits/redis.js';
import { createMemoryRateLimiter } from './ratelimit/memory.js';
import { createRedisRateLimiter } from './ratelimit/redis.js';
import { createSqliteSessionMessageRepo } from './session-messages/sqlite.js';
import { createRedisSessionMessageRepo } from './session-messages/redis.js';

/** The stores behind chat messaging. */
export interface MessagingStores {
  kind: 'embedded' | 'redis';
  channels: ChannelRepo;
  templates: TemplateRepo;
  credits: CreditRepo;
  rateLimiter: RateLimiter;
  messages: SessionMessageRepo;
  /** The inbox's list of conversations, written by the conversation actors. */
  conversations: ConversationIndexRepo;
  /** Which body each send's idempotency key came with. */
  requestKeys: RequestKeyRepo;
  /** The node's SQLite database (embedded mode) or the node's Redis client (clustered), for the sandbox network's own state. */
  backing: { db: SqliteDb } | { redis: RedisClient; prefix: string };
  /** False when no key is available (clustered without SECRETS_KEY): WhatsApp channels are refused. */
  secretsKey: boolean;
  close(): Promise<void>;
}

/**
 * Opens them: on the node's Redis client in clustered mode (where
 * WhatsApp channels need `SECRETS_KEY`), the node's SQLite database otherwise, with the
 * secrets key from `SECRETS_KEY` or DATA_DIR/messaging/secrets.key.
 */
export async function openMessagingStores(config: Config, clock: Clock, backing: NodeBacking): Promise<MessagingStores> {
  const memory = config.DATA_DIR === ':memory:';
  const dir = memory ? null : join(config.DATA_DIR, 'messaging');
  if (backing.kind === 'clustered') {
    // Without a key the service runs, but chat-network channels cannot be stored or read (a clear 503 says why).
    const box = config.SECRETS_KEY === undefined ? null : SecretBox.fromString(config.SECRETS_KEY);
    const redis = backing.redis.client;
    const p = config.KEY_PREFIX;
    return {
      kind: 'redis',
      channels: createRedisChannelRepo(redis, p, box),
      templates: createRedisTemplateRepo(redis, p),
      credits: createRedisCreditRepo(redis, p),
      rateLimiter: createRedisRateLimiter(redis, p),
      messages: createRedisSessionMessageRepo(redis, p),
      conversations: createRedisConversationIndex(redis, p),
      requestKeys: createRedisRequestKeyRepo(redis, p),
      backing: { redis, prefix: p },
      secretsKey: box !== null,
      // The client is the node's: closed by whoever opened it.
      close: async () => {},
    };
  }
  const box = SecretBox.load(config.SECRETS_KEY, dir)!;
  if (backing.kind !== 'sqlite') throw new Error('REDIS_URL is needed for the Redis backing');
  const db = backing.db;
  return {
    kind: 'embedded',
    channels: createSqliteChannelRepo(db, box),
    templates: createSqliteTemplateRepo(db),
    credits: createSqliteCreditRepo(db, clock),
    rateLimiter: createMemoryRateLimiter(clock),
    messages: createSqliteSessionMessageRepo(db),
    conversations: createSqliteConversationIndex(db),
    requestKeys: createSqliteRequestKeyRepo(db, clock),
    backing: { db },
    secretsKey: true,
    // The node's database is closed by whoever opened it (after every module stopped).
    close: () => db.sync(),
  };
}
