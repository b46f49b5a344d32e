import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startNats, startPostgres, startRedis, type PostgresProcess, type ServerProcess } from '../harness/servers.js';
import { clusterEnv } from '../harness/use-servers.js';
import { FREE_SANDBOX_PORTS } from './launch.js';

/**
 * The docker-compose topology, with processes: real redis-server and
 * nats-server, three `src/main.ts` nodes, and calls spread over the nodes as
 * a load balancer would. One node is SIGKILLed midway; the others carry on and
 * every webhook event still arrives.
 */

const OPERATOR = 'cluster-operator-token-0123456789';

interface Node {
  id: string;
  url: string;
  proc: ChildProcess;
  output: () => string;
}

async function call(url: string, method: string, path: string, opts: { key?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method,
    headers: { ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}), ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Retries while the cluster answers with a retryable 503 (a partition moving after a node died). */
async function callRetrying(url: string, method: string, path: string, opts: { key?: string; body?: unknown } = {}) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await call(url, method, path, opts).catch(() => ({ status: 599, body: undefined }));
    if ((r.status !== 503 && r.status !== 599) || Date.now() > deadline) return r;
    await new Promise((res) => setTimeout(res, 250));
  }
}

describe('three service processes on shared Redis and NATS', () => {
  let redis: ServerProcess;
  let nats: ServerProcess;
  let postgres: PostgresProcess;
  const nodes: Node[] = [];
  let receiver: Server;
  const received: any[] = [];

  beforeAll(async () => {
    [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
    for (let i = 1; i <= 3; i++) {
      const port = await freePort();
      const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: {
          PATH: process.env.PATH,
          PORT: String(port),
          HOST: '127.0.0.1',
          NODE_ID: `node${i}`,
          ...clusterEnv({ redis, nats, postgres }, 'sb'),
          OPERATOR_TOKEN: OPERATOR,
          SECRETS_KEY: 'b'.repeat(64),
          SANDBOX_NETWORK: 'true',
          ...FREE_SANDBOX_PORTS,
          WEBHOOK_ALLOW_LOOPBACK: 'true',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      proc.stdout!.on('data', (d) => (out += d));
      proc.stderr!.on('data', (d) => (out += d));
      nodes.push({ id: `node${i}`, url: `http://127.0.0.1:${port}`, proc, output: () => out });
    }
    for (const n of nodes) {
      const deadline = Date.now() + 40_000;
      while ((await call(n.url, 'GET', '/readyz').catch(() => ({ status: 0 }))).status !== 200) {
        if (Date.now() > deadline) throw new Error(`${n.id} never became ready:\n${n.output()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const url = new URL(req.url!, 'http://x');
        if (req.method === 'GET') return res.end(url.searchParams.get('challenge') ?? '');
        received.push({ id: req.headers['webhook-id'], ...JSON.parse(body) });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) n.proc.kill('SIGKILL');
    receiver?.close();
    await Promise.all([redis?.stop(), nats?.stop(), postgres?.stop()]);
  });

  it('serves every flow from any node, and keeps serving after a node is killed', async () => {
    const [n1, n2, n3] = nodes as [Node, Node, Node];
    const op = (n: Node, path: string, body?: unknown) => call(n.url, body === undefined ? 'GET' : 'POST', path, { key: OPERATOR, body });

    const org = (await op(n1, '/admin/v1/organizations', { name: 'Cluster Co' })).body;
    const user = (await op(n2, `/admin/v1/organizations/${org.id}/users`, { email: 'a@c.io', name: 'A', role: 'admin', password: 'a long password' })).body;
    const key = (await op(n3, `/admin/v1/organizations/${org.id}/api-keys`, { userId: user.id, scopes: ['tickets:create', 'tickets:read', 'tickets:update', 'message:send', 'conversation:handover:request', 'conversation:handover:open', 'webhook:create'] })).body.key;
    const channel = (await op(n1, `/admin/v1/organizations/${org.id}/channels`, { kind: 'whatsapp_cloud', name: 'Sandbox', network: 'sandbox' })).body;
    expect(channel.id).toBeTruthy();
    expect((await op(n2, `/admin/v1/organizations/${org.id}/credits/top-up`, { amount: 100 })).status).toBe(200);
    const port = (receiver.address() as AddressInfo).port;
    const hook = await call(n3.url, 'POST', '/api/v1/webhooks', { key, body: { url: `http://127.0.0.1:${port}/hook`, events: ['*'] } });
    expect(hook.status).toBe(201);

    // Tickets across nodes.
    const t = (await call(n1.url, 'POST', '/v1/tickets', { key, body: { subject: 'Across nodes', description: 'd' } })).body;
    expect((await call(n2.url, 'GET', `/v1/tickets/${t.ticketId}`, { key })).body.title).toBe('Across nodes');
    expect((await call(n3.url, 'PATCH', `/v1/tickets/${t.ticketId}`, { key, body: { status: 'in_progress' } })).body.status).toBe('in_progress');

    // Messaging: template on one node, the customer answers through another, a button send from the third.
    const tpl = await call(n1.url, 'POST', '/v2/wa/template', {
      key,
      body: { channelId: channel.id, to: '4915100000042', template: { name: 'hello_world', language: { code: 'en_US', policy: 'deterministic' } } },
    });
    expect(tpl.status, JSON.stringify(tpl.body)).toBe(201);
    const reply = await call(n2.url, 'POST', `/v1/sandbox/channels/${channel.id}/customers/4915100000042/messages`, { key, body: { text: 'hi there' } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const buttons = await call(n3.url, 'POST', '/v1/messages/buttons', {
      key,
      body: { channelId: channel.id, to: '4915100000042', interactive: { body: { text: 'Pick one' }, buttons: [{ id: 'a', title: 'A' }] } },
    });
    expect(buttons.body).toMatchObject({ success: true });

    // Handover: exactly one success across nodes.
    const aeid = `4915100000042:${channel.phoneNumberId}`;
    const attempts = await Promise.all(nodes.map((n) => call(n.url, 'POST', '/v1/handover', { key, body: { audienceExternalId: aeid } })));
    expect(attempts.filter((r) => r.body?.success === true)).toHaveLength(1);

    // A node dies; the rest take over its partitions.
    n1.proc.kill('SIGKILL');
    const back = await callRetrying(n2.url, 'PATCH', '/v1/handover/open', { key, body: { audienceExternalId: aeid } });
    expect(back.body).toEqual({ success: true });
    const again = await callRetrying(n3.url, 'POST', '/v1/messages/buttons', {
      key,
      body: { channelId: channel.id, to: '4915100000042', interactive: { body: { text: 'Still here' }, buttons: [{ id: 'b', title: 'B' }] } },
    });
    expect(again.body).toMatchObject({ success: true });
    const t2 = await callRetrying(n2.url, 'POST', '/v1/tickets', { key, body: { subject: 'After the crash', description: 'd' } });
    expect(t2.status).toBe(201);
    expect((await call(n3.url, 'GET', '/v1/tickets', { key })).body.total).toBe(2);

    // Every kind of event reached the webhook, whichever node produced or delivered it.
    const want = ['ticket.created', 'ticket.updated', 'message.sent', 'message_status', 'inbound_message', 'handover.requested', 'handover.opened'];
    const deadline = Date.now() + 60_000;
    while (!want.every((w) => received.some((e) => e.type === w)) || received.filter((e) => e.type === 'ticket.created').length < 2) {
      if (Date.now() > deadline) throw new Error(`missing events; got ${[...new Set(received.map((e) => e.type))].join(', ')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(received.every((e) => e.organizationId === org.id)).toBe(true);
  }, 150_000);
});
