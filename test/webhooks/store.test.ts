import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openNodeDbIn } from '../../src/store/index.js';
import { createSqliteWebhookStore } from '../../src/store/webhooks/sqlite.js';
import { createRedisWebhookStore } from '../../src/store/webhooks/redis.js';
import { useRedisClients } from '../harness/use-servers.js';
import { makeDelivery, makeRegistration, runWebhookStoreContract } from './store-contract.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
runWebhookStoreContract('embedded (on disk)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-whstore-'));
  dirs.push(dir);
  return createSqliteWebhookStore(await openNodeDbIn(dir));
});

const redis = useRedisClients();
runWebhookStoreContract('redis', async () => {
  return createRedisWebhookStore(await redis.client(), `t${randomUUID().slice(0, 8)}`);
});

describe('embedded webhook store', () => {
  it('rebuilds the schedule of pending deliveries after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-whstore-'));
    dirs.push(dir);
    const s1 = createSqliteWebhookStore(await openNodeDbIn(dir));
    const r = makeRegistration('orgA');
    await s1.createRegistration(r);
    const d = makeDelivery(r);
    await s1.enqueueDeliveries([d, makeDelivery(r, { status: 'succeeded', nextAttemptAt: null })]);
    // No close: a crash after the acknowledgement.
    const s2 = createSqliteWebhookStore(await openNodeDbIn(dir));
    const lane = { organizationId: 'orgA', registrationId: r.id };
    expect(await s2.claimLanes(Date.now(), 10, 'n', 1000)).toEqual([lane]);
    expect(await s2.dueDeliveries(lane, Date.now(), 10)).toEqual([d.id]);
  });
});
