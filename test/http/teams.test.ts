import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { scopesForRole } from '../../src/domain/scopes.js';

interface TeamBody {
  id: string;
  organizationId: string;
  name: string;
  memberIds: string[];
  autoAssign: { enabled: boolean; capacity: number | null };
}

/** Teams over REST, embedded and clustered. */
function teamsSuite(name: string, env: () => Record<string, string>) {
  describe(`teams API (${name})`, () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService({ env: env() });
    });
    afterAll(() => svc?.close());

    const create = (key: string, body: unknown) => svc.call('POST', '/v1/teams', { key, body });
    const list = async (key: string) => {
      const r = await svc.call('GET', '/v1/teams', { key });
      expect(r.status).toBe(200);
      return r.body.teams as TeamBody[];
    };

    it('admins create, change and delete teams; agents read them', async () => {
      const a = await svc.createOrg('A');
      const made = await create(a.adminKey, { name: 'Support', memberIds: [a.agentId, a.adminId, a.agentId] });
      expect(made.status).toBe(201);
      expect(made.body.team).toMatchObject({ name: 'Support', organizationId: a.id, memberIds: [a.agentId, a.adminId], autoAssign: { enabled: false, capacity: null } });
      expect((await create(a.adminKey, { name: 'Billing', memberIds: [], autoAssign: { enabled: true, capacity: 3 } })).body.team.autoAssign).toEqual({ enabled: true, capacity: 3 });
      expect((await list(a.agentKey)).map((t) => t.name)).toEqual(['Billing', 'Support']);

      const id = made.body.team.id as string;
      const patched = await svc.call('PATCH', `/v1/teams/${id}`, { key: a.adminKey, body: { memberIds: [a.agentId], autoAssign: { capacity: 2 } } });
      expect(patched.status).toBe(200);
      expect(patched.body.team).toMatchObject({ id, name: 'Support', memberIds: [a.agentId], autoAssign: { enabled: false, capacity: 2 } });
      const on = await svc.call('PATCH', `/v1/teams/${id}`, { key: a.adminKey, body: { name: 'Front desk', autoAssign: { enabled: true } } });
      expect(on.body.team).toMatchObject({ name: 'Front desk', memberIds: [a.agentId], autoAssign: { enabled: true, capacity: 2 } });

      expect((await svc.call('DELETE', `/v1/teams/${id}`, { key: a.adminKey })).status).toBe(204);
      expect((await svc.call('DELETE', `/v1/teams/${id}`, { key: a.adminKey })).status).toBe(404);
      expect((await list(a.adminKey)).map((t) => t.name)).toEqual(['Billing']);
    });

    it('refuses a name the organization has (in any case) with 409, on create and on rename', async () => {
      const a = await svc.createOrg('Dup');
      expect((await create(a.adminKey, { name: 'Sales', memberIds: [] })).status).toBe(201);
      const dup = await create(a.adminKey, { name: 'SALES', memberIds: [] });
      expect(dup.status).toBe(409);
      expect(dup.body.error.code).toBe('team_name_taken');
      const other = (await create(a.adminKey, { name: 'Returns', memberIds: [] })).body.team as TeamBody;
      expect((await svc.call('PATCH', `/v1/teams/${other.id}`, { key: a.adminKey, body: { name: 'sales' } })).status).toBe(409);
      const b = await svc.createOrg('Dup B');
      expect((await create(b.adminKey, { name: 'Sales', memberIds: [] })).status).toBe(201);
    });

    it('takes only active users of the organization as members (422 unknown_member)', async () => {
      const a = await svc.createOrg('Members');
      const b = await svc.createOrg('Members B');
      const r = await create(a.adminKey, { name: 'Mixed', memberIds: [a.agentId, b.agentId, 'nobody'] });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe('unknown_member');
      expect(r.body.error.details.memberIds).toEqual([b.agentId, 'nobody']);
      const t = (await create(a.adminKey, { name: 'Ok', memberIds: [a.agentId] })).body.team as TeamBody;
      expect((await svc.call('PATCH', `/v1/teams/${t.id}`, { key: a.adminKey, body: { memberIds: [b.adminId] } })).status).toBe(422);
      expect((await svc.call('PATCH', `/v1/users/${a.agentId}`, { key: a.adminKey, body: { active: false } })).status).toBe(200);
      expect((await create(a.adminKey, { name: 'Later', memberIds: [a.agentId] })).status).toBe(422);
      expect((await list(a.adminKey)).map((x) => x.memberIds)).toEqual([[a.agentId]]);
    });

    it('needs settings:manage to manage and inbox:read to read', async () => {
      const a = await svc.createOrg('Scopes');
      const t = (await create(a.adminKey, { name: 'x', memberIds: [] })).body.team as TeamBody;
      const agent = await a.keyWith(scopesForRole('agent'), 'agent');
      for (const call of [
        () => create(agent, { name: 'y', memberIds: [] }),
        () => svc.call('PATCH', `/v1/teams/${t.id}`, { key: agent, body: { name: 'z' } }),
        () => svc.call('DELETE', `/v1/teams/${t.id}`, { key: agent }),
      ]) {
        const res = await call();
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('insufficient_scope');
      }
      expect((await svc.call('GET', '/v1/teams', { key: await a.keyWith(['tickets:read']) })).status).toBe(403);
      expect((await list(agent)).map((x) => x.name)).toEqual(['x']);
    });

    it('refuses bad input with 400 and keeps nothing of it', async () => {
      const a = await svc.createOrg('Bad');
      const bad: unknown[] = [
        {},
        { name: 'no members' },
        { memberIds: [] },
        { name: '   ', memberIds: [] },
        { name: 'x'.repeat(101), memberIds: [] },
        { name: 'ok', memberIds: 'u1' },
        { name: 'ok', memberIds: [''] },
        { name: 'ok', memberIds: [], autoAssign: { capacity: 0 } },
        { name: 'ok', memberIds: [], autoAssign: { enabled: 'yes' } },
        { name: 'ok', memberIds: [], autoAssign: { enabled: true, extra: 1 } },
        { name: 'ok', memberIds: [], extra: true },
      ];
      for (const body of bad) {
        const r = await create(a.adminKey, body);
        expect(r.status, JSON.stringify(body).slice(0, 60)).toBe(400);
        expect(r.body.error.code).toBe('validation_failed');
      }
      expect(await list(a.adminKey)).toEqual([]);
      const t = (await create(a.adminKey, { name: 'ok', memberIds: [] })).body.team as TeamBody;
      for (const body of [{}, { name: '' }, { memberIds: null }, { autoAssign: { capacity: 1.5 } }, { id: 'x' }]) {
        expect((await svc.call('PATCH', `/v1/teams/${t.id}`, { key: a.adminKey, body })).status, JSON.stringify(body)).toBe(400);
      }
      expect((await list(a.adminKey)).map((x) => x.name)).toEqual(['ok']);
    });

    it("never shows, changes or deletes another organization's teams", async () => {
      const a: TestOrg = await svc.createOrg('Iso A');
      const b: TestOrg = await svc.createOrg('Iso B');
      const theirs = (await create(b.adminKey, { name: 'Secret', memberIds: [b.agentId] })).body.team as TeamBody;
      expect(await list(a.adminKey)).toEqual([]);
      expect((await svc.call('PATCH', `/v1/teams/${theirs.id}`, { key: a.adminKey, body: { name: 'from A' } })).status).toBe(404);
      expect((await svc.call('DELETE', `/v1/teams/${theirs.id}`, { key: a.adminKey })).status).toBe(404);
      expect(await list(b.adminKey)).toEqual([theirs]);
    });
  });
}

teamsSuite('embedded', () => ({}));

const servers = useClusterServers();
teamsSuite('clustered', () => ({ ...servers.env('teams'), SECRETS_KEY: 'a'.repeat(64) }));
