import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN, startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { Browser, PASSWORD } from '../auth/helpers.js';
import { InboxClient } from './client.js';

/**
 * An open inbox socket lives no longer than its credential: sign-out, a
 * password change in another session, an operator reset, deactivation, a
 * revoked key and a role change each close the affected sockets within a
 * second, on the node that made the change and on the others; a command that
 * arrives after the change is refused.
 */
function credentialSuite(name: string, start: () => Promise<TestService[]>) {
  describe(`inbox sockets and their credentials (${name})`, () => {
    let nodes: TestService[];
    let org: TestOrg;
    const clients: InboxClient[] = [];
    /** The node that makes the change, and the one that holds the socket (another one when clustered). */
    const changer = () => nodes[0]!;
    const holder = () => nodes[nodes.length - 1]!;
    const op = (method: string, path: string, body?: unknown) => changer().call(method, path, { key: OPERATOR_TOKEN, body });
    let n = 0;

    /** A fresh agent with a password, so each case changes only its own user. */
    const newUser = async (role: 'admin' | 'agent' = 'agent') => {
      const email = `u${++n}-${Date.now()}@${org.id}.test`;
      const u = (await op('POST', `/admin/v1/organizations/${org.id}/users`, { email, name: `User ${n}`, role, password: PASSWORD })).body;
      const k = await op('POST', `/admin/v1/organizations/${org.id}/api-keys`, { userId: u.id, scopes: ['inbox:read', 'inbox:write', 'tickets:create', 'tickets:read'] });
      return { id: u.id as string, email, key: k.body.key as string, keyId: k.body.id as string };
    };
    const signIn = async (node: TestService, email: string) => {
      const b = new Browser(node);
      expect((await b.login(email, PASSWORD)).status).toBe(200);
      return b;
    };
    /** A socket opened the dashboard's way: an inbox token of the browser's session. */
    const sessionSocket = async (b: Browser, node = holder()) => {
      const token = (await b.call('POST', '/v1/inbox/token')).body.token as string;
      const c = await InboxClient.connect(node.url, null, { token });
      clients.push(c);
      return c;
    };
    const keySocket = async (key: string, node = holder()) => {
      const c = await InboxClient.connect(node.url, key);
      clients.push(c);
      return c;
    };
    /** The change, then the socket's close: its code, and how long after the change's answer it came. */
    const closedBy = async (c: InboxClient, change: () => Promise<{ status: number }>, expected = 200) => {
      expect((await change()).status).toBe(expected);
      const at = Date.now();
      const closed = await c.waitForClose(5000);
      return { ...closed, afterMs: Date.now() - at };
    };
    const stillOpen = async (c: InboxClient) => {
      expect((await c.command({ type: 'presence', status: 'online' })).type).toBe('ack');
      expect(c.closed).toBeNull();
    };

    beforeAll(async () => {
      nodes = await start();
      org = await nodes[0]!.createOrg('Credentials');
    }, 60_000);
    afterEach(() => {
      for (const c of clients.splice(0)) c.close();
    });
    afterAll(async () => {
      await Promise.all((nodes ?? []).map((x) => x.close()));
    });

    it('sign-out closes the sockets of that session (4001), not those of the same user\'s other session', async () => {
      const u = await newUser();
      const b1 = await signIn(changer(), u.email);
      const b2 = await signIn(holder(), u.email);
      const ended = await sessionSocket(b1);
      const other = await sessionSocket(b2);
      const closed = await closedBy(ended, () => b1.call('POST', '/v1/auth/logout'), 204);
      expect(closed.code).toBe(4001);
      expect(closed.afterMs).toBeLessThan(1000);
      await stillOpen(other);
    });

    it('a password change closes the sockets of the user\'s other sessions, not of the session that changed it', async () => {
      const u = await newUser();
      const changing = await signIn(changer(), u.email);
      const elsewhere = await signIn(holder(), u.email);
      const mine = await sessionSocket(changing);
      const theirs = await sessionSocket(elsewhere);
      const keyed = await keySocket(u.key);
      const closed = await closedBy(theirs, () => changing.call('POST', '/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: 'a brand new password' } }), 204);
      expect(closed.code).toBe(4001);
      expect(closed.afterMs).toBeLessThan(1000);
      await stillOpen(mine);
      await stillOpen(keyed);
    });

    it('an operator password reset closes every session socket of the user (4001)', async () => {
      const u = await newUser();
      const c = await sessionSocket(await signIn(holder(), u.email));
      const closed = await closedBy(c, () => op('POST', `/admin/v1/organizations/${org.id}/users/${u.id}/password`, { password: 'an operator reset password' }));
      expect(closed.code).toBe(4001);
      expect(closed.afterMs).toBeLessThan(1000);
    });

    it('deactivating a user closes their key and session sockets (4001); no event reaches them afterwards', async () => {
      const u = await newUser();
      const byKey = await keySocket(u.key);
      const bySession = await sessionSocket(await signIn(changer(), u.email));
      const closed = await closedBy(byKey, () => changer().call('PATCH', `/v1/users/${u.id}`, { key: org.adminKey, body: { active: false } }));
      expect(closed.code).toBe(4001);
      expect(closed.afterMs).toBeLessThan(1000);
      expect((await bySession.waitForClose(1000)).code).toBe(4001);
      const seen = byKey.frames.length;
      await changer().call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'after deactivation', description: 'd' } });
      await new Promise((r) => setTimeout(r, 300));
      expect(byKey.frames.length).toBe(seen);
    });

    it('revoking a key closes its sockets (4001) and not those of the user\'s other keys', async () => {
      const u = await newUser();
      const other = await keySocket(await org.keyWith(['inbox:read', 'inbox:write']));
      const c = await keySocket(u.key);
      const closed = await closedBy(c, () => changer().call('DELETE', `/v1/api-keys/${u.keyId}`, { key: org.adminKey }));
      expect(closed.code).toBe(4001);
      expect(closed.reason).toMatch(/credentials revoked/);
      expect(closed.afterMs).toBeLessThan(1000);
      await stillOpen(other);
    });

    it('a role change closes the user\'s sockets with 4003; reconnecting gives the new role', async () => {
      const u = await newUser('admin');
      const bySession = await sessionSocket(await signIn(holder(), u.email));
      const byKey = await keySocket(u.key);
      expect(byKey.frames[0]).toMatchObject({ type: 'welcome', user: { role: 'admin' } });
      const closed = await closedBy(bySession, () => changer().call('PATCH', `/v1/users/${u.id}`, { key: org.adminKey, body: { role: 'agent' } }));
      expect(closed.code).toBe(4003);
      expect(closed.afterMs).toBeLessThan(1000);
      expect((await byKey.waitForClose(1000)).code).toBe(4003);
      expect((await keySocket(u.key)).frames[0]).toMatchObject({ type: 'welcome', user: { role: 'agent' } });
    });

    it('a command that arrives after its credential ended is refused, even when no notice came (the store is read on receipt)', async () => {
      const u = await newUser();
      const c = await keySocket(u.key);
      expect((await c.command({ type: 'presence', status: 'online' })).type).toBe('ack');
      // Revoked behind the services' back: no notice goes out, so only the check of the command can see it.
      await changer().running.services.store.apiKeys.revoke(org.id, u.keyId, new Date().toISOString());
      const r = await c.command({ type: 'ticket_create', ticket: { subject: 'after revocation', description: 'd' } });
      expect(r).toMatchObject({ type: 'error', error: { code: 'credentials_revoked' } });
      expect((await c.waitForClose(1000)).code).toBe(4001);
      const tickets = await changer().call('GET', '/v1/tickets', { key: org.adminKey });
      expect(JSON.stringify(tickets.body)).not.toContain('after revocation');
    });
  });
}

credentialSuite('embedded', async () => [await startTestService()]);

describe('clustered', () => {
  const servers = useClusterServers();
  credentialSuite('clustered, 2 nodes', async () => {
    const prefix = `cr${Date.now() % 100000}`;
    const env = (id: string) => ({ ...servers.env(prefix), NODE_ID: id, ACTOR_PARTITIONS: '4', SECRETS_KEY: '4'.repeat(64) });
    return Promise.all(['c1', 'c2'].map((id) => startTestService({ env: env(id) })));
  });
});
