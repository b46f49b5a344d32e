import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { NodeBacking } from '../backing.js';
import { SecretBox } from '../secret-box.js';
import { sealedWebhookStore } from './sealed.js';
import { createSqliteResourceStore } from '../resources/sqlite.js';
import { createRedisResourceStore } from '../resources/redis.js';
import type { ResourceStore } from '../resources/port.js';
import { createSqliteWebhookStore } from './sqlite.js';
import { createRedisWebhookStore } from './redis.js';
import type { WebhookStore } from './port.js';

export interface WebhookStores {
  webhooks: WebhookStore;
  resources: ResourceStore;
  close(): Promise<void>;
}

/**
 * The stores behind webhooks and `/api/v1/resource`: on the node's Redis
 * client in clustered mode, the node's SQLite database otherwise.
 * Signing secrets are sealed
 * with the channel-secrets key (`webhook-sealed.ts`).
 */
export async function openWebhookStores(config: Config, backing: NodeBacking): Promise<WebhookStores> {
  const retentionMs = config.WEBHOOK_DELIVERY_RETENTION_DAYS * 86_400_000;
  if (backing.kind === 'clustered') {
    const client = backing.redis.client;
    const box = config.SECRETS_KEY === undefined ? null : SecretBox.fromString(config.SECRETS_KEY);
    return {
      webhooks: sealedWebhookStore(createRedisWebhookStore(client, config.KEY_PREFIX, { retentionMs }), box),
      resources: createRedisResourceStore(client, config.KEY_PREFIX),
      // The client is the node's: closed by whoever opened it.
      close: async () => {},
    };
  }
  const memory = config.DATA_DIR === ':memory:';
  if (backing.kind !== 'sqlite') throw new Error('REDIS_URL is needed for the Redis backing');
  const db = backing.db;
  // The key that seals channel credentials (DATA_DIR/messaging/secrets.key unless SECRETS_KEY is set).
  const box = SecretBox.load(config.SECRETS_KEY, memory ? null : join(config.DATA_DIR, 'messaging'));
  return {
    webhooks: sealedWebhookStore(createSqliteWebhookStore(db, { retentionMs }), box),
    resources: createSqliteResourceStore(db),
    // The node's database is closed by whoever opened it (after every module stopped).
    close: () => db.sync(),
  };
}
