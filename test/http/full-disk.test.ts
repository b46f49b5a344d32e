import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';

/**
 * An embedded node whose disk fills up: SQLite's own page limit stands in for
 * the disk (a write past it fails with SQLITE_FULL, as on a full disk).
 */
describe('an embedded node on a full disk, over HTTP', () => {
  let dir: string;
  let svc: TestService;
  let org: TestOrg;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-full-http-'));
    svc = await startTestService({ env: { DATA_DIR: dir } });
    org = await svc.createOrg('Full');
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const raw = () => {
    const backing = svc.running.services.backing;
    if (backing.kind !== 'sqlite') throw new Error('expected an embedded node');
    return backing.db.raw;
  };
  const create = (subject: string, description = 'on the third floor') => svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject, description } });

  it('answers 503 storage_unavailable with Retry-After, keeps nothing of the ticket or its event, and takes writes again once there is room', async () => {
    expect((await create('kept')).status).toBe(201);
    const before = await svc.call('GET', '/v1/tickets?limit=100', { key: org.adminKey });

    raw().pragma(`max_page_count = ${raw().pragma('page_count', { simple: true }) as number}`);
    const refused = await create('never-stored-7f3', 'x'.repeat(20_000));
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('storage_unavailable');
    expect(refused.body.error.message).not.toMatch(/\n\s+at /);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    const during = await svc.call('GET', '/v1/tickets?limit=100', { key: org.adminKey });
    expect(during.status).toBe(200);
    expect(during.body.tickets.map((t: { title: string }) => t.title)).toEqual(before.body.tickets.map((t: { title: string }) => t.title));
    for (const sql of ['SELECT count(*) AS n FROM outbox WHERE event LIKE ?', 'SELECT count(*) AS n FROM events WHERE body LIKE ?']) {
      expect((raw().prepare(sql).get('%never-stored-7f3%') as { n: number }).n).toBe(0);
    }

    raw().pragma('max_page_count = 1073741823');
    const after = await create('after');
    expect(after.status).toBe(201);
    const list = await svc.call('GET', '/v1/tickets?limit=100', { key: org.adminKey });
    expect(list.body.tickets.map((t: { title: string }) => t.title)).toEqual(['after', 'kept']);
  });
});
