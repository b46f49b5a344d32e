import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { eventually } from '../events/contract.js';
import { startReceiver, type TestReceiver } from './receiver.js';

const env = { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_RETRY_MAX_DELAY_MS: '200', WEBHOOK_TIMEOUT_MS: '2000' };

describe('/api/v1/webhooks and /api/v1/resource over HTTP', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  const receivers: TestReceiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };
  beforeAll(async () => {
    svc = await startTestService({ env });
    a = await svc.createOrg('A');
    b = await svc.createOrg('B');
  });
  afterAll(async () => {
    await svc?.close();
    for (const r of receivers) await r.close();
  });

  it('registers after the challenge, shows the secret only once, 409 on the same URL in the organization', async () => {
    const r = await receiver();
    const res = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: r.url, events: ['resource.created', 'ticket.created'] } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), url: r.url, events: ['resource.created', 'ticket.created'], secret: expect.stringMatching(/^whsec_/) });
    expect(r.challenges).toHaveLength(1);
    expect(r.challenges[0]).toMatch(/^[0-9a-f]{32}$/);
    const got = await svc.call('GET', `/api/v1/webhooks/${res.body.id}`, { key: a.adminKey });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: res.body.id, url: r.url, status: 'active' });
    expect(got.body.secret).toBeUndefined();
    const list = await svc.call('GET', '/api/v1/webhooks', { key: a.adminKey });
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).toContain(res.body.id);
    expect(JSON.stringify(list.body)).not.toContain(res.body.secret);
    const dup = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: r.url, events: ['*'] } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('webhook_url_taken');
    // Another organization may register the same URL.
    expect((await svc.call('POST', '/api/v1/webhooks', { key: b.adminKey, body: { url: r.url, events: ['*'] } })).status).toBe(201);
  });

  it('answers 401 without a valid key and 403 without webhook:create', async () => {
    expect((await svc.call('POST', '/api/v1/webhooks', { body: { url: 'https://example.com', events: ['*'] } })).status).toBe(401);
    expect((await svc.call('GET', '/api/v1/webhooks', { key: 'org_nope' })).status).toBe(401);
    const noScope = await a.keyWith(['tickets:read']);
    const r = await svc.call('POST', '/api/v1/webhooks', { key: noScope, body: { url: 'https://example.com', events: ['*'] } });
    expect(r.status).toBe(403);
    expect((await svc.call('POST', '/api/v1/resource', { body: { name: 'x', type: 't', config: {} } })).status).toBe(401);
  });

  it('refuses bad registrations with a clear 400 (or 413), contacting nothing', async () => {
    const r = await receiver();
    const cases: [string, unknown, string][] = [
      ['not a URL', { url: 'not a url', events: ['*'] }, 'invalid_webhook_url'],
      ['ftp', { url: 'ftp://example.com/x', events: ['*'] }, 'invalid_webhook_url'],
      ['credentials', { url: 'https://user:pw@example.com/x', events: ['*'] }, 'invalid_webhook_url'],
      ['private address', { url: 'https://10.1.2.3/x', events: ['*'] }, 'invalid_webhook_url'],
      ['link-local metadata address', { url: 'https://169.254.169.254/latest', events: ['*'] }, 'invalid_webhook_url'],
      ['CGNAT', { url: 'https://100.64.0.1/', events: ['*'] }, 'invalid_webhook_url'],
      ['unique-local IPv6', { url: 'https://[fd00::1]/', events: ['*'] }, 'invalid_webhook_url'],
      ['IPv4-mapped IPv6', { url: 'https://[::ffff:10.0.0.1]/', events: ['*'] }, 'invalid_webhook_url'],
      ['unknown event', { url: r.url, events: ['resource.deleted'] }, 'invalid_events'],
      ['empty events', { url: r.url, events: [] }, 'invalid_events'],
      ['duplicate events', { url: r.url, events: ['ticket.created', 'ticket.created'] }, 'invalid_events'],
      ['missing url', { events: ['*'] }, 'validation_failed'],
      ['events not an array', { url: r.url, events: '*' }, 'validation_failed'],
      ['unknown field', { url: r.url, events: ['*'], secret: 'mine' }, 'validation_failed'],
    ];
    for (const [name, body, code] of cases) {
      const res = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body });
      expect(res.status, name).toBe(400);
      expect(res.body.success, name).toBe(false);
      expect(res.body.error.code, name).toBe(code);
    }
    const big = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: r.url, events: ['*'], pad: 'x'.repeat(300_000) } });
    expect(big.status).toBe(413);
    expect((await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, rawBody: '{"url":' })).status).toBe(400);
    expect(r.requests).toHaveLength(0);
    expect(r.challenges).toHaveLength(0);
  });

  it('refuses a URL that fails the challenge, saying why', async () => {
    const wrong = await receiver();
    const srv = await import('node:http');
    const liar = srv.createServer((_req, res) => res.writeHead(200).end('not the challenge'));
    await new Promise<void>((res) => liar.listen(0, '127.0.0.1', res));
    const port = (liar.address() as { port: number }).port;
    const notFound = srv.createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((res) => notFound.listen(0, '127.0.0.1', res));
    try {
      const r1 = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: `http://127.0.0.1:${port}/`, events: ['*'] } });
      expect(r1.status).toBe(400);
      expect(r1.body.error.code).toBe('webhook_challenge_failed');
      const r2 = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: `http://127.0.0.1:${(notFound.address() as { port: number }).port}/`, events: ['*'] } });
      expect(r2.body.error.message).toMatch(/HTTP 404/);
      await wrong.close();
      const r3 = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: wrong.url, events: ['*'] } });
      expect(r3.status).toBe(400);
      expect(r3.body.error.message).toMatch(/connection refused/);
      expect((await svc.call('GET', '/api/v1/webhooks', { key: a.adminKey })).body.webhooks.some((w: { url: string }) => w.url.includes(String(port)))).toBe(false);
    } finally {
      liar.close();
      notFound.close();
    }
  });

  it('delivers resource.created / resource.updated / ticket.created / ticket.updated end to end, with the delivery log readable and resendable', async () => {
    const r = await receiver();
    const reg = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: r.url, events: ['resource.created', 'resource.updated', 'ticket.created', 'ticket.updated'] } });
    r.setSecret(reg.body.secret);
    const created = await svc.call('POST', '/api/v1/resource', { key: a.adminKey, body: { name: 'CRM sync', type: 'integration', config: { region: 'eu' } } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'CRM sync', type: 'integration', createdAt: expect.any(String) });
    const updated = await svc.call('PATCH', `/api/v1/resource/${created.body.id}`, { key: a.adminKey, body: { config: { region: 'us' } } });
    expect(updated.status).toBe(200);
    expect(updated.body.config).toEqual({ region: 'us' });
    const ticket = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'hi', description: 'there' } });
    expect(ticket.status).toBe(201);
    expect((await svc.call('PATCH', `/v1/tickets/${ticket.body.ticketId}`, { key: a.adminKey, body: { status: 'resolved' } })).status).toBe(200);
    await eventually(async () => (r.delivered().size === 4 ? true : undefined));
    const bodies = r.requests.map((q) => JSON.parse(q.body.toString('utf8')));
    expect(bodies.map((x) => x.type).sort()).toEqual(['resource.created', 'resource.updated', 'ticket.created', 'ticket.updated']);
    expect(bodies.find((x) => x.type === 'ticket.updated').data.status).toBe('resolved');
    expect(r.requests.every((q) => q.signaturesValid)).toBe(true);
    const rc = bodies.find((x) => x.type === 'resource.created');
    expect(rc).toMatchObject({ organizationId: a.id, data: { id: created.body.id, name: 'CRM sync', config: { region: 'eu' } } });
    expect(bodies.find((x) => x.type === 'ticket.created').data.ticketId).toBe(ticket.body.ticketId);

    // The receiver answers before the dispatcher records the outcome.
    const deliveries = await eventually(async () => {
      const res = await svc.call('GET', `/api/v1/webhooks/${reg.body.id}/deliveries?status=succeeded`, { key: a.adminKey });
      expect(res.status).toBe(200);
      return res.body.total === 4 ? res : undefined;
    });
    const d = deliveries.body.deliveries[0];
    expect(d.attempts[0]).toMatchObject({ status: 200, error: null, latencyMs: expect.any(Number) });
    const one = await svc.call('GET', `/api/v1/webhooks/${reg.body.id}/deliveries/${d.id}`, { key: a.adminKey });
    expect(one.body.id).toBe(d.id);
    const resent = await svc.call('POST', `/api/v1/webhooks/${reg.body.id}/deliveries/${d.id}/resend`, { key: a.adminKey });
    expect(resent.status).toBe(202);
    await eventually(async () => (r.delivered().get(d.eventId) === 2 ? true : undefined));
    expect((await svc.call('GET', `/api/v1/webhooks/${reg.body.id}/deliveries?status=bogus`, { key: a.adminKey })).status).toBe(400);
  });

  it('resources: 409 on the same name (any case), 400 on bad input, 404 for unknown ids', async () => {
    const ok = await svc.call('POST', '/api/v1/resource', { key: a.adminKey, body: { name: 'Billing', type: 'svc', config: {} } });
    expect(ok.status).toBe(201);
    const dup = await svc.call('POST', '/api/v1/resource', { key: a.adminKey, body: { name: ' billing ', type: 'svc', config: {} } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('resource_name_taken');
    expect((await svc.call('POST', '/api/v1/resource', { key: b.adminKey, body: { name: 'Billing', type: 'svc', config: {} } })).status).toBe(201);
    const bad: [string, unknown][] = [
      ['missing config', { name: 'n1', type: 't' }],
      ['config not an object', { name: 'n2', type: 't', config: [1] }],
      ['empty name', { name: '  ', type: 't', config: {} }],
      ['type missing', { name: 'n3', config: {} }],
      ['oversized config', { name: 'n4', type: 't', config: { blob: 'x'.repeat(70_000) } }],
      ['unknown field', { name: 'n5', type: 't', config: {}, id: 'mine' }],
    ];
    for (const [name, body] of bad) {
      const r = await svc.call('POST', '/api/v1/resource', { key: a.adminKey, body });
      expect(r.status, name).toBe(400);
      expect(r.body.error.code, name).toBe('validation_failed');
    }
    const other = await svc.call('POST', '/api/v1/resource', { key: a.adminKey, body: { name: 'Other', type: 'svc', config: {} } });
    const rename = await svc.call('PATCH', `/api/v1/resource/${other.body.id}`, { key: a.adminKey, body: { name: 'BILLING' } });
    expect(rename.status).toBe(409);
    expect((await svc.call('PATCH', `/api/v1/resource/${other.body.id}`, { key: a.adminKey, body: {} })).status).toBe(400);
    expect((await svc.call('GET', '/api/v1/resource/00000000-0000-4000-8000-000000000000', { key: a.adminKey })).status).toBe(404);
    expect((await svc.call('GET', '/api/v1/resource/not-a-uuid', { key: a.adminKey })).status).toBe(404);
  });

  it("keeps organizations apart on every endpoint: B's key can neither see nor change A's webhooks, deliveries or resources", async () => {
    const r = await receiver();
    const reg = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: r.url, events: ['resource.created'] } });
    r.setSecret(reg.body.secret);
    const res = await svc.call('POST', '/api/v1/resource', { key: a.adminKey, body: { name: 'isolated', type: 't', config: { secret: 'a-only' } } });
    await eventually(async () => (r.delivered().size === 1 ? true : undefined));
    const deliveries = await svc.call('GET', `/api/v1/webhooks/${reg.body.id}/deliveries`, { key: a.adminKey });
    const d = deliveries.body.deliveries[0];
    const id = reg.body.id;
    const attempts: [string, string, unknown?][] = [
      ['GET', `/api/v1/webhooks/${id}`],
      ['PATCH', `/api/v1/webhooks/${id}`, { enabled: false }],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
      ['GET', `/api/v1/webhooks/${id}/deliveries`],
      ['GET', `/api/v1/webhooks/${id}/deliveries/${d.id}`],
      ['POST', `/api/v1/webhooks/${id}/deliveries/${d.id}/resend`],
      ['DELETE', `/api/v1/webhooks/${id}`],
      ['GET', `/api/v1/resource/${res.body.id}`],
      ['PATCH', `/api/v1/resource/${res.body.id}`, { name: 'stolen' }],
    ];
    for (const [method, path, body] of attempts) {
      const out = await svc.call(method, path, { key: b.adminKey, body });
      expect(out.status, `${method} ${path}`).toBe(404);
    }
    const bList = await svc.call('GET', '/api/v1/webhooks', { key: b.adminKey });
    expect(bList.body.webhooks.some((w: { id: string }) => w.id === id)).toBe(false);
    const bRes = await svc.call('GET', '/api/v1/resource?limit=100', { key: b.adminKey });
    expect(bRes.body.resources.some((x: { id: string }) => x.id === res.body.id)).toBe(false);
    // A's registration and resource are untouched; B's resource events never reach A's receiver.
    expect((await svc.call('GET', `/api/v1/webhooks/${id}`, { key: a.adminKey })).body.status).toBe('active');
    expect((await svc.call('GET', `/api/v1/resource/${res.body.id}`, { key: a.adminKey })).body.name).toBe('isolated');
    await svc.call('POST', '/api/v1/resource', { key: b.adminKey, body: { name: 'b-thing', type: 't', config: {} } });
    await new Promise((x) => setTimeout(x, 300));
    expect(r.delivered().size).toBe(1);
  });

  it('rotates the secret, disables and re-enables, and deletes a registration', async () => {
    const r = await receiver();
    const reg = await svc.call('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: r.url, events: ['*'] } });
    const rot = await svc.call('POST', `/api/v1/webhooks/${reg.body.id}/rotate-secret`, { key: a.adminKey });
    expect(rot.status).toBe(200);
    expect(rot.body.secret).toMatch(/^whsec_/);
    expect(rot.body.secret).not.toBe(reg.body.secret);
    const off = await svc.call('PATCH', `/api/v1/webhooks/${reg.body.id}`, { key: a.adminKey, body: { enabled: false } });
    expect(off.body).toMatchObject({ status: 'disabled', disabledReason: 'disabled by its owner' });
    const on = await svc.call('PATCH', `/api/v1/webhooks/${reg.body.id}`, { key: a.adminKey, body: { enabled: true, events: ['ticket.updated'] } });
    expect(on.body).toMatchObject({ status: 'active', events: ['ticket.updated'], disabledReason: null });
    expect((await svc.call('PATCH', `/api/v1/webhooks/${reg.body.id}`, { key: a.adminKey, body: { events: ['nope'] } })).status).toBe(400);
    expect((await svc.call('DELETE', `/api/v1/webhooks/${reg.body.id}`, { key: a.adminKey })).status).toBe(204);
    expect((await svc.call('GET', `/api/v1/webhooks/${reg.body.id}`, { key: a.adminKey })).status).toBe(404);
    expect((await svc.call('DELETE', `/api/v1/webhooks/${reg.body.id}`, { key: a.adminKey })).status).toBe(404);
  });
});

describe('webhook registration without the development flag', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.close());

  it('refuses http and loopback receivers', async () => {
    const org = await svc.createOrg('NoDev');
    for (const url of ['http://example.com/hook', 'https://127.0.0.1/hook', 'https://localhost/hook', 'https://[::1]/hook']) {
      const r = await svc.call('POST', '/api/v1/webhooks', { key: org.adminKey, body: { url, events: ['*'] } });
      expect(r.status, url).toBe(400);
      expect(r.body.error.code, url).toBe('invalid_webhook_url');
    }
  });
});
