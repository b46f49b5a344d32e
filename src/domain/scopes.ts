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

/** What a role may do without a key: a dashboard session carries its user's role's scopes. */
const AGENT_EXCLUDED: ReadonlySet<Scope> = new Set<Scope>(['settings:manage', 'webhook:create']);

export function scopesForRole(role: 'admin' | 'agent'): Scope[] {
  return role === 'admin' ? [...SCOPES] : SCOPES.filter((s) => !AGENT_EXCLUDED.has(s));
}
