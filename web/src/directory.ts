import { request } from './api/client';
import type { DashboardUser } from './api/types';
import { Observable } from './state';
import { session } from './session';

/**
 * The organization's dashboard users by id, for names beside assignees and
 * senders. Loaded once per sign-in from `GET /v1/users`; a role that may not
 * list users (403) keeps an empty directory and ids are shown as "another agent".
 */
export const directory = new Observable<ReadonlyMap<string, DashboardUser>>(new Map());
let loading: Promise<void> | null = null;

export function loadDirectory(force = false): Promise<void> {
  if (session.value?.role !== 'admin') return Promise.resolve();
  if (loading && !force) return loading;
  loading = request<{ users: DashboardUser[] }>('GET', '/v1/users')
    .then((r) => directory.set(new Map(r.users.map((u) => [u.id, u]))))
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
