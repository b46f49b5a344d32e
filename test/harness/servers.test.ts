import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'redis';
import { connect } from '@nats-io/transport-node';
import { startNats, startRedis, type ServerProcess } from './servers.js';

describe('test harness', () => {
  let redis: ServerProcess;
  let nats: ServerProcess;
  beforeAll(async () => {
    [redis, nats] = await Promise.all([startRedis(), startNats()]);
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), nats?.stop()]);
  });

  it('starts redis-server on a free port, not the shared 6379', async () => {
    expect(redis.port).not.toBe(6379);
    const c = createClient({ url: redis.url });
    await c.connect();
    await c.set('k', 'v');
    expect(await c.get('k')).toBe('v');
    await c.quit();
  });

  it('starts nats-server with JetStream on a free port, not the shared 4222', async () => {
    expect(nats.port).not.toBe(4222);
    const nc = await connect({ servers: nats.url });
    expect(nc.info?.jetstream).toBe(true);
    await nc.close();
  });
});
