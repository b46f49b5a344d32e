import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../harness/service.js';
import { messagingOrg, orderUpdate, startMessagingService } from '../messaging/messaging-helpers.js';
import { waitFor } from '../events/contract.js';
import { startReceiver, type TestReceiver } from '../webhooks/receiver.js';

/** The value of one series in a Prometheus text exposition, 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const scrape = async (svc: TestService, token?: string) => (await fetch(`${svc.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} })).text();

describe('/metrics (prom-client)', () => {
  let svc: TestService;
  let receiver: TestReceiver;
  beforeAll(async () => {
    svc = await startMessagingService({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_RETRY_MAX_DELAY_MS: '100' } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.close();
  });

  it('counts HTTP requests and their latency by method, route template and status, never by raw path', async () => {
    const org = await svc.createOrg('Http');
    for (let i = 0; i < 3; i++) expect((await svc.call('GET', `/v1/tickets/T-000000-00000${i}`, { key: org.adminKey })).status).toBe(404);
    expect((await fetch(`${svc.url}/v1/nothing-here-${Date.now()}`)).status).toBe(404);
    const text = await scrape(svc);
    expect(sample(text, 'switchboard_http_requests_total{method="GET",route="/v1/tickets/:ticketId",status="404"}')).toBe(3);
    expect(sample(text, 'switchboard_http_request_duration_seconds_count{method="GET",route="/v1/tickets/:ticketId",status="404"}')).toBe(3);
    expect(sample(text, 'switchboard_http_requests_total{method="GET",route="(unmatched)",status="404"}')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('T-000000-000001');
    expect(text).not.toContain('nothing-here');
    // Process metrics from prom-client's defaults.
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
  });

  it('counts webhook deliveries by outcome and the events’ lag into the fan-out', async () => {
    const org = await svc.createOrg('Hooks');
    const reg = await svc.call('POST', '/api/v1/webhooks', { key: org.adminKey, body: { url: receiver.url, events: ['ticket.created'] } });
    expect(reg.status).toBe(201);
    receiver.setSecret(reg.body.secret);
    receiver.behave((n) => (n === 1 ? { status: 500 } : { status: 200 }));
    const before = await scrape(svc);
    expect((await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'metered', description: 'd' } })).status).toBe(201);
    await waitFor(() => receiver.delivered().size === 1, 10_000, 'the delivery');
    let text = '';
    for (let i = 0; i < 100 && sample(text, 'switchboard_webhook_deliveries_total{outcome="succeeded"}') < 1; i++) {
      text = await scrape(svc);
      await new Promise((r) => setTimeout(r, 20));
    }
    const delta = (s: string) => sample(text, s) - sample(before, s);
    expect(delta('switchboard_webhook_deliveries_total{outcome="retry"}')).toBe(1);
    expect(delta('switchboard_webhook_deliveries_total{outcome="succeeded"}')).toBe(1);
    expect(delta('switchboard_webhook_delivery_duration_seconds_count{outcome="succeeded"}')).toBe(1);
    expect(delta('switchboard_event_lag_seconds_count{consumer="webhooks"}')).toBeGreaterThanOrEqual(1);
  });

  it('counts template sends by category and outcome, and the credits they cost', async () => {
    const org = await messagingOrg(svc, 'Sends', 1);
    const before = await scrape(svc);
    expect((await svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, '4915900000101') })).status).toBe(201);
    expect((await svc.call('POST', '/v2/wa/template', { key: org.adminKey, body: orderUpdate(org.channelId, '4915900000102') })).status).toBe(402);
    const text = await scrape(svc);
    const delta = (s: string) => sample(text, s) - sample(before, s);
    expect(delta('switchboard_template_sends_total{category="UTILITY",outcome="sent"}')).toBe(1);
    expect(delta('switchboard_template_sends_total{category="UTILITY",outcome="insufficient_credits"}')).toBe(1);
    expect(delta('switchboard_template_credits_total{category="UTILITY"}')).toBe(1);
    // Embedded: the send committed to the node's database, and no command held its commits too long.
    expect(delta('switchboard_sqlite_commits')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('# TYPE switchboard_sqlite_units_cut_short gauge');
    expect(sample(text, 'switchboard_sqlite_units_cut_short')).toBe(0);
    expect(sample(text, 'switchboard_sqlite_failed_commits')).toBe(0);
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  const token = 'metrics-token-0123456789';
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { METRICS_TOKEN: token } });
  });
  afterAll(() => svc?.close());

  it('answers 401 in the error shape without the token or with a wrong one, and the metrics with it', async () => {
    const none = await svc.call('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ success: false, error: { code: 'unauthorized' } });
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect((await svc.call('GET', '/metrics', { key: 'metrics-token-wrong' })).status).toBe(401);
    const ok = await svc.call('GET', '/metrics', { key: token });
    expect(ok.status).toBe(200);
    expect(String(ok.body)).toContain('# TYPE switchboard_http_requests_total counter');
  });
});
