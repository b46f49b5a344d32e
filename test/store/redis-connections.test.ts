import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { startTestService, type TestService } from '../harness/service.js';
import { startRedisCluster, type RedisClusterProcess } from '../harness/servers.js';
import { useClusterServers } from '../harness/use-servers.js';

/** Every connection a server holds but the one asking (each server here serves one node only). */
async function connections(url: string): Promise<string[]> {
  const c = createClient({ url });
  await c.connect();
  try {
    const me = await c.clientId();
    return (await c.clientList()).filter((e) => Number(e.id) !== Number(me)).map((e) => e.name);
  } finally {
    await c.close();
  }
}

describe('a clustered node opens one Redis connection, shared by every store', () => {
  const servers = useClusterServers();
  let cluster: RedisClusterProcess;
  let services: TestService[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 90_000);
  afterAll(async () => {
    for (const s of services) await s.close();
    services = [];
    await cluster?.stop();
  });

  it('on one Redis: one connection, whatever the node does', async () => {
    const svc = await startTestService({ env: { ...servers.env('conns'), NODE_ID: 'conn-single', SECRETS_KEY: 'a'.repeat(64), SANDBOX_NETWORK: 'true' } });
    services.push(svc);
    // Touch every module's store: tickets and auth, webhooks, messaging, actors (readiness).
    const org = await svc.createOrg('Connections');
    expect((await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 's', description: 'd' } })).status).toBe(201);
    expect((await svc.call('GET', '/readyz')).status).toBe(200);
    expect(await connections(servers.redis.url)).toEqual(['switchboard-conn-single']);
  });

  it('on Redis Cluster: one connection per master', async () => {
    const svc = await startTestService({ env: { ...servers.env('connc', { redisClusterNodes: cluster.nodes }), NODE_ID: 'conn-cluster', SECRETS_KEY: 'a'.repeat(64), SANDBOX_NETWORK: 'true' } });
    services.push(svc);
    const org = await svc.createOrg('Connections');
    expect((await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 's', description: 'd' } })).status).toBe(201);
    expect((await svc.call('GET', '/readyz')).status).toBe(200);
    for (const url of cluster.nodes) expect(await connections(url), url).toEqual(['switchboard-conn-cluster']);
  });
});
