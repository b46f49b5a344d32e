import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';

/** A ticket's activity and comments over REST, embedded and clustered. */
function activitySuite(name: string, env: () => Record<string, string>) {
  describe(`ticket activity API (${name})`, () => {
    let svc: TestService;
    let a: TestOrg;
    beforeAll(async () => {
      svc = await startTestService({ env: env() });
      a = await svc.createOrg('A');
    });
    afterAll(() => svc?.close());

    const create = async (key: string, body: Record<string, unknown> = {}) => {
      const r = await svc.call('POST', '/v1/tickets', { key, body: { subject: 'Printer on fire', description: 'Third floor', ...body } });
      expect(r.status).toBe(201);
      return r.body as { ticketId: string };
    };
    const activity = (key: string, ticketId: string, query = '') => svc.call('GET', `/v1/tickets/${ticketId}/activity${query}`, { key });
    const comment = (key: string, ticketId: string, body: unknown) => svc.call('POST', `/v1/tickets/${ticketId}/comments`, { key, body });

    it('lists the creation, each change with from and to, and each comment, with who and when, oldest first', async () => {
      const t = await create(a.adminKey);
      expect((await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.agentKey, body: { status: 'in_progress', subject: 'Printer smoking' } })).status).toBe(200);
      // A change to the same values records nothing.
      expect((await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.agentKey, body: { status: 'in_progress' } })).status).toBe(200);
      const c = await comment(a.agentKey, t.ticketId, { text: '  Facilities are on their way  ' });
      expect(c.status).toBe(201);
      expect(c.body).toMatchObject({ kind: 'comment', text: 'Facilities are on their way', ticketId: t.ticketId, organizationId: a.id, actor: { kind: 'api_key', userId: a.agentId, userName: 'Agent' } });

      const r = await activity(a.adminKey, t.ticketId);
      expect(r.status).toBe(200);
      expect(r.body.nextCursor).toBeNull();
      expect(r.body.entries.map((e: any) => e.kind)).toEqual(['created', 'changed', 'comment']);
      expect(r.body.entries[0].actor).toMatchObject({ kind: 'api_key', userId: a.adminId, userName: 'Admin' });
      expect(r.body.entries[1]).toMatchObject({
        actor: { kind: 'api_key', userId: a.agentId, userName: 'Agent' },
        changes: [
          { field: 'subject', from: 'Printer on fire', to: 'Printer smoking' },
          { field: 'status', from: 'open', to: 'in_progress' },
        ],
      });
      expect(r.body.entries[2]).toEqual(c.body);
      for (const e of r.body.entries) expect(Date.parse(e.at)).not.toBeNaN();
    });

    it('pages with a cursor: each page continues after the last, and later entries come after it', async () => {
      const t = await create(a.adminKey);
      for (let i = 0; i < 4; i++) expect((await comment(a.adminKey, t.ticketId, { text: `c${i}` })).status).toBe(201);
      const p1 = await activity(a.adminKey, t.ticketId, '?limit=2');
      expect(p1.body.entries.map((e: any) => e.text ?? e.kind)).toEqual(['created', 'c0']);
      const p2 = await activity(a.adminKey, t.ticketId, `?limit=2&cursor=${p1.body.nextCursor}`);
      expect(p2.body.entries.map((e: any) => e.text)).toEqual(['c1', 'c2']);
      const p3 = await activity(a.adminKey, t.ticketId, `?limit=2&cursor=${p2.body.nextCursor}`);
      expect(p3.body).toMatchObject({ nextCursor: null });
      expect(p3.body.entries.map((e: any) => e.text)).toEqual(['c3']);
      await comment(a.adminKey, t.ticketId, { text: 'c4' });
      expect((await activity(a.adminKey, t.ticketId, `?cursor=${p2.body.nextCursor}`)).body.entries.map((e: any) => e.text)).toEqual(['c3', 'c4']);
    });

    it("follows the ticket's visibility: an agent neither reads nor comments on another agent's ticket", async () => {
      const org = await svc.createOrg('Visibility');
      const mine = await create(org.adminKey, { assigneeId: org.agentId });
      const admins = await create(org.adminKey, { assigneeId: org.adminId });
      const open = await create(org.adminKey);
      expect((await activity(org.agentKey, mine.ticketId)).status).toBe(200);
      expect((await comment(org.agentKey, open.ticketId, { text: 'taking a look' })).status).toBe(201);
      expect((await activity(org.agentKey, admins.ticketId)).status).toBe(404);
      expect((await comment(org.agentKey, admins.ticketId, { text: 'sneaky' })).status).toBe(404);
      expect((await activity(org.adminKey, admins.ticketId)).body.entries.map((e: any) => e.kind)).toEqual(['created']);
    });

    it('needs tickets:read to read and tickets:update to comment', async () => {
      const t = await create(a.adminKey);
      const readOnly = await a.keyWith(['tickets:read']);
      const updateOnly = await a.keyWith(['tickets:update']);
      expect((await activity(readOnly, t.ticketId)).status).toBe(200);
      const refused = await comment(readOnly, t.ticketId, { text: 'no' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('insufficient_scope');
      expect((await activity(updateOnly, t.ticketId)).status).toBe(403);
      expect((await comment(updateOnly, t.ticketId, { text: 'yes' })).status).toBe(201);
      expect((await activity(a.adminKey, t.ticketId)).body.entries.map((e: any) => e.text ?? e.kind)).toEqual(['created', 'yes']);
    });

    it('refuses bad input with 400 and a missing ticket with 404, writing nothing', async () => {
      const t = await create(a.adminKey);
      for (const body of [{}, { text: '' }, { text: '   ' }, { text: 'x'.repeat(10_001) }, { text: 5 }, { text: 'ok', extra: 1 }]) {
        const r = await comment(a.adminKey, t.ticketId, body);
        expect(r.status, JSON.stringify(body).slice(0, 40)).toBe(400);
        expect(r.body.error.code).toBe('validation_failed');
      }
      for (const q of ['?cursor=abc', '?cursor=-1', '?limit=0', '?limit=101', '?limit=x']) {
        const r = await activity(a.adminKey, t.ticketId, q);
        expect(r.status, q).toBe(400);
      }
      expect((await comment(a.adminKey, 'T-000101-999999', { text: 'x' })).status).toBe(404);
      expect((await comment(a.adminKey, 'not-a-ticket', { text: 'x' })).status).toBe(404);
      expect((await activity(a.adminKey, 'T-000101-999999')).status).toBe(404);
      expect((await activity(a.adminKey, t.ticketId)).body.entries).toHaveLength(1);
    });

    it("never shows or changes another organization's ticket activity", async () => {
      const c = await svc.createOrg('Empty C');
      const d = await svc.createOrg('D');
      const dt = await create(d.adminKey, { subject: 'D only' });
      await comment(d.adminKey, dt.ticketId, { text: 'D secret' });
      expect((await activity(c.adminKey, dt.ticketId)).status).toBe(404);
      expect((await comment(c.adminKey, dt.ticketId, { text: 'from C' })).status).toBe(404);
      const own = await activity(d.adminKey, dt.ticketId);
      expect(own.body.entries.map((e: any) => e.text ?? e.kind)).toEqual(['created', 'D secret']);
      expect(own.body.entries.every((e: any) => e.organizationId === d.id)).toBe(true);
    });
  });
}

activitySuite('embedded', () => ({}));

const servers = useClusterServers();
activitySuite('clustered', () => ({ ...servers.env('tact'), SECRETS_KEY: 'a'.repeat(64) }));
