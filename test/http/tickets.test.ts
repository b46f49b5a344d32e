import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { startRedisCluster, type RedisClusterProcess } from '../harness/servers.js';
import { useClusterServers } from '../harness/use-servers.js';

/** The tickets API, run against the embedded store and against a real redis-server. */
function ticketSuite(name: string, env: () => Record<string, string>) {
  describe(`tickets API (${name})`, () => {
    let svc: TestService;
    let a: TestOrg;
    let b: TestOrg;
    beforeAll(async () => {
      svc = await startTestService({ env: env() });
      a = await svc.createOrg('A');
      b = await svc.createOrg('B');
    });
    afterAll(() => svc?.close());

    it('creates a ticket with defaults and answers with title, never subject', async () => {
      const r = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'Refund', description: 'Order 42' } });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ title: 'Refund', description: 'Order 42', status: 'open', priority: 'medium', assigneeId: null, audienceId: null, organizationId: a.id, resolutionDate: null });
      expect(r.body.ticketId).toMatch(/^T-\d+-\d+$/);
      expect(r.body).not.toHaveProperty('subject');
      expect(r.body.createdAt).toBe(r.body.updatedAt);
    });

    it('accepts title as the older name, and refuses subject and title that disagree', async () => {
      expect((await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { title: 'Old', description: 'd' } })).body.title).toBe('Old');
      expect((await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { title: 'Same', subject: 'Same', description: 'd' } })).status).toBe(201);
      const r = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { title: 'X', subject: 'Y', description: 'd' } });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
    });

    it('links a ticket to a contact of the organization, and refuses an unknown or foreign contact with 400', async () => {
      const c = await a.contact('4915112345678:100200');
      const r = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'S', description: 'd', audienceExternalId: c.audienceExternalId } });
      expect(r.status).toBe(201);
      expect(r.body.audienceId).toBe(c.id);
      const unknown = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'S', description: 'd', audienceExternalId: '4915100000001:2' } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.code).toBe('unknown_contact');
      const bc = await b.contact('4900000000001:9');
      const foreign = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'S', description: 'd', audienceExternalId: bc.audienceExternalId } });
      expect(foreign.status).toBe(400);
    });

    it('assigns only to users of the same organization', async () => {
      expect((await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'S', description: 'd', assigneeId: a.agentId } })).body.assigneeId).toBe(a.agentId);
      const r = await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'S', description: 'd', assigneeId: b.agentId } });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('unknown_assignee');
    });

    it('lists newest first with filters, pages and totals', async () => {
      const svc2 = svc;
      const org = await svc2.createOrg('Lister');
      const c = await org.contact('4911111111111:1');
      for (let i = 0; i < 5; i++) {
        await svc2.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: `t${i}`, description: 'd', status: i % 2 ? 'in_progress' : 'open', ...(i < 2 ? { audienceExternalId: c.audienceExternalId } : {}) } });
      }
      const all = await svc2.call('GET', '/v1/tickets?limit=2&page=1', { key: org.adminKey });
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ total: 5, page: 1, totalPages: 3 });
      expect(all.body.tickets.map((t: any) => t.title)).toEqual(['t4', 't3']);
      const p3 = await svc2.call('GET', '/v1/tickets?limit=2&page=3', { key: org.adminKey });
      expect(p3.body.tickets.map((t: any) => t.title)).toEqual(['t0']);
      const open = await svc2.call('GET', '/v1/tickets?status=open', { key: org.adminKey });
      expect(open.body.tickets.map((t: any) => t.title)).toEqual(['t4', 't2', 't0']);
      const byContact = await svc2.call('GET', `/v1/tickets?audienceExternalId=${encodeURIComponent(c.audienceExternalId)}`, { key: org.adminKey });
      expect(byContact.body.tickets.map((t: any) => t.title)).toEqual(['t1', 't0']);
      const both = await svc2.call('GET', `/v1/tickets?audienceExternalId=${encodeURIComponent(c.audienceExternalId)}&status=in_progress`, { key: org.adminKey });
      expect(both.body.tickets.map((t: any) => t.title)).toEqual(['t1']);
      const none = await svc2.call('GET', '/v1/tickets?audienceExternalId=4915999999999:1', { key: org.adminKey });
      expect(none.body).toEqual({ tickets: [], total: 0, totalRelation: 'eq', page: 1, totalPages: 0, nextCursor: null });
      expect((await svc2.call('GET', '/v1/tickets', { key: org.adminKey })).body.tickets).toHaveLength(5);
    });

    it('refuses out-of-range page and limit with 400 instead of clamping', async () => {
      for (const q of ['page=0', 'limit=0', 'limit=101', 'page=abc', 'limit=1.5', 'status=pending', 'priority=critical', 'priority=', 'assigneeId=', 'assigneeId=a%20b', `assigneeId=${'x'.repeat(101)}`]) {
        const r = await svc.call('GET', `/v1/tickets?${q}`, { key: a.adminKey });
        expect(r.status, q).toBe(400);
        expect(r.body.success).toBe(false);
        expect(r.body.error.details[0].field).toMatch(/^query\./);
      }
      expect((await svc.call('GET', '/v1/tickets?limit=100', { key: a.adminKey })).status).toBe(200);
    });

    it("shows an agent's key only tickets assigned to that agent or unassigned; an admin's key sees all", async () => {
      const org = await svc.createOrg('Vis');
      const mk = (subject: string, assigneeId?: string) => svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject, description: 'd', ...(assigneeId ? { assigneeId } : {}) } });
      const mine = (await mk('mine', org.agentId)).body;
      await mk('nobody');
      const admins = (await mk('admins', org.adminId)).body;
      const agentList = await svc.call('GET', '/v1/tickets', { key: org.agentKey });
      expect(agentList.body.tickets.map((t: any) => t.title).sort()).toEqual(['mine', 'nobody']);
      expect(agentList.body.total).toBe(2);
      expect((await svc.call('GET', '/v1/tickets', { key: org.adminKey })).body.total).toBe(3);
      expect((await svc.call('GET', `/v1/tickets/${mine.ticketId}`, { key: org.agentKey })).status).toBe(200);
      expect((await svc.call('GET', `/v1/tickets/${admins.ticketId}`, { key: org.agentKey })).status).toBe(404);
      expect((await svc.call('PATCH', `/v1/tickets/${admins.ticketId}`, { key: org.agentKey, body: { status: 'closed' } })).status).toBe(404);
    });

    it('filters by priority and by assignee (a user id or `none`), with the other filters and for agents', async () => {
      const org = await svc.createOrg('Filters');
      const mk = (subject: string, priority: string, assigneeId?: string, status?: string) =>
        svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject, description: 'd', priority, ...(assigneeId ? { assigneeId } : {}), ...(status ? { status } : {}) } });
      await mk('nobody-high', 'high');
      await mk('agent-high', 'high', org.agentId);
      await mk('agent-low', 'low', org.agentId, 'resolved');
      await mk('admin-high', 'high', org.adminId);
      const titles = async (q: string, key = org.adminKey) => {
        const r = await svc.call('GET', `/v1/tickets?${q}`, { key });
        expect(r.status, q).toBe(200);
        expect(r.body.total, q).toBe(r.body.tickets.length);
        return r.body.tickets.map((t: any) => t.title);
      };
      expect(await titles('priority=high')).toEqual(['admin-high', 'agent-high', 'nobody-high']);
      expect(await titles(`assigneeId=${org.agentId}`)).toEqual(['agent-low', 'agent-high']);
      expect(await titles('assigneeId=none')).toEqual(['nobody-high']);
      expect(await titles(`priority=high&assigneeId=${org.agentId}`)).toEqual(['agent-high']);
      expect(await titles(`status=resolved&assigneeId=${org.agentId}&priority=low`)).toEqual(['agent-low']);
      expect(await titles('priority=urgent')).toEqual([]);
      // An agent's key sees through the same visibility: never the admin's tickets, whatever the filter.
      expect(await titles('priority=high', org.agentKey)).toEqual(['agent-high', 'nobody-high']);
      expect(await titles(`assigneeId=${org.adminId}`, org.agentKey)).toEqual([]);
      expect(await titles(`assigneeId=${org.agentId}&priority=high`, org.agentKey)).toEqual(['agent-high']);
      expect(await titles('assigneeId=none', org.agentKey)).toEqual(['nobody-high']);
      const paged = await svc.call('GET', '/v1/tickets?priority=high&limit=2&page=2', { key: org.adminKey });
      expect(paged.body).toMatchObject({ total: 3, page: 2, totalPages: 2 });
      expect(paged.body.tickets.map((t: any) => t.title)).toEqual(['nobody-high']);
    });

    it('refuses a resolutionDate on an open ticket and stores every resolutionDate in one UTC format', async () => {
      const t = (await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'R', description: 'd' } })).body;
      const onOpen = await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { resolutionDate: '2026-01-02T03:04:05Z' } });
      expect(onOpen.status).toBe(400);
      expect(onOpen.body.error.code).toBe('resolution_date_on_open_ticket');
      const reopening = await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { status: 'in_progress', resolutionDate: '2026-01-02T03:04:05Z' } });
      expect(reopening.status).toBe(400);
      expect((await svc.call('GET', `/v1/tickets/${t.ticketId}`, { key: a.adminKey })).body.resolutionDate).toBeNull();
      const offset = await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { status: 'resolved', resolutionDate: '2026-01-02T05:04:05+02:00' } });
      expect(offset.status).toBe(200);
      expect(offset.body.resolutionDate).toBe('2026-01-02T03:04:05.000Z');
      // Clearing is allowed on any ticket.
      expect((await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { resolutionDate: null } })).body.resolutionDate).toBeNull();
    });

    it('fetches one ticket by ticketId, 404 when missing', async () => {
      const t = (await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'F', description: 'd' } })).body;
      const r = await svc.call('GET', `/v1/tickets/${t.ticketId}`, { key: a.adminKey });
      expect(r.status).toBe(200);
      expect(r.body).toEqual(t);
      for (const id of ['T-1-999999', 'nope', 'T-abc']) {
        const m = await svc.call('GET', `/v1/tickets/${id}`, { key: a.adminKey });
        expect(m.status).toBe(404);
        expect(m.body.error.code).toBe('not_found');
      }
    });

    it('updates only the fields sent, moves updatedAt, and keeps resolutionDate in step with the status', async () => {
      const t = (await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'U', description: 'd', priority: 'low' } })).body;
      await new Promise((r) => setTimeout(r, 5));
      const p1 = await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { priority: 'urgent' } });
      expect(p1.status).toBe(200);
      expect(p1.body).toMatchObject({ title: 'U', description: 'd', priority: 'urgent', status: 'open', resolutionDate: null });
      expect(p1.body.updatedAt > t.updatedAt).toBe(true);
      const resolved = (await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { status: 'resolved' } })).body;
      expect(resolved.resolutionDate).toBe(resolved.updatedAt);
      const closed = (await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { status: 'closed' } })).body;
      expect(closed.resolutionDate).toBe(resolved.resolutionDate);
      const reopened = (await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { status: 'open' } })).body;
      expect(reopened.resolutionDate).toBeNull();
      const given = (await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { status: 'resolved', resolutionDate: '2026-01-02T03:04:05.000Z' } })).body;
      expect(given.resolutionDate).toBe('2026-01-02T03:04:05.000Z');
      const renamed = (await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { subject: 'New', assigneeId: a.agentId } })).body;
      expect(renamed).toMatchObject({ title: 'New', assigneeId: a.agentId, priority: 'urgent' });
      expect((await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body: { assigneeId: null } })).body.assigneeId).toBeNull();
      expect((await svc.call('GET', `/v1/tickets?status=resolved`, { key: a.adminKey })).body.tickets.map((x: any) => x.ticketId)).toContain(t.ticketId);
    });

    it('refuses unknown fields, empty updates and bad values on update with 400', async () => {
      const t = (await svc.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'V', description: 'd' } })).body;
      for (const body of [{ foo: 1 }, {}, { status: 'done' }, { priority: 3 }, { subject: 'a', title: 'b' }, { resolutionDate: 'yesterday' }, { assigneeId: 'no-such-user' }]) {
        const r = await svc.call('PATCH', `/v1/tickets/${t.ticketId}`, { key: a.adminKey, body });
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.success).toBe(false);
      }
      expect((await svc.call('GET', `/v1/tickets/${t.ticketId}`, { key: a.adminKey })).body).toEqual(t);
    });

    describe('isolation between organizations', () => {
      it("never lets org A's key list, fetch or update org B's tickets", async () => {
        const bt = (await svc.call('POST', '/v1/tickets', { key: b.adminKey, body: { subject: 'B secret', description: 'd' } })).body;
        const listA = await svc.call('GET', '/v1/tickets?limit=100', { key: a.adminKey });
        expect(listA.body.tickets.every((t: any) => t.organizationId === a.id)).toBe(true);
        expect(listA.body.tickets.map((t: any) => t.title)).not.toContain('B secret');
        // ticketIds are per-organization sequences, so A may have a ticket with the same id: it must be A's own.
        const get = await svc.call('GET', `/v1/tickets/${bt.ticketId}`, { key: a.adminKey });
        if (get.status === 200) expect(get.body.organizationId).toBe(a.id);
        else expect(get.status).toBe(404);
        const patch = await svc.call('PATCH', `/v1/tickets/${bt.ticketId}`, { key: a.adminKey, body: { description: 'hacked' } });
        if (patch.status === 200) expect(patch.body.organizationId).toBe(a.id);
        expect((await svc.call('GET', `/v1/tickets/${bt.ticketId}`, { key: b.adminKey })).body).toEqual(bt);
      });

      it("never lists another organization's tickets under the priority and assignee filters", async () => {
        const c = await svc.createOrg('Filter C');
        const d = await svc.createOrg('Filter D');
        await svc.call('POST', '/v1/tickets', { key: d.adminKey, body: { subject: 'D urgent', description: 'd', priority: 'urgent', assigneeId: d.agentId } });
        await svc.call('POST', '/v1/tickets', { key: d.adminKey, body: { subject: 'D unassigned', description: 'd', priority: 'urgent' } });
        for (const q of ['priority=urgent', `assigneeId=${d.agentId}`, 'assigneeId=none', `priority=urgent&assigneeId=${d.agentId}`]) {
          const r = await svc.call('GET', `/v1/tickets?${q}`, { key: c.adminKey });
          expect(r.status, q).toBe(200);
          expect(r.body, q).toEqual({ tickets: [], total: 0, totalRelation: 'eq', page: 1, totalPages: 0, nextCursor: null });
        }
        expect((await svc.call('GET', `/v1/tickets?priority=urgent&assigneeId=${d.agentId}`, { key: d.adminKey })).body.total).toBe(1);
      });

      it('answers 404 for an id that exists only in another organization, and changes nothing there', async () => {
        const c = await svc.createOrg('Empty C');
        const d = await svc.createOrg('D');
        const dt = (await svc.call('POST', '/v1/tickets', { key: d.adminKey, body: { subject: 'D only', description: 'd' } })).body;
        expect((await svc.call('GET', `/v1/tickets/${dt.ticketId}`, { key: c.adminKey })).status).toBe(404);
        expect((await svc.call('PATCH', `/v1/tickets/${dt.ticketId}`, { key: c.adminKey, body: { status: 'closed' } })).status).toBe(404);
        expect((await svc.call('GET', '/v1/tickets', { key: c.adminKey })).body.total).toBe(0);
        expect((await svc.call('GET', `/v1/tickets/${dt.ticketId}`, { key: d.adminKey })).body).toEqual(dt);
      });
    });
  });
}

ticketSuite('embedded', () => ({}));

const servers = useClusterServers();
ticketSuite('clustered', () => ({ ...servers.env('http'), SECRETS_KEY: 'a'.repeat(64) }));

// The same API on a 3-master Redis Cluster, through the node's one cluster client.
let cluster: RedisClusterProcess;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
}, 90_000);
afterAll(() => cluster?.stop());
ticketSuite('clustered on Redis Cluster', () => ({ ...servers.env('httpc', { redisClusterNodes: cluster.nodes }), SECRETS_KEY: 'a'.repeat(64) }));
