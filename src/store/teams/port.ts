import { AppError, conflict } from '../../errors.js';
import type { Team } from '../../domain/teams.js';

export const teamNameTaken = (name: string) => conflict('team_name_taken', `the organization has a team named "${name}"`, { field: 'name' });
export const tooManyTeams = (max: number) => new AppError(422, 'too_many_teams', `an organization keeps at most ${max} teams: delete one first`);

/**
 * Storage port for an organization's teams. Adapters: `sqlite.ts`,
 * `postgres.ts`; one contract suite, `test/store/teams.contract.ts`. Names
 * are unique per organization in any case (`teamNameKey`); every method is
 * scoped to one organization, so another's team is never found.
 */
export interface TeamStore {
  /** Stores a new team. 409 `team_name_taken`; 422 `too_many_teams` when the organization keeps `max` already. */
  create(team: Team, max: number): Promise<void>;
  get(organizationId: string, id: string): Promise<Team | null>;
  /** Every team of the organization, by name. */
  list(organizationId: string): Promise<Team[]>;
  /** Read-modify-write of one team in one step; null when there is none. 409 `team_name_taken` when renamed to another team's name. */
  update(organizationId: string, id: string, change: (current: Team) => Team): Promise<Team | null>;
  delete(organizationId: string, id: string): Promise<boolean>;
}
