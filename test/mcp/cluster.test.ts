import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestService, type TestService } from '../harness/service.js';
import { startNats, startPostgres, startRedis, type PostgresProcess, type ServerProcess } from '../harness/servers.js';
import { clusterEnv } from '../harness/use-servers.js';
import { call, errorText, structured } from './helpers.js';

/**
 * Clustered nodes (real redis-server and nats-server) behind a round-robin
 * "load balancer": one MCP client session whose requests land on different
 * nodes, and survive a node being replaced, because the gateway keeps no
 * session state.
 */
describe('MCP gateway on a cluster: any node answers any request', () => {
  let redis: ServerProcess;
  let nats: ServerProcess;
  let postgres: PostgresProcess;
  const nodes: TestService[] = [];
  const env = (id: string) => ({
    ...clusterEnv({ redis, nats, postgres }, 'mcp'),
    NODE_ID: id,
    ACTOR_PARTITIONS: '8',
    ACTOR_LEASE_MS: '2000',
    SECRETS_KEY: '2'.repeat(64),
  });

  beforeAll(async () => {
    [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
    nodes.push(...(await Promise.all(['n1', 'n2'].map((id) => startTestService({ env: env(id) })))));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
    await Promise.all([redis?.stop(), nats?.stop(), postgres?.stop()]);
  });

  it('keeps one client working while its requests alternate between nodes and a node is replaced', async () => {
    const org = await nodes[0]!.createOrg('Clustered');
    const contact = await org.contact('4915300000001:42');
    const hits: string[] = [];
    let turn = 0;
    // Round robin over the live nodes; the client always talks to "the service".
    const balance: typeof fetch = (input, init) => {
      const node = nodes[turn++ % nodes.length]!;
      hits.push(node.url);
      const u = new URL(input instanceof Request ? input.url : String(input));
      return fetch(`${node.running.mcpUrl}${u.pathname}`, init);
    };
    const client = new Client({ name: 'lb-client', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://localhost/mcp/platform'), { fetch: balance, requestInit: { headers: { authorization: `Bearer ${org.adminKey}` } } }),
    );
    await client.listTools();

    const created = structured(await call(client, 'create_ticket', { subject: 'Across nodes', description: 'd', audienceExternalId: contact.audienceExternalId }));
    expect(structured(await call(client, 'get_ticket', { ticketId: created.ticketId }))).toEqual(created);
    expect(structured(await call(client, 'request_handover', { audienceExternalId: contact.audienceExternalId }))).toMatchObject({ success: true, status: 'queued' });
    // The conversation actor (wherever its partition lives) saw the first handover.
    expect(structured(await call(client, 'request_handover', { audienceExternalId: contact.audienceExternalId }))).toMatchObject({ success: false, reason: 'already_queued' });
    expect(new Set(hits).size).toBe(2);

    // Replace a node: the same client session goes on, no re-initialize.
    const gone = nodes.shift()!;
    await gone.close();
    nodes.push(await startTestService({ env: env('n3') }));
    hits.length = 0;
    const listed = structured(await call(client, 'list_tickets', { audienceExternalId: contact.audienceExternalId }));
    expect(listed.tickets.map((t: { ticketId: string }) => t.ticketId)).toEqual([created.ticketId]);
    const updated = structured(await call(client, 'update_ticket', { ticketId: created.ticketId, status: 'resolved' }));
    expect(updated.status).toBe('resolved');
    expect(errorText(await call(client, 'get_ticket', { ticketId: 'T-1-1' }))).toMatch(/not_found/);
    expect(new Set(hits)).toEqual(new Set(nodes.map((n) => n.url)));
    await client.close();
  });
});
