export { SandboxProviders, SANDBOX_PROVIDERS_PATH, GMAIL_SCOPE, CALENDAR_SCOPE, type Fault, type FaultTarget, type SandboxProvidersOptions } from './providers.js';
export { SANDBOX_CLIENT_ID } from './identity.js';
export { SandboxOutbound, type SandboxOutboundOptions } from './outbound.js';
