export type * from './port.js';
export { createSqliteAuthSessionRepo, createMemoryFailureCounter } from './sqlite.js';
export { createRedisAuthSessionRepo, createRedisFailureCounter } from './redis.js';
