import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { Browser, PASSWORD } from './helpers.js';

/** Two clustered nodes on real Redis and NATS: sessions and failure counts are shared. */
describe('sign-in on a cluster', () => {
  const servers = useClusterServers();
  const nodes: TestService[] = [];
  let org: TestOrg;
  beforeAll(async () => {
    const env = (id: string) => ({
      ...servers.env('auth'),
      NODE_ID: id,
      ACTOR_PARTITIONS: '4',
      SECRETS_KEY: '3'.repeat(64),
    });
    nodes.push(...(await Promise.all(['a1', 'a2'].map((id) => startTestService({ env: env(id) })))));
    org = await nodes[0]!.createOrg('Cluster');
  }, 60_000);
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it('a session made on one node works on the other; logout on either ends it on both', async () => {
    const [n1, n2] = nodes as [TestService, TestService];
    const on1 = new Browser(n1);
    await on1.login(`agent@${org.id}.test`, PASSWORD);
    const on2 = new Browser(n2);
    on2.cookie = on1.cookie;
    on2.csrf = on1.csrf;
    expect((await on2.call('GET', '/v1/auth/session')).body.user.id).toBe(org.agentId);
    expect((await on2.call('POST', '/v1/tickets', { body: { subject: 'via node 2', description: 'd' } })).status).toBe(201);
    expect((await on2.call('POST', '/v1/tickets', { body: { subject: 'no csrf', description: 'd' }, csrf: false })).status).toBe(403);
    expect((await on2.call('POST', '/v1/auth/logout')).status).toBe(204);
    expect((await on1.call('GET', '/v1/auth/session')).status).toBe(401);
    expect((await on1.call('GET', '/v1/tickets')).status).toBe(401);
  });

  it('an operator password reset on one node ends the sessions served by the other', async () => {
    const [n1, n2] = nodes as [TestService, TestService];
    const b = new Browser(n2);
    await b.login(`admin@${org.id}.test`, PASSWORD);
    const r = await n1.call('POST', `/admin/v1/organizations/${org.id}/users/${org.adminId}/password`, { key: 'test-operator-token-0123456789', body: { password: 'another good password' } });
    expect(r.body).toEqual({ sessionsEnded: 1 });
    expect((await b.call('GET', '/v1/auth/session')).status).toBe(401);
    expect((await new Browser(n2).login(`admin@${org.id}.test`, 'another good password')).status).toBe(200);
  });

  it('counts failed sign-ins across nodes: 10 wrong passwords spread over both give 429 on either', async () => {
    const email = `agent@${org.id}.test`;
    for (let i = 0; i < 10; i++) expect((await new Browser(nodes[i % 2]!, `10.1.0.${i}`).login(email, 'wrong wrong wrong')).status).toBe(401);
    for (const n of nodes) {
      const r = await new Browser(n, '10.1.1.1').login(email, PASSWORD);
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });
});
