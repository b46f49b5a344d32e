import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { silentLogger } from '../../src/log.js';
import { main as adminCli } from '../../src/cli/admin.js';
import { useClusterServers } from '../harness/use-servers.js';

/** `operator reset-token` against Redis: nodes started without OPERATOR_TOKEN switch to the new token at once. */
describe('operator reset-token, clustered', () => {
  const servers = useClusterServers();
  const nodes: RunningServer[] = [];
  const env = () => ({ ...servers.env('opreset'), DATA_DIR: ':memory:' });
  beforeAll(async () => {
    for (const id of ['r1', 'r2']) {
      const config = loadConfig({ ...env(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', NODE_ID: id, SECRETS_KEY: '4'.repeat(64) });
      nodes.push(await startServer(config, { log: silentLogger }));
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  const reset = async (extra: Record<string, string> = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await adminCli(['operator', 'reset-token', '--json'], { ...env(), ...extra }, (s) => out.push(s), (s) => err.push(s));
    return { code, token: code === 0 ? (JSON.parse(out.join('')).operatorToken as string) : null, err: err.join('\n') };
  };
  const status = async (node: RunningServer, token: string) =>
    (await fetch(`http://127.0.0.1:${node.port}/admin/v1/organizations`, { headers: { authorization: `Bearer ${token}` } })).status;

  it('sets a token every running node accepts, and a second reset retires the first on every node', async () => {
    expect(await status(nodes[0]!, 'op_nothing_set_yet')).toBe(401);
    const first = await reset();
    expect(first.code).toBe(0);
    for (const n of nodes) expect(await status(n, first.token!)).toBe(200);
    const second = await reset();
    for (const n of nodes) {
      expect(await status(n, second.token!)).toBe(200);
      expect(await status(n, first.token!)).toBe(401);
    }
  });

  it('refuses when OPERATOR_TOKEN is set, since nodes would ignore the stored token', async () => {
    const refused = await reset({ OPERATOR_TOKEN: 'a-configured-operator-token' });
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('OPERATOR_TOKEN is set');
  });
});
