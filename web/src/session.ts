import { api, ok, setCsrfToken, onSessionEnded, ApiError } from './api/client';
import type { SessionUser } from './api/types';
import { navigate } from './router';
import { Observable } from './state';

/** The signed-in user, null when signed out, undefined while the first check runs. */
export const session = new Observable<SessionUser | null | undefined>(undefined);

// Tabs of one browser tell each other about a logout, so none keeps showing data.
const channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel('switchboard-session');
channel?.addEventListener('message', (e: MessageEvent) => {
  if (e.data === 'logout') ended(false);
  if (e.data === 'login') void loadSession();
});

/** Signed out: `keepPlace` (an expired session) brings the person back here after signing in again. */
function ended(keepPlace = true): void {
  setCsrfToken(null);
  if (session.value !== null) session.set(null);
  if (!location.pathname.startsWith('/login')) {
    const back = !keepPlace || location.pathname === '/' ? '' : `?next=${encodeURIComponent(location.pathname + location.search)}`;
    navigate(`/login${back}`, { replace: true });
  }
}

onSessionEnded(() => ended(true));

function adopt(info: { user: SessionUser; csrfToken: string }): SessionUser {
  setCsrfToken(info.csrfToken);
  session.set(info.user);
  return info.user;
}

export async function loadSession(): Promise<SessionUser | null> {
  try {
    return adopt(await ok(api.GET('/v1/auth/session')));
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 404)) {
      setCsrfToken(null);
      session.set(null);
      return null;
    }
    throw err;
  }
}

export async function login(email: string, password: string, organizationId?: string): Promise<SessionUser> {
  const user = adopt(await ok(api.POST('/v1/auth/login', { body: { email, password, ...(organizationId ? { organizationId } : {}) } })));
  channel?.postMessage('login');
  return user;
}

export async function logout(): Promise<void> {
  try {
    await ok(api.POST('/v1/auth/logout'));
  } finally {
    channel?.postMessage('logout');
    ended(false);
  }
}
