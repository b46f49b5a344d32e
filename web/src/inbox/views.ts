import type { ConversationSummary } from '../api/types';

/**
 * The inbox's views and their order, as the API defines them
 * (`GET /v1/conversations?view=`): the same rules here decide whether a
 * conversation whose row just changed belongs in the list on screen, and where.
 */
export const VIEWS = [
  { id: 'waiting', label: 'Waiting' },
  { id: 'mine', label: 'Mine' },
  { id: 'others', label: 'Others' },
  { id: 'unassigned', label: 'Unassigned' },
  { id: 'bot', label: 'With the bot' },
  { id: 'resolved', label: 'Resolved' },
  { id: 'all', label: 'All' },
] as const;
export type ViewId = (typeof VIEWS)[number]['id'];
export type SortId = 'activity' | 'waiting';

export interface ViewQuery {
  view: ViewId;
  sort: SortId;
  channelId?: string;
  assigneeId?: string;
  contact?: string;
  /** A label's id. */
  label?: string;
  /** `breached`: only conversations past their response-time target. */
  sla?: 'breached';
  /** A team's id, or `mine`: the caller's teams. */
  team?: string;
}

export function viewQueryFrom(q: URLSearchParams): ViewQuery {
  const view = VIEWS.find((v) => v.id === q.get('view'))?.id ?? 'waiting';
  const out: ViewQuery = { view, sort: q.get('sort') === 'waiting' ? 'waiting' : q.get('sort') === 'activity' ? 'activity' : view === 'waiting' ? 'waiting' : 'activity' };
  for (const [k, p] of [['channelId', 'channel'], ['assigneeId', 'assignee'], ['contact', 'contact'], ['label', 'label'], ['team', 'team']] as const) {
    const v = q.get(p);
    if (v) out[k] = v;
  }
  if (q.get('sla') === 'breached') out.sla = 'breached';
  return out;
}

/** The address's query for a view (the conversation links keep it, so the list stays as it was). */
export function viewSearch(v: ViewQuery): string {
  const q = new URLSearchParams();
  if (v.view !== 'waiting') q.set('view', v.view);
  if (v.sort !== (v.view === 'waiting' ? 'waiting' : 'activity')) q.set('sort', v.sort);
  if (v.channelId) q.set('channel', v.channelId);
  if (v.assigneeId) q.set('assignee', v.assigneeId);
  if (v.contact) q.set('contact', v.contact);
  if (v.label) q.set('label', v.label);
  if (v.team) q.set('team', v.team);
  if (v.sla) q.set('sla', v.sla);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The API's query for a view's page (`cursor` for the next). */
export function apiQuery(v: ViewQuery, limit: number, cursor?: string | null): string {
  const q = new URLSearchParams(filtersQuery(v));
  q.set('view', v.view);
  q.set('sort', v.sort);
  q.set('limit', String(limit));
  if (cursor) q.set('cursor', cursor);
  return q.toString();
}

export function filtersQuery(v: ViewQuery): string {
  const q = new URLSearchParams();
  if (v.channelId) q.set('channelId', v.channelId);
  if (v.assigneeId) q.set('assigneeId', v.assigneeId);
  if (v.contact) q.set('contact', v.contact);
  if (v.label) q.set('label', v.label);
  if (v.sla) q.set('sla', v.sla);
  if (v.team) q.set('team', v.team);
  return q.toString();
}

export function hasFilters(v: ViewQuery): boolean {
  return filtersQuery(v) !== '';
}

type Row = Pick<ConversationSummary, 'id' | 'status' | 'assigneeId' | 'sessionStatus' | 'channelId' | 'contactId' | 'queuedAt' | 'updatedAt' | 'labels' | 'teamId' | 'sla'>;

/** The one lane a conversation is in (the server's generated `lane`). */
function lane(c: Row): 'assigned' | 'waiting' | 'resolved' | 'bot' {
  if (c.status === 'assigned') return 'assigned';
  if (c.status === 'queued') return 'waiting';
  return c.sessionStatus === 'resolved' ? 'resolved' : 'bot';
}

/**
 * Whether a conversation belongs in a view. `myTeams`: the ids of the
 * signed-in agent's teams, for the `mine` team filter (null while unknown:
 * the server's answer for the page stands).
 */
export function inView(c: Row, v: ViewQuery, me: string, myTeams: ReadonlySet<string> | null = null): boolean {
  if (v.channelId !== undefined && c.channelId !== v.channelId) return false;
  if (v.sla === 'breached' && (c.sla ?? null)?.breachedAt == null) return false;
  if (v.team !== undefined) {
    const team = c.teamId ?? null;
    if (team === null) return false;
    if (v.team === 'mine' ? myTeams !== null && !myTeams.has(team) : team !== v.team) return false;
  }
  if (v.assigneeId !== undefined && c.assigneeId !== v.assigneeId) return false;
  if (v.contact !== undefined && c.contactId !== v.contact && c.id !== v.contact) return false;
  if (v.label !== undefined && !c.labels.some((l) => l.id === v.label)) return false;
  const l = lane(c);
  switch (v.view) {
    case 'all':
      return true;
    case 'mine':
      return l === 'assigned' && c.assigneeId === me;
    case 'others':
      return l === 'assigned' && c.assigneeId !== me;
    case 'unassigned':
      return l === 'bot' || l === 'waiting';
    default:
      return l === v.view;
  }
}

/** The view's order: activity newest first; waiting longest first (in the queue since, else last change); then by id. */
export function compareFor(sort: SortId): (a: Row, b: Row) => number {
  if (sort === 'waiting') return (a, b) => cmp(a.queuedAt ?? a.updatedAt, b.queuedAt ?? b.updatedAt) || cmp(a.id, b.id);
  return (a, b) => cmp(b.updatedAt, a.updatedAt) || cmp(a.id, b.id);
}

/** Code-unit order, as the databases compare these ids and ISO times. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
