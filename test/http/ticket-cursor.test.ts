import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';

/** `GET /v1/tickets` paged by cursor beside page numbers, embedded and clustered. */
function cursorSuite(name: string, env: () => Record<string, string>) {
  describe(`ticket list cursor (${name})`, () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService({ env: env() });
    });
    afterAll(() => svc?.close());

    it('continues after the last ticket of the page whatever is created meanwhile; page numbers still work; never another organization', async () => {
      const a = await svc.createOrg('A');
      const b = await svc.createOrg('B');
      const make = async (key: string, subject: string) => expect((await svc.call('POST', '/v1/tickets', { key, body: { subject, description: 'd' } })).status).toBe(201);
      for (let i = 0; i < 5; i++) await make(a.adminKey, `t${i}`);
      await make(b.adminKey, 'b-only');
      const titles = (body: { tickets: { title: string }[] }) => body.tickets.map((t) => t.title);
      const p1 = await svc.call('GET', '/v1/tickets?limit=2', { key: a.adminKey });
      expect(titles(p1.body)).toEqual(['t4', 't3']);
      expect(p1.body.nextCursor).toMatch(/^\d+$/);
      await make(a.adminKey, 'new');
      const p2 = await svc.call('GET', `/v1/tickets?limit=2&cursor=${p1.body.nextCursor}`, { key: a.adminKey });
      expect(titles(p2.body)).toEqual(['t2', 't1']);
      expect(p2.body.total).toBe(6);
      const p3 = await svc.call('GET', `/v1/tickets?limit=2&cursor=${p2.body.nextCursor}`, { key: a.adminKey });
      expect(titles(p3.body)).toEqual(['t0']);
      expect(p3.body.nextCursor).toBeNull();
      // Page numbers as before (the new ticket shifts them).
      expect(titles((await svc.call('GET', '/v1/tickets?limit=2&page=2', { key: a.adminKey })).body)).toEqual(['t3', 't2']);
      // Another organization's list under A's cursor is its own.
      const other = await svc.call('GET', `/v1/tickets?limit=5&cursor=${p1.body.nextCursor}`, { key: b.adminKey });
      expect(other.body.tickets.every((t: { organizationId: string }) => t.organizationId === b.id)).toBe(true);
      for (const bad of ['abc', '-1', '1.5', '9'.repeat(16)]) expect((await svc.call('GET', `/v1/tickets?cursor=${bad}`, { key: a.adminKey })).status, bad).toBe(400);
    });
  });
}

cursorSuite('embedded', () => ({}));

const servers = useClusterServers();
cursorSuite('clustered', () => ({ ...servers.env('tcur'), SECRETS_KEY: 'a'.repeat(64) }));
