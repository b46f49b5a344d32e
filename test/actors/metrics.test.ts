import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../../src/metrics.js';
import { startTestService, type TestService } from '../harness/service.js';
import { startNats, startPostgres, startRedis, type PostgresProcess, type ServerProcess } from '../harness/servers.js';
import { clusterEnv } from '../harness/use-servers.js';

describe('metrics registry', () => {
  it('renders counters, gauges read at scrape time and histograms in the Prometheus text format (prom-client)', async () => {
    const m = new MetricsRegistry({ defaultMetrics: false });
    m.counter('jobs_total', 'Jobs done.', ['kind']).inc({ kind: 'a"b' }, 2);
    let depth = 3;
    m.gauge('queue_depth', 'Waiting.', () => depth);
    m.histogram('latency_seconds', 'Latency.', ['type'], [0.1, 1]).observe({ type: 'x' }, 0.5);
    depth = 7;
    const text = await m.render();
    expect(text).toContain('# TYPE jobs_total counter\njobs_total{kind="a\\"b"} 2');
    expect(text).toContain('# TYPE queue_depth gauge\nqueue_depth 7');
    expect(text).toContain('latency_seconds_bucket{le="0.1",type="x"} 0\nlatency_seconds_bucket{le="1",type="x"} 1\nlatency_seconds_bucket{le="+Inf",type="x"} 1\nlatency_seconds_sum{type="x"} 0.5\nlatency_seconds_count{type="x"} 1');
  });

  it('hands back the same counter for the same name and refuses one name as two types', () => {
    const m = new MetricsRegistry({ defaultMetrics: false });
    expect(m.counter('x', 'x')).toBe(m.counter('x', 'x'));
    expect(() => m.histogram('x', 'x')).toThrow();
    expect(() => m.gauge('x', 'x', () => 1)).toThrow();
  });
});

describe('/metrics and /readyz of a node', () => {
  let svc: TestService;
  afterAll(() => svc?.close());

  it('exposes actor count, mailbox depth, partitions owned and command latency', async () => {
    svc = await startTestService({ env: { ACTOR_PARTITIONS: '8' } });
    const org = await svc.createOrg('M');
    const c = await org.contact('15550009999:1065401');
    expect((await svc.call('POST', '/v1/handover', { key: org.adminKey, body: { audienceExternalId: c.audienceExternalId } })).body).toEqual({ success: true });
    const res = await fetch(`${svc.url}/metrics`);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('# TYPE switchboard_actors_active gauge');
    expect(text).toMatch(/^switchboard_actors_active 1$/m);
    expect(text).toMatch(/^switchboard_actor_mailbox_depth 0$/m);
    expect(text).toMatch(/^switchboard_actor_partitions_owned 8$/m);
    expect(text).toMatch(/^switchboard_actor_command_duration_seconds_count\{type="conversation",outcome="ok"\} 1$/m);
  });
});

describe('/readyz in clustered mode', () => {
  let redis: ServerProcess;
  let nats: ServerProcess;
  let postgres: PostgresProcess;
  let svc: TestService;
  beforeAll(async () => {
    [redis, nats, postgres] = await Promise.all([startRedis(), startNats(), startPostgres()]);
  });
  afterAll(async () => {
    await svc?.close();
    await Promise.all([redis?.stop(), nats?.stop(), postgres?.stop()]);
  });

  it('reports NATS, the actor store and placement, and turns not ready when NATS is gone', async () => {
    svc = await startTestService({ env: { ...clusterEnv({ redis, nats, postgres }, 'rz'), NODE_ID: 'rz1', SECRETS_KEY: '0'.repeat(64) } });
    const ok = await svc.call('GET', '/readyz');
    expect(ok.status).toBe(200);
    expect(ok.body.checks).toMatchObject({ nats: 'ok', actor_store: 'ok', actors: 'ok', redis: 'ok', postgres: 'ok' });
    await nats.stop();
    const down = await svc.call('GET', '/readyz');
    expect(down.status).toBe(503);
    expect(down.body.checks.nats).not.toBe('ok');
  });
});
