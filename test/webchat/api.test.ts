import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestOrg, type TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually } from '../messaging/messaging-helpers.js';
import { identityHash } from '../../src/webchat/index.js';
import { SITE, upgradeStatus, visitorCall, VisitorSocket, webChat } from './helpers.js';

/**
 * Web chat's visitor side through its REST endpoints and socket: a visitor's
 * message becomes a conversation like a chat-network message (the inbox
 * lists it, an agent takes and answers it), the answer reaches the visitor
 * live and in history, and nothing crosses origins, visitors or organizations.
 */
function webChatSuite(name: string, start: () => Promise<TestService[]>) {
  describe(`web chat visitors (${name})`, () => {
    let nodes: TestService[];
    let svc: TestService;
    /** The node agents use (another one when clustered). */
    let agents: TestService;
    let org: TestOrg;
    let channel: { id: string; identitySecret?: string };

    beforeAll(async () => {
      nodes = await start();
      svc = nodes[0]!;
      agents = nodes[nodes.length - 1]!;
      org = await svc.createOrg('Web shop');
      channel = await webChat(svc, org.id);
    }, 120_000);
    afterAll(async () => {
      for (const n of nodes ?? []) await n.close();
    });

    it('a visitor writes, an agent takes and replies, the visitor sees the reply live and after a reload', async () => {
      const v = visitorCall(svc, channel.id);
      const started = await v('POST', '/visitors', { body: {} });
      expect(started.status).toBe(201);
      const { token, visitorId, audienceExternalId } = started.body;
      expect(audienceExternalId).toBe(`${visitorId}:${channel.id}`);
      expect(started.headers.get('access-control-allow-origin')).toBe(SITE);
      const socket = await VisitorSocket.open(svc, channel.id, token);
      await socket.until((f) => f.type === 'welcome');
      socket.send({ type: 'message', text: 'Where is my order?', clientId: 'c1' });
      const ack = await socket.until((f) => f.type === 'ack' && f.clientId === 'c1');
      expect(ack.message).toMatchObject({ from: 'visitor', text: 'Where is my order?' });

      // The agents' side: listed like any conversation, taken, answered.
      const listed = await eventually(async () => {
        const r = await agents.call('GET', '/v1/conversations', { key: org.agentKey });
        return r.body.conversations.find((c: any) => c.audienceExternalId === audienceExternalId);
      }, 20_000);
      expect(listed.channelId).toBe(channel.id);
      expect((await agents.call('POST', `/v1/conversations/${audienceExternalId}/take`, { key: org.agentKey })).status).toBe(200);
      // A web chat takes text: a location, a contact card, buttons are refused before anything is stored.
      for (const body of [{ type: 'location', location: { latitude: 52.52, longitude: 13.41 } }, { type: 'contacts', contacts: [{ name: { formatted_name: 'Ben Lee' } }] }]) {
        const refused = await agents.call('POST', `/v1/conversations/${audienceExternalId}/reply`, { key: org.agentKey, body });
        expect([refused.status, refused.body.error.code]).toEqual([422, 'not_supported_on_web_chat']);
      }
      const reply = await agents.call('POST', `/v1/conversations/${audienceExternalId}/reply`, { key: org.agentKey, body: { type: 'text', text: 'It ships today.' } });
      expect(reply.status).toBe(200);
      const live = await socket.until((f) => f.type === 'message' && f.message.from === 'agent');
      expect(live.message.text).toBe('It ships today.');

      // An agent's private note (and the timeline's system entries) stay on the agents' side.
      expect((await agents.call('POST', `/v1/conversations/${audienceExternalId}/notes`, { key: org.agentKey, body: { text: 'VIP customer' } })).status).toBe(201);

      // A reload: the same token continues the same visitor, with the history and one unread reply.
      const again = await v('POST', '/visitors', { body: { token } });
      expect(again.body).toMatchObject({ visitorId, token, unreadCount: 1 });
      const history = await v('GET', '/messages', { token });
      expect(history.body.messages.map((m: any) => [m.from, m.text])).toEqual([
        ['visitor', 'Where is my order?'],
        ['agent', 'It ships today.'],
      ]);
      expect((await v('POST', '/read', { token })).body).toEqual({ unreadCount: 0 });
      expect((await v('GET', '/messages', { token })).body.unreadCount).toBe(0);
      socket.close();
    }, 90_000);

    it('the fallback: a long poll answers with the agent\'s reply, sends go by POST', async () => {
      const v = visitorCall(svc, channel.id);
      const { token, audienceExternalId } = (await v('POST', '/visitors', { body: { name: 'Bo' } })).body;
      const sent = await v('POST', '/messages', { token, body: { text: 'Hello?', clientId: 'p1' } });
      expect(sent.status).toBe(201);
      // The same clientId again is the same message, not a second one.
      expect((await v('POST', '/messages', { token, body: { text: 'Hello?', clientId: 'p1' } })).body.message.id).toBe(sent.body.message.id);
      const poll = v('GET', `/poll?after=${encodeURIComponent(sent.body.message.id)}&wait=20`, { token });
      await eventually(async () => (await agents.call('POST', `/v1/conversations/${audienceExternalId}/take`, { key: org.adminKey })).status === 200, 20_000);
      await agents.call('POST', `/v1/conversations/${audienceExternalId}/reply`, { key: org.adminKey, body: { type: 'text', text: 'Hi Bo' } });
      const got = await poll;
      expect(got.status).toBe(200);
      expect(got.body.messages.map((m: any) => m.text)).toEqual(['Hi Bo']);
      const contact = await eventually(async () => (await agents.call('GET', '/v1/conversations', { key: org.adminKey })).body.conversations.find((c: any) => c.audienceExternalId === audienceExternalId));
      expect(contact.contactName).toBe('Bo');
    }, 90_000);

    it('a page of an origin not allowed gets nothing: no CORS headers, 403, no socket', async () => {
      const evil = visitorCall(svc, channel.id, 'https://evil.example');
      const r = await evil('POST', '/visitors', { body: {} });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('origin_not_allowed');
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
      const pre = await fetch(`${svc.url}/webchat/v1/channels/${channel.id}/messages`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
      const good = await fetch(`${svc.url}/webchat/v1/channels/${channel.id}/messages`, { method: 'OPTIONS', headers: { origin: SITE, 'access-control-request-method': 'POST' } });
      expect(good.headers.get('access-control-allow-origin')).toBe(SITE);
      const { token } = (await visitorCall(svc, channel.id)('POST', '/visitors', { body: {} })).body;
      expect(await upgradeStatus(svc, channel.id, token, 'https://evil.example')).toBe(403);
      expect(await upgradeStatus(svc, channel.id, token)).toBe(403);
      expect(await upgradeStatus(svc, channel.id, 'wct_' + 'x'.repeat(43), SITE)).toBe(401);
      expect(await upgradeStatus(svc, channel.id, token, SITE)).toBe(101);
    });

    it('identity verification: a verified user is one visitor on two browsers; a forged hash is refused', async () => {
      expect(channel.identitySecret).toMatch(/^wcs_/);
      const v = visitorCall(svc, channel.id);
      const proof = { userId: 'user-42', userHash: identityHash(channel.identitySecret!, 'user-42') };
      const a = await v('POST', '/visitors', { body: proof });
      const b = await v('POST', '/visitors', { body: proof });
      expect(a.status).toBe(201);
      expect(a.body.verified).toBe(true);
      expect(b.body.visitorId).toBe(a.body.visitorId);
      expect(b.body.token).not.toBe(a.body.token);
      await v('POST', '/messages', { token: a.body.token, body: { text: 'from my laptop' } });
      expect((await v('GET', '/messages', { token: b.body.token })).body.messages.map((m: any) => m.text)).toEqual(['from my laptop']);
      const forged = await v('POST', '/visitors', { body: { userId: 'user-42', userHash: identityHash('wcs_not-the-secret', 'user-42') } });
      expect(forged.status).toBe(401);
      expect(forged.body.error.code).toBe('identity_not_verified');
      const other = await v('POST', '/visitors', { body: { userId: 'user-43', userHash: proof.userHash } });
      expect(other.status).toBe(401);
      // Rotating the secret: the old hash no longer verifies.
      const rotated = await svc.call('POST', `/v1/channels/${channel.id}/identity-secret`, { key: org.adminKey });
      expect(rotated.status).toBe(200);
      expect((await v('POST', '/visitors', { body: proof })).status).toBe(401);
      expect((await v('POST', '/visitors', { body: { userId: 'user-42', userHash: identityHash(rotated.body.identitySecret, 'user-42') } })).body.visitorId).toBe(a.body.visitorId);
      channel.identitySecret = rotated.body.identitySecret;
    });

    it('a visitor token opens nothing of the agents\' API, and an agent key is no visitor token', async () => {
      const { token } = (await visitorCall(svc, channel.id)('POST', '/visitors', { body: {} })).body;
      for (const path of ['/v1/conversations', '/v1/tickets', '/v1/channels']) {
        expect((await svc.call('GET', path, { key: token })).status).toBe(401);
      }
      expect(await upgradeStatus(svc, channel.id, org.adminKey, SITE)).toBe(401);
      const ws = await fetch(`${svc.url}/ws?token=${token}`, { headers: { connection: 'upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } }).catch(() => null);
      expect(ws === null || ws.status === 401).toBe(true);
      expect((await visitorCall(svc, channel.id)('GET', '/messages', { token: org.adminKey })).status).toBe(401);
    });

    it('a visitor sees only their own conversation; another organization\'s channel and settings answer 404', async () => {
      const v = visitorCall(svc, channel.id);
      const ann = (await v('POST', '/visitors', { body: {} })).body;
      const bob = (await v('POST', '/visitors', { body: {} })).body;
      await v('POST', '/messages', { token: ann.token, body: { text: 'ann secret' } });
      const bobSocket = await VisitorSocket.open(svc, channel.id, bob.token);
      await bobSocket.until((f) => f.type === 'welcome');
      await v('POST', '/messages', { token: bob.token, body: { text: 'bob here', clientId: 'b1' } });
      await bobSocket.until((f) => f.type === 'message' && f.message.text === 'bob here');
      expect(bobSocket.frames.some((f) => JSON.stringify(f).includes('ann secret'))).toBe(false);
      expect((await v('GET', '/messages', { token: bob.token })).body.messages.map((m: any) => m.text)).toEqual(['bob here']);
      bobSocket.close();

      // Another organization: its own web chat; tokens and ids of one never reach the other.
      const other = await svc.createOrg('Other shop');
      const otherChannel = await webChat(svc, other.id);
      expect((await visitorCall(svc, otherChannel.id)('GET', '/messages', { token: ann.token })).status).toBe(401);
      expect((await svc.call('POST', `/v1/channels/${channel.id}/identity-secret`, { key: other.adminKey })).status).toBe(404);
      expect((await svc.call('PATCH', `/v1/channels/${channel.id}/web-chat`, { key: other.adminKey, body: { widget: { title: 'x' } } })).status).toBe(404);
      expect((await svc.call('DELETE', `/v1/channels/${channel.id}/visitors/${ann.visitorId}/tokens`, { key: other.adminKey })).status).toBe(404);
      expect((await svc.call('DELETE', `/v1/channels/${channel.id}/visitor-tokens`, { key: other.adminKey })).status).toBe(404);
      const theirs = await svc.call('GET', '/v1/conversations', { key: other.adminKey });
      expect(theirs.body.conversations).toEqual([]);
    });

    it('revoking a visitor closes their socket and refuses their token', async () => {
      const v = visitorCall(svc, channel.id);
      const { token, visitorId } = (await v('POST', '/visitors', { body: {} })).body;
      const socket = await VisitorSocket.open(svc, channel.id, token);
      await socket.until((f) => f.type === 'welcome');
      const r = await agents.call('DELETE', `/v1/channels/${channel.id}/visitors/${visitorId}/tokens`, { key: org.adminKey });
      expect(r.body).toEqual({ revoked: 1 });
      expect(await socket.closed()).toBe(4001);
      expect((await v('GET', '/messages', { token })).status).toBe(401);
      // The browser starts over as a new visitor.
      const again = await v('POST', '/visitors', { body: { token } });
      expect(again.body.visitorId).not.toBe(visitorId);
    });

    it('buttons and media answer success false on a web chat; text goes, and no 24-hour window applies', async () => {
      const v = visitorCall(svc, channel.id);
      const { token, audienceExternalId } = (await v('POST', '/visitors', { body: {} })).body;
      await v('POST', '/messages', { token, body: { text: 'hi' } });
      const buttons = await svc.call('POST', '/v1/messages/buttons', {
        key: org.adminKey,
        body: { audienceExternalId, interactive: { body: { text: 'Pick' }, buttons: [{ id: 'a', title: 'A' }] } },
      });
      expect(buttons.status).toBe(200);
      expect(buttons.body).toEqual({ success: false });
      const media = await svc.call('POST', '/v1/messages/media', { key: org.adminKey, body: { audienceExternalId, media: { type: 'image', image: { link: 'https://cdn.example/x.png' } } } });
      expect(media.body).toEqual({ success: false });
      const text = await svc.call('POST', '/v1/messages/text', { key: org.adminKey, body: { audienceExternalId, text: { body: 'Bot here' } } });
      expect(text.status).toBe(200);
      expect(text.body.success).toBe(true);
      expect((await v('GET', '/messages', { token })).body.messages.map((m: any) => [m.from, m.text])).toEqual([
        ['visitor', 'hi'],
        ['bot', 'Bot here'],
      ]);
    });

    it('a visitor past the rate limit gets 429; a message past the size limit 413', async () => {
      const v = visitorCall(svc, channel.id);
      const { token } = (await v('POST', '/visitors', { body: {} })).body;
      const long = await v('POST', '/messages', { token, body: { text: 'x'.repeat(4097) } });
      expect(long.status).toBe(413);
      let last = 0;
      for (let i = 0; i < 6 && last !== 429; i++) last = (await v('POST', '/messages', { token, body: { text: `m${i}` } })).status;
      expect(last).toBe(429);
    });
  });
}

webChatSuite('embedded', async () => [await startTestService({ env: { WEBCHAT_VISITOR_MESSAGES_PER_MINUTE: '5' } })]);

const servers = useClusterServers();
webChatSuite('clustered, two nodes', async () => {
  const prefix = `wc${Date.now() % 100000}`;
  const env = (id: string) => ({ ...servers.env(prefix), NODE_ID: id, ACTOR_PARTITIONS: '4', SECRETS_KEY: '5'.repeat(64), WEBCHAT_VISITOR_MESSAGES_PER_MINUTE: '5' });
  const a = await startTestService({ env: env('a') });
  const b = await startTestService({ env: env('b') });
  return [a, b];
});
