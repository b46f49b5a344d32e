export { SandboxNetwork, SANDBOX_UNREACHABLE_PREFIX, type CustomerActionResult, type GraphReply, type SandboxNetworkOptions } from './sandbox-network.js';
export { sandboxGraphRouter } from './graph-routes.js';
export { createSqliteSandboxState } from './state-sqlite.js';
export { createRedisSandboxState } from './state-redis.js';
export { SANDBOX_TEMPLATES } from './seed-templates.js';
export type { SandboxAccount, SandboxMessage, SandboxState, SandboxTemplate } from './state.js';
