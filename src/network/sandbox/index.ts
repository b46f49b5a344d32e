export { CUSTOMER_MEDIA_TYPES, SandboxNetwork, SANDBOX_UNREACHABLE_PREFIX, type CustomerActionResult, type CustomerMediaKind, type GraphReply, type SandboxNetworkOptions } from './sandbox-network.js';
export { sandboxGraphRouter } from './graph-routes.js';
export { createSqliteSandboxState } from './state-sqlite.js';
export { createPostgresSandboxState } from './state-postgres.js';
export { SANDBOX_TEMPLATES } from './seed-templates.js';
export { SANDBOX_MEDIA_MAX_BYTES, type SandboxAccount, type SandboxMedia, type SandboxMessage, type SandboxState, type SandboxTemplate } from './state.js';
