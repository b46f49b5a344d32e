export type * from './port.js';
export { createEmbeddedAuthSessionRepo, createMemoryFailureCounter } from './embedded.js';
export { createRedisAuthSessionRepo, createRedisFailureCounter } from './redis.js';
