import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { SqliteDb } from './sqlite/db.js';
import type { RedisClient } from './redis/client.js';
import type { PgDb } from './postgres/db.js';
import type { NodeBacking } from './backing.js';
import { SecretBox } from './secret-box.js';
import type { ChannelRepo } from './channels/port.js';
import type { TemplateRepo } from './templates/port.js';
import type { CreditRepo } from './credits/port.js';
import type { RateLimiter } from './ratelimit/port.js';
import type { SessionMessageRepo } from './session-messages/port.js';
import type { ConversationIndexRepo } from './conversations/port.js';
import type { LabelRepo } from './labels/port.js';
import { createSqliteLabelRepo } from './labels/sqlite.js';
import { createPostgresLabelRepo } from './labels/postgres.js';
import { createSqliteConversationIndex } from './conversations/sqlite.js';
import { createPostgresConversationIndex } from './conversations/postgres.js';
import type { AutomationRuleRepo } from './automation/port.js';
import { createSqliteAutomationRuleRepo } from './automation/sqlite.js';
import { createPostgresAutomationRuleRepo } from './automation/postgres.js';
import type { RequestKeyRepo } from './request-keys/port.js';
import type { SearchIndex } from './search/port.js';
import { createSqliteSearchIndex } from './search/sqlite.js';
import { createPostgresSearchIndex } from './search/postgres.js';
import { createSqliteRequestKeyRepo } from './request-keys/sqlite.js';
import { createRedisRequestKeyRepo } from './request-keys/redis.js';
import { createSqliteChannelRepo } from './channels/sqlite.js';
import { createPostgresChannelRepo } from './channels/postgres.js';
import { createSqliteTemplateRepo } from './templates/sqlite.js';
import { createPostgresTemplateRepo } from './templates/postgres.js';
import { createSqliteCreditRepo } from './credits/sqlite.js';
import { createPostgresCreditRepo } from './credits/postgres.js';
import { createMemoryRateLimiter } from './ratelimit/memory.js';
import { createRedisRateLimiter } from './ratelimit/redis.js';
import { createSqliteSessionMessageRepo } from './session-messages/sqlite.js';
import { createPostgresSessionMessageRepo } from './session-messages/postgres.js';
import type { VisitorRepo } from './visitors/port.js';
import { createSqliteVisitorRepo } from './visitors/sqlite.js';
import { createPostgresVisitorRepo } from './visitors/postgres.js';

/** The stores behind chat messaging. */
export interface MessagingStores {
  kind: 'embedded' | 'clustered';
  channels: ChannelRepo;
  templates: TemplateRepo;
  credits: CreditRepo;
  rateLimiter: RateLimiter;
  messages: SessionMessageRepo;
  /** The inbox's list of conversations, written by the conversation actors. */
  conversations: ConversationIndexRepo;
  /** Each organization's automation rules, read by the conversation actors on every customer message. */
  automationRules: AutomationRuleRepo;
  /** The workspace's text search over contacts and messages. */
  search: SearchIndex;
  /** The organization's labels, on conversations and contacts. */
  labels: LabelRepo;
  /** Which body each send's idempotency key came with. */
  requestKeys: RequestKeyRepo;
  /** Web chat visitors and their tokens. */
  visitors: VisitorRepo;
  /**
   * Embedded: the node's SQLite database. Clustered: the node's PostgreSQL
   * pool (the sandbox network's own state) and its Redis client (the rate
   * limits and send pacing every node shares).
   */
  backing: { db: SqliteDb } | { pg: PgDb; redis: RedisClient; prefix: string };
  /** False when no key is available (clustered without SECRETS_KEY): WhatsApp channels are refused. */
  secretsKey: boolean;
  close(): Promise<void>;
}

/**
 * Opens them. Clustered: the records (channels, templates, credits, messages,
 * the conversation index) on the node's PostgreSQL pool, what expires (rate
 * limits, request keys) on its Redis client, and WhatsApp channels need
 * `SECRETS_KEY`. Embedded: the node's SQLite database, with the secrets key
 * from `SECRETS_KEY` or DATA_DIR/messaging/secrets.key.
 */
export async function openMessagingStores(config: Config, clock: Clock, backing: NodeBacking): Promise<MessagingStores> {
  const memory = config.DATA_DIR === ':memory:';
  const dir = memory ? null : join(config.DATA_DIR, 'messaging');
  if (backing.kind === 'clustered') {
    // Without a key the service runs, but chat-network channels cannot be stored or read (a clear 503 says why).
    const box = config.SECRETS_KEY === undefined ? null : SecretBox.fromString(config.SECRETS_KEY);
    const redis = backing.redis.client;
    const pg = backing.pg;
    const p = config.KEY_PREFIX;
    return {
      kind: 'clustered',
      channels: createPostgresChannelRepo(pg, box),
      templates: createPostgresTemplateRepo(pg),
      credits: createPostgresCreditRepo(pg, clock),
      rateLimiter: createRedisRateLimiter(redis, p),
      messages: createPostgresSessionMessageRepo(pg),
      conversations: createPostgresConversationIndex(pg),
      automationRules: createPostgresAutomationRuleRepo(pg),
      search: createPostgresSearchIndex(pg),
      labels: createPostgresLabelRepo(pg),
      requestKeys: createRedisRequestKeyRepo(redis, p),
      visitors: createPostgresVisitorRepo(pg),
      backing: { pg, redis, prefix: p },
      secretsKey: box !== null,
      // The pool and the client are the node's: closed by whoever opened them.
      close: async () => {},
    };
  }
  const box = SecretBox.load(config.SECRETS_KEY, dir)!;
  const db = backing.db;
  return {
    kind: 'embedded',
    channels: createSqliteChannelRepo(db, box),
    templates: createSqliteTemplateRepo(db),
    credits: createSqliteCreditRepo(db, clock),
    rateLimiter: createMemoryRateLimiter(clock),
    messages: createSqliteSessionMessageRepo(db),
    conversations: createSqliteConversationIndex(db),
    automationRules: createSqliteAutomationRuleRepo(db),
    search: createSqliteSearchIndex(db),
    labels: createSqliteLabelRepo(db),
    requestKeys: createSqliteRequestKeyRepo(db, clock),
    visitors: createSqliteVisitorRepo(db),
    backing: { db },
    secretsKey: true,
    // The node's database is closed by whoever opened it (after every module stopped).
    close: () => db.sync(),
  };
}
