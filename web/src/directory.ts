import { request } from './api/client';
import type { TeamMember } from './api/types';
import { Observable } from './state';
import { session } from './session';

/**
 * The organization's team by id, for names beside assignees and senders and
 * for transfers. Loaded once per sign-in from `GET /v1/team`, which every
 * inbox reader may call; if it fails, ids are shown as "another agent".
 */
export const directory = new Observable<ReadonlyMap<string, TeamMember>>(new Map());
let loading: Promise<void> | null = null;

export function loadDirectory(force = false): Promise<void> {
  if (!session.value) return Promise.resolve();
  if (loading && !force) return loading;
  loading = request<{ members: TeamMember[] }>('GET', '/v1/team')
    .then((r) => directory.set(new Map(r.members.map((u) => [u.id, u]))))
    .catch(() => undefined);
  return loading;
}

export function resetDirectory(): void {
  loading = null;
  directory.set(new Map());
}

export function userName(id: string | null | undefined, me: { id: string; name: string }): string {
  if (id === null || id === undefined) return 'nobody';
  if (id === me.id) return `${me.name} (you)`;
  return directory.value.get(id)?.name ?? 'another agent';
}
