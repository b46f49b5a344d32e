/**
 * Teams: named groups of an organization's agents. A conversation can wait
 * in a team's queue (`teamId` on the conversation), its members see that
 * queue, and a team may hand its queue's conversations out automatically
 * (`autoAssign`, like a channel's routing setting).
 */
export interface Team {
  id: string;
  organizationId: string;
  /** Unique in the organization, in any case. */
  name: string;
  /** Users of the organization, each once, in the order given. */
  memberIds: string[];
  /** Opt-in: the team's queue is given to its online members with fewer than `capacity` open conversations each (null: no limit). */
  autoAssign: TeamAutoAssign;
  createdAt: string;
  updatedAt: string;
}

export interface TeamAutoAssign {
  enabled: boolean;
  capacity: number | null;
}

export const DEFAULT_TEAM_AUTO_ASSIGN: TeamAutoAssign = { enabled: false, capacity: null };

/** Most teams an organization keeps. */
export const TEAMS_MAX = 100;
/** Most members of one team. */
export const TEAM_MEMBERS_MAX = 500;

/** What makes two team names one: trimmed, in lower case. */
export function teamNameKey(name: string): string {
  return name.trim().toLowerCase();
}
