/** Every scope an API key can carry (spec: Authentication). */
export const SCOPES = [
  'mcp:access',
  'tickets:create',
  'tickets:read',
  'tickets:update',
  'message:send',
  'conversation:handover:request',
  'conversation:handover:open',
  'chat:send',
  'resource:create',
  'webhook:create',
  'inbox:read',
  'inbox:write',
  'contacts:read',
  'settings:manage',
] as const;

export type Scope = (typeof SCOPES)[number];
