import { z } from 'zod';
import { errorSchema } from '../../app/schemas.js';
import type { TeamService } from '../../app/teams.js';
import { TEAM_MEMBERS_MAX, TEAMS_MAX } from '../../domain/teams.js';
import { EXAMPLE_IDS } from '../openapi-examples.js';
import { defineRoute, type RouteDef } from '../route.js';

const name = z.string().trim().min(1).max(100).describe('1 to 100 characters, unique in the organization in any case');
const memberIds = z.array(z.string().min(1).max(100)).max(TEAM_MEMBERS_MAX).describe('active users of the organization (each once)');
const autoAssign = z
  .object({
    enabled: z.boolean().optional().describe("opt-in: the team's queue is given out to its online members, round-robin"),
    capacity: z.number().int().min(1).max(1000).nullable().optional().describe('open (assigned, unresolved) conversations a member holds at most; null: no limit'),
  })
  .strict()
  .describe('changed key by key');

export const teamSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  name: z.string(),
  memberIds: z.array(z.string()).meta({ examples: [[EXAMPLE_IDS.userId]] }),
  autoAssign: z.object({ enabled: z.boolean(), capacity: z.number().int().nullable() }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const one = z.object({ success: z.literal(true), team: teamSchema });
const idParams = z.object({ id: z.string().min(1).max(64) });
const notFound = { description: 'no such team in the organization', schema: errorSchema };
const unknownMember = { description: '`unknown_member`: memberIds names a user who is not an active user of the organization (`details.memberIds`)', schema: errorSchema };

/**
 * Teams: every agent reads them (`inbox:read`), admins manage them
 * (`settings:manage`).
 */
export function teamsRoutes(teams: TeamService): RouteDef[] {
  const base = { tag: 'Teams', auth: 'apiKey' as const };
  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/v1/teams',
      operationId: 'listTeams',
      summary: "The organization's teams, by name",
      scope: 'inbox:read',
      responses: { 200: { description: 'every team of the organization', schema: z.object({ success: z.literal(true), teams: z.array(teamSchema) }) } },
      handler: async ({ principal }) => ({ body: { success: true, teams: await teams.list(principal) } }),
    }),
    defineRoute({
      ...base,
      method: 'post',
      path: '/v1/teams',
      operationId: 'createTeam',
      example: { name: 'Billing', memberIds: [EXAMPLE_IDS.userId], autoAssign: { enabled: true, capacity: 5 } },
      summary: 'Create a team (admins)',
      scope: 'settings:manage',
      body: z.object({ name, memberIds, autoAssign: autoAssign.optional() }).strict(),
      responses: {
        201: { description: 'the team', schema: one },
        400: { description: 'invalid body', schema: errorSchema },
        409: { description: '`team_name_taken`: the organization has a team of this name (in any case)', schema: errorSchema },
        422: { description: `\`unknown_member\`, or \`too_many_teams\`: the organization keeps ${TEAMS_MAX} already`, schema: errorSchema },
      },
      handler: async ({ principal, body }) => ({ status: 201, body: { success: true, team: await teams.create(principal, body) } }),
    }),
    defineRoute({
      ...base,
      method: 'patch',
      path: '/v1/teams/:id',
      operationId: 'updateTeam',
      example: { memberIds: [EXAMPLE_IDS.userId] },
      summary: 'Change a team (admins): only the fields sent change; memberIds replaces the members',
      scope: 'settings:manage',
      params: idParams,
      body: z
        .object({ name: name.optional(), memberIds: memberIds.optional(), autoAssign: autoAssign.optional() })
        .strict()
        .refine((b) => b.name !== undefined || b.memberIds !== undefined || b.autoAssign !== undefined, { message: 'send name, memberIds or autoAssign', path: [] }),
      responses: {
        200: { description: 'the team after the change', schema: one },
        400: { description: 'invalid body, or nothing to change', schema: errorSchema },
        404: notFound,
        409: { description: '`team_name_taken`: another team has this name', schema: errorSchema },
        422: unknownMember,
      },
      handler: async ({ principal, params, body }) => ({ body: { success: true, team: await teams.update(principal, params.id, body) } }),
    }),
    defineRoute({
      ...base,
      method: 'delete',
      path: '/v1/teams/:id',
      operationId: 'deleteTeam',
      summary: "Delete a team (admins); conversations waiting in its queue stay in the organization's queue",
      scope: 'settings:manage',
      params: idParams,
      responses: { 204: { description: 'deleted' }, 404: notFound },
      handler: async ({ principal, params }) => {
        await teams.delete(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
