import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import type { PresenceService } from '../../ws/presence.js';
import { defineRoute, type RouteDef } from '../route.js';

const teamPresence = z.object({
  userId: z.string(),
  name: z.string(),
  role: z.enum(['admin', 'agent']),
  status: z.enum(['online', 'away', 'offline']).describe('online or away as the user chose, while they have the dashboard (an inbox socket) open; offline otherwise, or when they chose offline'),
});

/** Agents' presence: each sets their own, everyone of the organization sees the team's (`inbox:read`). */
export function presenceRoutes(presence: PresenceService): RouteDef[] {
  const base = { tag: 'Inbox', auth: 'apiKey' as const, scope: 'inbox:read' as const };
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/v1/presence',
      operationId: 'listPresence',
      summary: "The organization's users with their presence: online, away or offline",
      responses: { 200: { description: 'every active user of the organization', schema: z.object({ success: z.literal(true), agents: z.array(teamPresence) }) } },
      handler: async ({ principal }) => ({ body: { success: true, agents: await presence.team(principal) } }),
    }),
    defineRoute({
      ...base,
      method: 'put',
      path: '/v1/presence',
      operationId: 'setPresence',
      example: { status: 'away' },
      summary: 'Choose your presence (online or away); teammates see it while you have the dashboard open',
      body: z.object({ status: z.enum(['online', 'away']).describe('online: taking conversations; away: connected, not taking them') }).strict(),
      responses: {
        200: { description: 'the status chosen', schema: z.object({ success: z.literal(true), userId: z.string(), status: z.enum(['online', 'away']) }) },
        400: { description: 'a status other than online or away', schema: errorSchema },
      },
      handler: async ({ principal, body }) => ({ body: { success: true, ...(await presence.choose(principal, body.status)) } }),
    }),
    defineRoute({
      ...base,
      method: 'patch',
      path: '/v1/users/me/availability',
      operationId: 'setAvailability',
      example: { status: 'online' },
      summary: 'Set your availability: online takes conversations (auto-assignment gives them to you), away and offline do not; the same state as PUT /v1/presence and the socket',
      body: z
        .object({ status: z.enum(['online', 'away', 'offline']).describe('online: taking conversations; away: connected, not taking them; offline: shown as offline to teammates, not taking them') })
        .strict(),
      responses: {
        200: { description: 'the availability chosen', schema: z.object({ success: z.literal(true), userId: z.string(), status: z.enum(['online', 'away', 'offline']) }) },
        400: { description: 'a status other than online, away or offline', schema: errorSchema },
      },
      handler: async ({ principal, body }) => ({ body: { success: true, ...(await presence.choose(principal, body.status)) } }),
    }),
  ];
}
