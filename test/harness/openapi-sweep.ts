import { OPERATOR_TOKEN, type TestOrg, type TestService } from './service.js';

/** What the sweeps read of one operation of `/openapi.json`. */
export interface DocumentedOp {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
}

/** Every operation `/openapi.json` lists, with its path, lower-case method and security schemes. */
export async function documentedOperations(svc: TestService): Promise<{ path: string; method: string; op: DocumentedOp; schemes: string[] }[]> {
  const doc = (await svc.call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, DocumentedOp>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op, schemes: (op.security ?? []).flatMap((s) => Object.keys(s)) })));
}

/** `value` with every occurrence of each `from` (an example id) replaced by its `to`, as a reader pastes their own ids. */
export function swapIds<T>(value: T, pairs: readonly (readonly [string, string])[]): T {
  return JSON.parse(pairs.reduce((s, [from, to]) => s.split(from).join(to), JSON.stringify(value))) as T;
}

/** The headers of a dashboard session of the organization's admin (`createOrg` made it): its cookie and CSRF token. */
export async function adminSession(svc: TestService, org: Pick<TestOrg, 'id'>): Promise<Record<string, string>> {
  const login = await svc.call('POST', '/v1/auth/login', { body: { email: `admin@${org.id}.test`, password: 'correct horse battery', organizationId: org.id } });
  if (login.status !== 200) throw new Error(`sign-in failed: ${login.status} ${JSON.stringify(login.body)}`);
  return { cookie: login.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': login.body.csrfToken as string };
}

/** How to call an operation of these security schemes: the operator token, the API key, or the session's headers. */
export function credentialsFor(schemes: readonly string[], as: { apiKey: string; session: Record<string, string> }): { key?: string; headers: Record<string, string> } {
  if (schemes.includes('operatorToken')) return { key: OPERATOR_TOKEN, headers: {} };
  if (schemes.includes('apiKey')) return { key: as.apiKey, headers: {} };
  if (schemes.includes('sessionCookie')) return { headers: as.session };
  return { headers: {} };
}
