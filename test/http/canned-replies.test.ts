import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { scopesForRole } from '../../src/domain/scopes.js';

/** Canned replies over REST, embedded and clustered. */
function cannedSuite(name: string, env: () => Record<string, string>) {
  describe(`canned replies API (${name})`, () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService({ env: env() });
    });
    afterAll(() => svc?.close());

    const create = (key: string, body: unknown) => svc.call('POST', '/v1/canned-replies', { key, body });
    const list = async (key: string) => {
      const r = await svc.call('GET', '/v1/canned-replies', { key });
      expect(r.status).toBe(200);
      return r.body.cannedReplies as { id: string; shortCode: string; text: string; organizationId: string }[];
    };

    it('admins add, change and delete replies; agents read them; codes are stored in lower case', async () => {
      const a = await svc.createOrg('A');
      const made = await create(a.adminKey, { shortCode: 'Thanks', text: 'Thank you {{contact.name}}, {{ agent.name }} here.' });
      expect(made.status).toBe(201);
      expect(made.body.cannedReply).toMatchObject({ shortCode: 'thanks', text: 'Thank you {{contact.name}}, {{ agent.name }} here.', organizationId: a.id });
      expect((await create(a.adminKey, { shortCode: 'address', text: 'We are at Main St 1.' })).status).toBe(201);
      expect((await list(a.agentKey)).map((r) => r.shortCode)).toEqual(['address', 'thanks']);

      const id = made.body.cannedReply.id as string;
      const patched = await svc.call('PATCH', `/v1/canned-replies/${id}`, { key: a.adminKey, body: { text: 'Thanks, {{contact.name}}!' } });
      expect(patched.status).toBe(200);
      expect(patched.body.cannedReply).toMatchObject({ id, shortCode: 'thanks', text: 'Thanks, {{contact.name}}!' });
      const renamed = await svc.call('PATCH', `/v1/canned-replies/${id}`, { key: a.adminKey, body: { shortCode: 'ty' } });
      expect(renamed.body.cannedReply.shortCode).toBe('ty');

      expect((await svc.call('DELETE', `/v1/canned-replies/${id}`, { key: a.adminKey })).status).toBe(204);
      expect((await svc.call('DELETE', `/v1/canned-replies/${id}`, { key: a.adminKey })).status).toBe(404);
      expect((await list(a.adminKey)).map((r) => r.shortCode)).toEqual(['address']);
    });

    it('refuses a short code the organization has (in any case) with 409, on create and on rename', async () => {
      const a = await svc.createOrg('Dup');
      expect((await create(a.adminKey, { shortCode: 'hello', text: 'Hello!' })).status).toBe(201);
      const dup = await create(a.adminKey, { shortCode: 'HELLO', text: 'Hello again' });
      expect(dup.status).toBe(409);
      expect(dup.body.error.code).toBe('short_code_taken');
      const other = (await create(a.adminKey, { shortCode: 'hi', text: 'Hi!' })).body.cannedReply;
      const rename = await svc.call('PATCH', `/v1/canned-replies/${other.id}`, { key: a.adminKey, body: { shortCode: 'hello' } });
      expect(rename.status).toBe(409);
      expect((await list(a.adminKey)).map((r) => `${r.shortCode}:${r.text}`)).toEqual(['hello:Hello!', 'hi:Hi!']);
      // Another organization may use the same code.
      const b = await svc.createOrg('Dup B');
      expect((await create(b.adminKey, { shortCode: 'hello', text: 'Moin' })).status).toBe(201);
    });

    it('needs settings:manage to manage and inbox:read to read', async () => {
      const a = await svc.createOrg('Scopes');
      const r = (await create(a.adminKey, { shortCode: 'x', text: 'x' })).body.cannedReply;
      // What an agent's dashboard session carries: every scope but settings:manage and webhook:create.
      const agent = await a.keyWith(scopesForRole('agent'), 'agent');
      for (const call of [
        () => create(agent, { shortCode: 'y', text: 'y' }),
        () => svc.call('PATCH', `/v1/canned-replies/${r.id}`, { key: agent, body: { text: 'changed' } }),
        () => svc.call('DELETE', `/v1/canned-replies/${r.id}`, { key: agent }),
      ]) {
        const res = await call();
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('insufficient_scope');
      }
      const noInbox = await a.keyWith(['tickets:read']);
      expect((await svc.call('GET', '/v1/canned-replies', { key: noInbox })).status).toBe(403);
      expect((await list(agent)).map((c) => c.text)).toEqual(['x']);
      expect((await list(await a.keyWith(['inbox:read'], 'agent'))).map((c) => c.text)).toEqual(['x']);
    });

    it('refuses bad input with 400 and keeps nothing of it', async () => {
      const a = await svc.createOrg('Bad');
      const bad: unknown[] = [
        {},
        { shortCode: 'ok' },
        { text: 'no code' },
        { shortCode: '', text: 't' },
        { shortCode: 'has space', text: 't' },
        { shortCode: '/slash', text: 't' },
        { shortCode: 'x'.repeat(33), text: 't' },
        { shortCode: 'ok', text: '   ' },
        { shortCode: 'ok', text: 'x'.repeat(4097) },
        { shortCode: 'ok', text: 't', extra: true },
        { shortCode: 'ok', text: 'Hi {{contact.nmae}}' },
      ];
      for (const body of bad) {
        const r = await create(a.adminKey, body);
        expect(r.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      }
      const typo = await create(a.adminKey, { shortCode: 'ok', text: 'Hi {{contact.nmae}}' });
      expect(typo.body.error).toMatchObject({ code: 'unknown_placeholder' });
      expect(typo.body.error.message).toContain('{{contact.nmae}}');
      expect(await list(a.adminKey)).toEqual([]);
      const r = (await create(a.adminKey, { shortCode: 'ok', text: 'fine' })).body.cannedReply;
      for (const body of [{}, { text: '' }, { shortCode: 'a b' }, { text: '{{agent.nam}}' }, { id: 'x' }]) {
        expect((await svc.call('PATCH', `/v1/canned-replies/${r.id}`, { key: a.adminKey, body })).status, JSON.stringify(body)).toBe(400);
      }
      expect((await list(a.adminKey)).map((c) => `${c.shortCode}:${c.text}`)).toEqual(['ok:fine']);
    });

    it("never shows, changes or deletes another organization's replies", async () => {
      const a: TestOrg = await svc.createOrg('Iso A');
      const b: TestOrg = await svc.createOrg('Iso B');
      const theirs = (await create(b.adminKey, { shortCode: 'secret', text: 'B only' })).body.cannedReply;
      expect(await list(a.adminKey)).toEqual([]);
      expect((await svc.call('PATCH', `/v1/canned-replies/${theirs.id}`, { key: a.adminKey, body: { text: 'from A' } })).status).toBe(404);
      expect((await svc.call('DELETE', `/v1/canned-replies/${theirs.id}`, { key: a.adminKey })).status).toBe(404);
      expect(await list(b.adminKey)).toEqual([theirs]);
    });
  });
}

cannedSuite('embedded', () => ({}));

const servers = useClusterServers();
cannedSuite('clustered', () => ({ ...servers.env('canned'), SECRETS_KEY: 'a'.repeat(64) }));
