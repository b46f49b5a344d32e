import { z } from 'zod';
import { USER_ROLES } from '../../domain/types.js';
import type { AccountService } from '../../app/accounts.js';
import { defineRoute, type RouteDef } from '../route.js';

const teamMember = z.object({
  id: z.string(),
  name: z.string(),
  role: z.enum(USER_ROLES),
  active: z.boolean().describe('false once deactivated: kept so history still shows their name, but nothing can be handed to them'),
});

/**
 * The team directory: who an agent can hand a conversation to, and whose name
 * to show beside an assignee. Read-only and without emails, so every inbox
 * reader may see it; managing users stays behind `settings:manage`.
 */
export function teamRoutes(accounts: AccountService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/team',
      operationId: 'listTeam',
      summary: 'The team: every dashboard user of the organization (id, name, role, active), for names in history and for transfers',
      tag: 'Inbox',
      auth: 'apiKey',
      scope: 'inbox:read',
      responses: { 200: { description: 'users by name', schema: z.object({ success: z.literal(true), members: z.array(teamMember) }) } },
      handler: async ({ principal }) => {
        const users = await accounts.listUsers(principal.organizationId);
        const members = users
          .map(({ id, name, role, active }) => ({ id, name, role, active }))
          .sort((a, b) => a.name.localeCompare(b.name));
        return { body: { success: true, members } };
      },
    }),
  ];
}
