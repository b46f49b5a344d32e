import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { MCP_HEADERS, rawPost } from './helpers.js';

const rpc = (method: string, id = 1) => ({ jsonrpc: '2.0', id, method });

/** What the MCP endpoint answers before any tool runs: a throttled key, an empty batch. */
function refusalSuite(name: string, start: () => Promise<TestService[]>) {
  describe(`MCP refusals (${name})`, () => {
    let nodes: TestService[];
    let org: TestOrg;
    const mcp = (n: TestService) => `${n.running.mcpUrl}/mcp/platform`;
    beforeAll(async () => {
      nodes = await start();
      org = await nodes[0]!.createOrg('Refusals');
    }, 60_000);
    afterAll(async () => {
      await Promise.all((nodes ?? []).map((n) => n.close()));
    });

    it('a key throttled after failed attempts (on any node) gets 429 with Retry-After, as REST answers it, not a 500', async () => {
      const key = await org.keyWith(['mcp:access', 'tickets:read']);
      const auth = { ...MCP_HEADERS, authorization: `Bearer ${key}` };
      expect((await rawPost(mcp(nodes.at(-1)!), JSON.stringify(rpc('tools/list')), auth)).status).toBe(200);
      // Guesses at the key: its prefix, another tail (AUTH_FAILURES_PER_ACCOUNT is 3 here).
      const guess = `${key.slice(0, 10)}${'x'.repeat(key.length - 10)}`;
      for (let i = 0; i < 3; i++) expect((await nodes[0]!.call('GET', '/v1/tickets', { key: guess })).status).toBe(401);
      const rest = await nodes.at(-1)!.call('GET', '/v1/tickets', { key });
      expect(rest.status).toBe(429);
      const r = await rawPost(mcp(nodes.at(-1)!), JSON.stringify(rpc('tools/list')), auth);
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'too_many_attempts' } } });
    });

    it('an empty JSON-RPC batch is an Invalid Request (-32600), not a 202', async () => {
      const key = await org.keyWith(['mcp:access']);
      const r = await rawPost(mcp(nodes[0]!), '[]', { ...MCP_HEADERS, authorization: `Bearer ${key}` });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      // A batch with something in it still works.
      const ok = await rawPost(mcp(nodes[0]!), JSON.stringify([rpc('ping', 7)]), { ...MCP_HEADERS, authorization: `Bearer ${key}` });
      expect(ok.status).toBe(200);
    });
  });
}

refusalSuite('embedded', async () => [await startTestService({ env: { AUTH_FAILURES_PER_ACCOUNT: '3' } })]);

describe('clustered', () => {
  const servers = useClusterServers();
  refusalSuite('clustered, 2 nodes', async () => {
    const env = { ...servers.env(`mr${Date.now() % 100000}`), ACTOR_PARTITIONS: '4', SECRETS_KEY: '5'.repeat(64), AUTH_FAILURES_PER_ACCOUNT: '3' };
    return Promise.all(['m1', 'm2'].map((id) => startTestService({ env: { ...env, NODE_ID: id } })));
  });
});
