export { McpGateway, mcpBaseUrl, integrationTools, type ConnectedServers, type IntegrationInfo, type McpGatewayOptions } from './gateway.js';
export { PLATFORM_INTEGRATION_ID, platformServer, type PlatformDeps } from './platform.js';
export { ToolRegistry } from './registry.js';
export { createRequestServer, type McpServerDef } from './request-server.js';
export { checkOrigin, rebindingPolicy, type RebindingPolicy } from './rebinding.js';
export { defineTool, type ToolAnnotations, type ToolContext, type ToolDef } from './tool.js';
export { toolErrorText } from './tool-errors.js';
export { startMcpListener, type McpListener } from './listener.js';
