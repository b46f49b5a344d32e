export type { PaceGrant, SendPacer } from './port.js';
export { createMemorySendPacer } from './memory.js';
export { createRedisSendPacer } from './redis.js';
