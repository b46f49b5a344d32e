import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { ApiError, errorFrom } from './errors';

/**
 * The dashboard's one way to the API: same-origin requests with the session
 * cookie, the CSRF token on every unsafe method, and a refusal turned into an
 * `ApiError`. A 401 anywhere but sign-in means the session ended (logout in
 * another tab, expiry, deactivation): listeners send the person to /login.
 */
let csrfToken: string | null = null;
const sessionEndedListeners = new Set<() => void>();

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function onSessionEnded(fn: () => void): () => void {
  sessionEndedListeners.add(fn);
  return () => sessionEndedListeners.delete(fn);
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const AUTH_PATHS = ['/v1/auth/login', '/v1/auth/session'];

function withCsrf(request: Request): Request {
  if (!SAFE.has(request.method) && csrfToken !== null) request.headers.set('X-CSRF-Token', csrfToken);
  return request;
}

function noticeEnded(url: string, status: number): void {
  if (status !== 401) return;
  const path = new URL(url, location.href).pathname;
  if (AUTH_PATHS.includes(path)) return;
  for (const fn of sessionEndedListeners) fn();
}

const sessionMiddleware: Middleware = {
  onRequest: ({ request }) => withCsrf(request),
  onResponse: ({ request, response }) => {
    noticeEnded(request.url, response.status);
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(sessionMiddleware);

/** Unwraps an openapi-fetch result: the data, or throws the `ApiError`. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw await errorFrom(response, error);
  return data as T;
}

/**
 * A call to an endpoint by path, for the few whose types are written by hand
 * in ./types (see there why). Same cookie, CSRF and 401 handling as `api`.
 */
export async function request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { accept: 'application/json', ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const req = withCsrf(new Request(path, init));
  const res = await fetch(req);
  noticeEnded(req.url, res.status);
  if (!res.ok) throw await errorFrom(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export { ApiError };
