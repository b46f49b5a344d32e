import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually, messagingOrg, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';
import { extraAgent, InboxClient } from './client.js';

/** Presence over REST and the inbox socket: on one embedded node, and on two clustered nodes (Redis) with the agents on different nodes. */
function presenceSuite(name: string, start: () => Promise<TestService[]>) {
  describe(`presence API (${name})`, () => {
    let nodes: TestService[];
    let a: MessagingOrg;
    let b: MessagingOrg;
    const clients: InboxClient[] = [];
    const connect = async (node: TestService, key: string) => {
      const c = await InboxClient.connect(node.url, key);
      clients.push(c);
      return c;
    };
    const last = () => nodes[nodes.length - 1]!;
    const statusOf = async (key: string, userId: string, node = last()) => {
      const r = await node.call('GET', '/v1/presence', { key });
      expect(r.status).toBe(200);
      return (r.body.agents as { userId: string; status: string }[]).find((p) => p.userId === userId)?.status;
    };

    beforeAll(async () => {
      nodes = await start();
      a = await messagingOrg(nodes[0]!, 'A', 10);
      b = await messagingOrg(nodes[0]!, 'B', 10);
    }, 60_000);
    afterEach(() => {
      for (const c of clients.splice(0)) c.close();
    });
    afterAll(async () => {
      for (const n of nodes ?? []) await n.close();
    });

    it('online while a socket is open, away as chosen (the choice stays for the next socket), offline once the last socket closes; teammates get each change', async () => {
      const ann = await extraAgent(nodes[0]!, a, 'ann');
      const bob = await extraAgent(nodes[0]!, a, 'bob');
      expect(await statusOf(a.adminKey, ann.id)).toBe('offline');
      const bobWs = await connect(last(), bob.key);
      const annWs = await connect(nodes[0]!, ann.key);
      await bobWs.waitFor((f) => f.type === 'presence' && f.userId === ann.id && f.status === 'online');
      await eventually(async () => (await statusOf(a.adminKey, ann.id)) === 'online');
      expect(await nodes[0]!.running.services.presence.online(a.id)).toEqual(expect.arrayContaining([ann.id, bob.id]));

      const put = await last().call('PUT', '/v1/presence', { key: ann.key, body: { status: 'away' } });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ success: true, userId: ann.id, status: 'away' });
      await bobWs.waitFor((f) => f.type === 'presence' && f.userId === ann.id && f.status === 'away');
      expect(await statusOf(bob.key, ann.id)).toBe('away');
      expect(await nodes[0]!.running.services.presence.online(a.id)).not.toContain(ann.id);

      annWs.close();
      await bobWs.waitFor((f) => f.type === 'presence' && f.userId === ann.id && f.status === 'offline');
      await eventually(async () => (await statusOf(a.adminKey, ann.id)) === 'offline');
      // A new socket shows what Ann chose last.
      await connect(last(), ann.key);
      await eventually(async () => (await statusOf(a.adminKey, ann.id)) === 'away');
      // The socket's own presence command goes the same way.
      const again = await connect(nodes[0]!, ann.key);
      expect((await again.command({ type: 'presence', status: 'online' })).type).toBe('ack');
      await eventually(async () => (await statusOf(a.adminKey, ann.id)) === 'online');
    });

    it('availability: PATCH /v1/users/me/availability, PUT /v1/presence and the socket set one state; offline hides a connected user and takes nothing', async () => {
      const eve = await extraAgent(nodes[0]!, a, 'eve');
      const fay = await extraAgent(nodes[0]!, a, 'fay');
      const fayWs = await connect(last(), fay.key);
      const eveWs = await connect(nodes[0]!, eve.key);
      await eventually(async () => (await statusOf(a.adminKey, eve.id)) === 'online');
      const set = (status: string, node = last()) => node.call('PATCH', '/v1/users/me/availability', { key: eve.key, body: { status } });
      const off = await set('offline');
      expect(off.status).toBe(200);
      expect(off.body).toEqual({ success: true, userId: eve.id, status: 'offline' });
      await fayWs.waitFor((f) => f.type === 'presence' && f.userId === eve.id && f.status === 'offline');
      expect(await statusOf(fay.key, eve.id)).toBe('offline');
      expect(await nodes[0]!.running.services.presence.online(a.id)).not.toContain(eve.id);
      // The same state PUT /v1/presence sets and shows.
      expect((await last().call('PUT', '/v1/presence', { key: eve.key, body: { status: 'away' } })).status).toBe(200);
      await eventually(async () => (await statusOf(a.adminKey, eve.id)) === 'away');
      expect((await set('online', nodes[0]!)).status).toBe(200);
      await eventually(async () => (await statusOf(a.adminKey, eve.id)) === 'online');
      expect(await nodes[0]!.running.services.presence.online(a.id)).toContain(eve.id);
      // And the socket's presence command, offline included.
      expect((await eveWs.command({ type: 'presence', status: 'offline' })).type).toBe('ack');
      await eventually(async () => (await statusOf(a.adminKey, eve.id)) === 'offline');
      expect(await nodes[0]!.running.services.presence.online(a.id)).not.toContain(eve.id);
      // Another organization's key sets its own user's availability, never Eve's.
      expect((await last().call('PATCH', '/v1/users/me/availability', { key: b.adminKey, body: { status: 'online' } })).body.userId).toBe(b.adminId);
      expect(await statusOf(a.adminKey, eve.id)).toBe('offline');
      for (const body of [{}, { status: 'busy' }, { status: 'online', extra: 1 }]) {
        expect((await last().call('PATCH', '/v1/users/me/availability', { key: eve.key, body })).status, JSON.stringify(body)).toBe(400);
      }
      const noInbox = await a.keyWith(['tickets:read']);
      expect((await last().call('PATCH', '/v1/users/me/availability', { key: noInbox, body: { status: 'away' } })).status).toBe(403);
    });

    it('a deactivated user is offline, and their sockets close', async () => {
      const cat = await extraAgent(nodes[0]!, a, 'cat');
      const ws = await connect(nodes[0]!, cat.key);
      await eventually(async () => (await statusOf(a.adminKey, cat.id)) === 'online');
      expect((await last().call('PATCH', `/v1/users/${cat.id}`, { key: a.adminKey, body: { active: false } })).status).toBe(200);
      await eventually(async () => ws.closed !== null);
      await eventually(async () => (await statusOf(a.adminKey, cat.id)) === undefined);
      expect(await nodes[0]!.running.services.presence.online(a.id)).not.toContain(cat.id);
    });

    it("never shows another organization's users, nor tells its sockets about them", async () => {
      const dan = await extraAgent(nodes[0]!, a, 'dan');
      const spy = await connect(last(), b.adminKey);
      await connect(nodes[0]!, dan.key);
      await eventually(async () => (await statusOf(a.adminKey, dan.id)) === 'online');
      expect((await last().call('PUT', '/v1/presence', { key: dan.key, body: { status: 'away' } })).status).toBe(200);
      await eventually(async () => (await statusOf(a.adminKey, dan.id)) === 'away');
      const theirs = await last().call('GET', '/v1/presence', { key: b.adminKey });
      expect(theirs.body.agents.map((p: { userId: string }) => p.userId)).not.toContain(dan.id);
      expect(spy.frames.some((f) => f.type === 'presence' && f.userId === dan.id)).toBe(false);
      expect(await nodes[0]!.running.services.presence.online(b.id)).not.toContain(dan.id);
    });

    it('refuses a bad status with 400 and a key without inbox:read with 403', async () => {
      for (const body of [{}, { status: 'busy' }, { status: 'offline' }, { status: 'away', extra: 1 }]) {
        const r = await last().call('PUT', '/v1/presence', { key: a.adminKey, body });
        expect(r.status, JSON.stringify(body)).toBe(400);
      }
      const noInbox = await a.keyWith(['tickets:read']);
      expect((await last().call('GET', '/v1/presence', { key: noInbox })).status).toBe(403);
      expect((await last().call('PUT', '/v1/presence', { key: noInbox, body: { status: 'away' } })).status).toBe(403);
    });
  });
}

presenceSuite('embedded', async () => [await startMessagingService({ env: { INBOX_FRAMES_PER_SECOND: '1000' } })]);

describe('clustered', () => {
  const servers = useClusterServers();
  presenceSuite('clustered, 2 nodes', async () => {
    const env = { ...servers.env(`pr${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true', INBOX_FRAMES_PER_SECOND: '1000' };
    return [await startMessagingService({ env: { ...env, NODE_ID: 'p1' } }), await startMessagingService({ env: { ...env, NODE_ID: 'p2' } })];
  });
});
