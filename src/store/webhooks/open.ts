import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { NodeBacking } from '../backing.js';
import { SecretBox } from '../secret-box.js';
import { sealedWebhookStore } from './sealed.js';
import { createSqliteResourceStore } from '../resources/sqlite.js';
import { createPostgresResourceStore } from '../resources/postgres.js';
import type { ResourceStore } from '../resources/port.js';
import { createSqliteWebhookStore } from './sqlite.js';
import { createPostgresWebhookStore } from './postgres.js';
import type { WebhookStore } from './port.js';

export interface WebhookStores {
  webhooks: WebhookStore;
  resources: ResourceStore;
  close(): Promise<void>;
}

/**
 * The stores behind webhooks and `/api/v1/resource`: clustered, the records
 * in the node's PostgreSQL and the delivery lanes' schedule and leases on its
 * Redis client; the node's SQLite database otherwise. Signing secrets are
 * sealed with the channel-secrets key (`sealed.ts`).
 */
export async function openWebhookStores(config: Config, backing: NodeBacking): Promise<WebhookStores> {
  const retentionMs = config.WEBHOOK_DELIVERY_RETENTION_DAYS * 86_400_000;
  if (backing.kind === 'clustered') {
    const box = config.SECRETS_KEY === undefined ? null : SecretBox.fromString(config.SECRETS_KEY);
    return {
      webhooks: sealedWebhookStore(createPostgresWebhookStore(backing.pg, backing.redis.client, { prefix: config.KEY_PREFIX, retentionMs }), box),
      resources: createPostgresResourceStore(backing.pg),
      // The pool and the client are the node's: closed by whoever opened them.
      close: async () => {},
    };
  }
  const memory = config.DATA_DIR === ':memory:';
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
