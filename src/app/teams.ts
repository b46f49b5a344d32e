import { randomUUID } from 'node:crypto';
import { AppError, notFound } from '../errors.js';
import type { Clock } from '../clock.js';
import { isActiveUser, type Principal } from '../domain/types.js';
import { DEFAULT_TEAM_AUTO_ASSIGN, TEAMS_MAX, type Team, type TeamAutoAssign } from '../domain/teams.js';
import type { UserRepo } from '../store/core/port.js';
import type { TeamStore } from '../store/teams/port.js';
import { requireScope } from './principal.js';

export interface TeamInput {
  name: string;
  memberIds: string[];
  autoAssign?: Partial<TeamAutoAssign>;
}

/**
 * The organization's teams: every agent reads them (`inbox:read`: whose
 * queues there are, and which are theirs), admins manage them
 * (`settings:manage`). Members must be active users of the organization
 * when they are named; a user deactivated later stays listed and is never
 * given a conversation. Another organization's team answers as missing.
 */
export class TeamService {
  constructor(
    private readonly store: TeamStore,
    private readonly users: UserRepo,
    private readonly clock: Clock,
  ) {}

  async list(principal: Principal): Promise<Team[]> {
    requireScope(principal, 'inbox:read');
    return this.store.list(principal.organizationId);
  }

  async get(principal: Principal, id: string): Promise<Team> {
    requireScope(principal, 'inbox:read');
    const team = await this.store.get(principal.organizationId, id);
    if (team === null) throw notFound('team');
    return team;
  }

  async create(principal: Principal, input: TeamInput): Promise<Team> {
    requireScope(principal, 'settings:manage');
    const memberIds = await this.members(principal.organizationId, input.memberIds);
    const now = new Date(this.clock.now()).toISOString();
    const team: Team = {
      id: `team_${randomUUID().replace(/-/g, '').slice(0, 20)}`,
      organizationId: principal.organizationId,
      name: input.name,
      memberIds,
      autoAssign: { ...DEFAULT_TEAM_AUTO_ASSIGN, ...input.autoAssign },
      createdAt: now,
      updatedAt: now,
    };
    await this.store.create(team, TEAMS_MAX);
    return team;
  }

  /** Changes the fields given (`autoAssign` key by key). */
  async update(principal: Principal, id: string, input: Partial<TeamInput>): Promise<Team> {
    requireScope(principal, 'settings:manage');
    const memberIds = input.memberIds === undefined ? undefined : await this.members(principal.organizationId, input.memberIds);
    const now = new Date(this.clock.now()).toISOString();
    const next = await this.store.update(principal.organizationId, id, (cur) => ({
      ...cur,
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(memberIds === undefined ? {} : { memberIds }),
      autoAssign: { ...cur.autoAssign, ...input.autoAssign },
      updatedAt: now,
    }));
    if (next === null) throw notFound('team');
    return next;
  }

  /** Deletes the team; conversations waiting in its queue stay in the organization's queue. */
  async delete(principal: Principal, id: string): Promise<void> {
    requireScope(principal, 'settings:manage');
    if (!(await this.store.delete(principal.organizationId, id))) throw notFound('team');
  }

  /** The team, for a service acting on the organization's behalf (no caller to check). */
  async find(organizationId: string, id: string): Promise<Team | null> {
    return this.store.get(organizationId, id);
  }

  /** Every team of the organization (for routing: no caller to check). */
  async all(organizationId: string): Promise<Team[]> {
    return this.store.list(organizationId);
  }

  /** The ids of the teams the user is a member of. */
  async teamsOf(organizationId: string, userId: string): Promise<string[]> {
    return (await this.store.list(organizationId)).filter((t) => t.memberIds.includes(userId)).map((t) => t.id);
  }

  /** The ids once each, in order; 422 `unknown_member` naming those that are no active user of the organization. */
  private async members(organizationId: string, ids: string[]): Promise<string[]> {
    const unique = [...new Set(ids)];
    const users = await Promise.all(unique.map((id) => this.users.get(organizationId, id)));
    const unknown = unique.filter((_, i) => {
      const u = users[i];
      return u === null || u === undefined || !isActiveUser(u);
    });
    if (unknown.length > 0) throw new AppError(422, 'unknown_member', `memberIds names ${unknown.length === 1 ? 'a user' : 'users'} who ${unknown.length === 1 ? 'is' : 'are'} not an active user of the organization: ${unknown.join(', ')}`, { memberIds: unknown });
    return unique;
  }
}
