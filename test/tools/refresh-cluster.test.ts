import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { systemClock } from '../../src/clock.js';
import { connectRedis, NODE_PG_MIGRATIONS, PgDb, type RedisClient } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createPostgresToolRepo } from '../../src/store/tools/postgres.js';
import { ToolService } from '../../src/tools/index.js';
import type { Principal } from '../../src/domain/types.js';
import { startPostgres, startRedis, type PostgresProcess, type ServerProcess } from '../harness/servers.js';
import { startTestService, type TestService } from '../harness/service.js';

/**
 * Two nodes (two ToolServices, each with its own PostgreSQL pool and Redis
 * connection, one store)
 * using one tool whose access token expired: the sandbox identity provider
 * must see exactly one refresh.
 */
describe('token refresh across nodes', () => {
  let redis: ServerProcess;
  let postgres: PostgresProcess;
  let svc: TestService;
  const clients: RedisClient[] = [];
  const pools: PgDb[] = [];
  beforeAll(async () => {
    [redis, postgres, svc] = await Promise.all([startRedis(), startPostgres(), startTestService()]);
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    for (const p of pools) await p.close();
    await svc?.close();
    await Promise.all([redis?.stop(), postgres?.stop()]);
  });

  it('concurrent calls on two nodes refresh once; the old refresh token is kept; invalid_grant marks the tool', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const key = randomBytes(32);
    const sandbox = svc.running.services.tools!.sandbox!;
    const config = loadConfig({ DATA_DIR: ':memory:' });
    const node = async () => {
      const c = await connectRedis(redis.url);
      clients.push(c);
      const db = await PgDb.open(postgres.url, { migrations: NODE_PG_MIGRATIONS, schema: prefix, poolSize: 4 });
      pools.push(db);
      return new ToolService({ repo: createPostgresToolRepo(db, c, prefix, new SecretBox(key)), log: silentLogger, clock: systemClock, config, sandbox, sandboxUrl: () => `${svc.url}/sandbox/providers` });
    };
    const [a, b] = [await node(), await node()];
    const principal: Principal = { organizationId: 'org_1', userId: 'u', role: 'admin', keyId: 'k', scopes: new Set(['mcp:access']) };
    // The service's public URL: the one redirect URI the sandbox identity provider has registered.
    const { tool, redirectUrl } = await a.connect(principal, 'email', { name: 'Inbox' }, svc.running.url);
    // The person approves at the consent page; the provider's redirect carries the code back.
    const page = await (await fetch(redirectUrl!)).text();
    const request = /name="request" value="([^"]+)"/.exec(page)![1]!;
    const action = /action="([^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&');
    const back = new URL((await fetch(action, { method: 'POST', body: new URLSearchParams({ request, email: 'nodes@shop.example', decision: 'approve' }), redirect: 'manual' })).headers.get('location')!);
    expect(back.origin).toBe(new URL(svc.running.url).origin);
    await b.callback({ state: back.searchParams.get('state')!, code: back.searchParams.get('code')! });
    const active = (await b.get(principal, tool.id));
    expect(active.status).toBe('active');

    // Refreshed before use when less than a minute is left, without waiting for a 401.
    const repo = createPostgresToolRepo(pools[0]!, clients[0]!, prefix, new SecretBox(key));
    const stored = await repo.getCredentials(tool.id);
    if (stored?.kind !== 'oauth') throw new Error('no oauth credentials');
    await repo.putCredentials(tool.id, { ...stored, expiresAt: Date.now() + 30_000 });
    const early = sandbox.identity.refreshGrants;
    await a.withToken(active, (t) => a.gmail.sandbox.listLabels(t));
    expect(sandbox.identity.refreshGrants).toBe(early + 1);
    const renewed = await repo.getCredentials(tool.id);
    expect(renewed?.kind === 'oauth' && renewed.accessToken !== stored.accessToken && renewed.refreshToken === stored.refreshToken).toBe(true);

    const before = sandbox.identity.refreshGrants;
    sandbox.identity.expireAccessTokens('nodes@shop.example');
    const calls = await Promise.all([...Array(8)].map((_, i) => (i % 2 === 0 ? a : b).withToken(active, (t) => a.gmail.sandbox.listLabels(t))));
    expect(calls.every((labels) => labels.some((l) => l.id === 'INBOX'))).toBe(true);
    expect(sandbox.identity.refreshGrants).toBe(before + 1);

    // The provider sent no new refresh token: the stored one still works for the next refresh.
    sandbox.identity.expireAccessTokens('nodes@shop.example');
    await b.withToken(active, (t) => b.gmail.sandbox.listLabels(t));
    expect(sandbox.identity.refreshGrants).toBe(before + 2);

    await sandbox.identity.revokeUser('nodes@shop.example');
    await expect(a.withToken(active, (t) => a.gmail.sandbox.listLabels(t))).rejects.toMatchObject({ code: 'reauthorization_required' });
    expect((await b.get(principal, tool.id)).status).toBe('reauthorization_required');
  });
});
