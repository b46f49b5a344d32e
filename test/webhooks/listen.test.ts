import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { waitFor } from '../events/contract.js';
import { main as adminCli } from '../../src/cli/admin.js';
import { startReceiver, type TestReceiver } from './receiver.js';

/** Local webhook development: the loopback refusal says what to do, and `webhooks listen` forwards without registering. */
describe('webhooks for local development', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let receiver: TestReceiver;
  beforeAll(async () => {
    // As deployed: loopback receivers are not allowed.
    svc = await startTestService();
    a = await svc.createOrg('A');
    b = await svc.createOrg('B');
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.close();
  });

  it('refuses a loopback webhook URL with a message naming WEBHOOK_ALLOW_LOOPBACK and webhooks listen', async () => {
    for (const url of [receiver.url, receiver.url.replace('127.0.0.1', 'localhost'), 'https://127.0.0.1/hook']) {
      const res = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url, events: ['*'] } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_webhook_url');
      expect(res.body.error.message).toContain('WEBHOOK_ALLOW_LOOPBACK=true');
      expect(res.body.error.message).toContain('webhooks listen --forward-to');
    }
  });

  it("webhooks listen forwards the organization's events to a local URL, signed with the session secret, registering nothing", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const stop = new AbortController();
    const running = adminCli(['webhooks', 'listen', '--forward-to', receiver.url], { SB_URL: svc.url, SB_KEY: a.adminKey }, (s) => out.push(s), (s) => err.push(s), stop.signal);
    try {
      await waitFor(() => out.join('\n').includes('Ready.'), 10_000, 'the listener to be ready');
      const secret = /^\s+(whsec_\S+)$/m.exec(out.join('\n'))![1]!;
      receiver.setSecret(secret);

      // Another organization's event first: the log is ordered, so had it leaked it would arrive before A's.
      expect((await svc.call('POST', '/v1/tickets', { key: b.adminKey, body: { subject: 'B only', description: 'd' } })).status).toBe(201);
      const created = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'forward me', description: 'd' } });
      expect(created.status).toBe(201);
      await waitFor(() => receiver.requests.some((r) => r.method === 'POST'), 10_000, 'a forwarded event');
      const posts = receiver.requests.filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(1);
      const req = posts[0];
      expect(req!.signaturesValid).toBe(true);
      const body = JSON.parse(req!.body.toString());
      expect(Object.keys(body).sort()).toEqual(['createdAt', 'data', 'id', 'organizationId', 'type']);
      expect(body).toMatchObject({ type: 'ticket.created', organizationId: a.id, data: { ticketId: created.body.ticketId } });
      expect(req!.headers['webhook-id']).toBe(body.id);
      await waitFor(() => /ticket\.created\s+\S+\s+-> 200/.test(out.join('\n')), 5_000, 'the forward to be printed');

      // Nothing was registered with the service.
      expect((await svc.call('GET', '/api/v1/webhooks', { key: a.adminKey })).body.webhooks).toEqual([]);
    } finally {
      stop.abort();
    }
    expect(await running).toBe(0);
  });

  it('webhooks listen stops with a clear message for a key that may not watch events', async () => {
    const key = await a.keyWith(['tickets:read']);
    const err: string[] = [];
    const code = await adminCli(['webhooks', 'listen', '--forward-to', receiver.url], { SB_URL: svc.url, SB_KEY: key }, () => {}, (s) => err.push(s));
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(/cannot listen: 403: .*inbox:read/);
  });
});
