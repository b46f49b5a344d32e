export type * from './types.js';
export { EmbeddedDb, type WriteOp } from './embedded-db.js';
export { createEmbeddedStore } from './memory.js';
export { createRedisStore } from './redis.js';
export { connectRedis, LuaScript, orgKeys, type RedisClient } from './redis-client.js';
export type * from './webhook-types.js';
export { createEmbeddedWebhookStore, type EmbeddedWebhookStoreOptions } from './webhook-embedded.js';
export { createRedisWebhookStore, type RedisWebhookStoreOptions } from './webhook-redis.js';
