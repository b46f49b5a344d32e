/**
 * Storage. One folder per aggregate, each a `port.ts` (the interface the
 * features use) beside its adapters: `sqlite.ts` for an embedded node,
 * `redis.ts` for a clustered one; one contract suite per port runs against
 * both. `core/` is the organization's own records (organizations, users,
 * keys, contacts, tickets and their outbox), one aggregate because a ticket
 * and its event commit together. `sqlite/` and `redis/` are the engines;
 * `backing.ts` opens the one a node uses.
 */
export type * from './core/port.js';
export { SqliteDb, StorageOpenError, type WriteOp, type Migration } from './sqlite/db.js';
export { FreshCache } from './fresh-cache.js';
export { NODE_MIGRATIONS, SANDBOX_MIGRATIONS } from './sqlite/schema.js';
export { openNodeBacking, closeNodeBacking, openNodeDb, openNodeDbIn, openSandboxDb, nodeDbPath, type NodeBacking } from './backing.js';
export { createSqliteStore } from './core/sqlite.js';
export { createPostgresStore } from './core/postgres.js';
export { contactOpenTicket } from './core/open-ticket.js';
export { PgDb, numbered, type PgMigration, type PgQueryable } from './postgres/db.js';
export { NODE_PG_MIGRATIONS } from './postgres/schema.js';
export { connectRedis, getEach, LuaScript, openNodeRedis, orgKeys, type NodeRedis, type RedisClient } from './redis/client.js';
export type * from './webhooks/port.js';
export { createSqliteWebhookStore, type SqliteWebhookStoreOptions } from './webhooks/sqlite.js';
export { createPostgresWebhookStore, type PostgresWebhookStoreOptions } from './webhooks/postgres.js';
export type * from './resources/port.js';
export { createSqliteResourceStore } from './resources/sqlite.js';
export { createPostgresResourceStore } from './resources/postgres.js';
export { openWebhookStores, type WebhookStores } from './webhooks/open.js';
export type * from './conversations/port.js';
export { createSqliteConversationIndex } from './conversations/sqlite.js';
export { createPostgresConversationIndex } from './conversations/postgres.js';
export { createSqliteLabelRepo } from './labels/sqlite.js';
export { createPostgresLabelRepo } from './labels/postgres.js';
export type { LabelRepo, LabelRefusal } from './labels/port.js';
export type * from './auth/index.js';
export type * from './search/port.js';
export { createSqliteSearchIndex } from './search/sqlite.js';
export { createPostgresSearchIndex } from './search/postgres.js';
export { searchTerms, fts5Query, tsQuery, snippet, type SearchTerms } from './search/query.js';
export type * from './canned-replies/port.js';
export { createSqliteCannedReplyStore } from './canned-replies/sqlite.js';
export { createPostgresCannedReplyStore } from './canned-replies/postgres.js';
export type * from './automation/port.js';
export { EMPTY_RULE_SET } from './automation/port.js';
export { createSqliteAutomationRuleRepo } from './automation/sqlite.js';
export { createPostgresAutomationRuleRepo } from './automation/postgres.js';
export type * from './teams/port.js';
export { createSqliteTeamStore } from './teams/sqlite.js';
export { createPostgresTeamStore } from './teams/postgres.js';
