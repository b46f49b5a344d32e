import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { silentLogger, type Logger } from '../../src/log.js';
import type { Clock } from '../../src/clock.js';
import { SCOPES, type Scope } from '../../src/domain/scopes.js';
import { main as adminCli } from '../../src/cli/admin.js';
import { OpenApiResponseChecker } from './openapi-check.js';

export const OPERATOR_TOKEN = 'test-operator-token-0123456789';

export interface TestService {
  url: string;
  running: RunningServer;
  /** JSON request; `key` is sent as a bearer token. */
  call(method: string, path: string, opts?: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  /** Creates an organization with an admin and an agent, and keys for both. */
  createOrg(name?: string, scopes?: readonly Scope[]): Promise<TestOrg>;
  close(): Promise<void>;
}

export interface TestOrg {
  id: string;
  adminId: string;
  agentId: string;
  adminKey: string;
  agentKey: string;
  /** Issues another key for the admin with exactly these scopes. */
  keyWith(scopes: Scope[], user?: 'admin' | 'agent'): Promise<string>;
  contact(audienceExternalId: string): Promise<{ id: string; audienceExternalId: string }>;
}

/** The whole service in-process on an ephemeral port, embedded in memory unless `env` says otherwise. */
export async function startTestService(opts: { env?: Record<string, string>; clock?: Clock; log?: Logger } = {}): Promise<TestService> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: ':memory:', OPERATOR_TOKEN, LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...opts.env });
  const running = await startServer(config, { log: opts.log ?? silentLogger, clock: opts.clock });
  const url = `http://127.0.0.1:${running.port}`;

  let checker: OpenApiResponseChecker | undefined;
  const call: TestService['call'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`;
    let body: string | undefined;
    if (o.rawBody !== undefined) body = o.rawBody;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      /* not JSON */
    }
    // Every answer a test sees is held to the published contract.
    checker ??= new OpenApiResponseChecker((await (await fetch(`${url}/openapi.json`)).json()) as ConstructorParameters<typeof OpenApiResponseChecker>[0]);
    const violation = checker.check(method, path, res.status, parsed, res.headers.get('content-type'));
    if (violation) throw new Error(`response breaks /openapi.json: ${violation.method} ${violation.path} -> ${violation.status}: ${violation.problem}`);
    return { status: res.status, body: parsed, headers: res.headers };
  };

  const op = (method: string, path: string, body?: unknown) => call(method, path, { key: OPERATOR_TOKEN, body });

  const createOrg: TestService['createOrg'] = async (name = 'Org', scopes = SCOPES) => {
    const org = (await op('POST', '/admin/v1/organizations', { name })).body;
    const admin = (await op('POST', `/admin/v1/organizations/${org.id}/users`, { email: `admin@${org.id}.test`, name: 'Admin', role: 'admin', password: 'correct horse battery' })).body;
    const agent = (await op('POST', `/admin/v1/organizations/${org.id}/users`, { email: `agent@${org.id}.test`, name: 'Agent', role: 'agent', password: 'correct horse battery' })).body;
    const keyWith = async (s: Scope[], user: 'admin' | 'agent' = 'admin') => {
      const r = await op('POST', `/admin/v1/organizations/${org.id}/api-keys`, { userId: user === 'admin' ? admin.id : agent.id, scopes: s });
      if (r.status !== 201) throw new Error(`key create failed: ${JSON.stringify(r.body)}`);
      return r.body.key as string;
    };
    return {
      id: org.id,
      adminId: admin.id,
      agentId: agent.id,
      adminKey: await keyWith([...scopes]),
      agentKey: await keyWith([...scopes], 'agent'),
      keyWith,
      contact: async (aeid: string) => (await op('POST', `/admin/v1/organizations/${org.id}/contacts`, { audienceExternalId: aeid })).body,
    };
  };

  return { url, running, call, createOrg, close: () => running.close() };
}

/** Runs the operator CLI in-process against a test service, capturing what it prints. */
export async function runCli(svc: TestService, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await adminCli(args, { SB_URL: svc.url, SB_OPERATOR_TOKEN: OPERATOR_TOKEN }, (s) => out.push(s), (s) => err.push(s));
  return { code, out: out.join('\n'), err: err.join('\n') };
}
