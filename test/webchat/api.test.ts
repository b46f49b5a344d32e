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
/** A 1×1 PNG, and the start of a PDF: files whose bytes say what they are. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

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

    it('attachments both ways: a visitor sends a picture, agents read it; an agent uploads a document and replies with it; each checked by content', async () => {
      const v = visitorCall(svc, channel.id);
      const { token, audienceExternalId } = (await v('POST', '/visitors', { body: { name: 'Cy' } })).body;
      const sent = await v('POST', '/attachments', { token, body: { data: PNG.toString('base64'), mimeType: 'image/png', filename: '../../broken.png', caption: 'It came like this', clientId: 'f1' } });
      expect(sent.status).toBe(201);
      const m = sent.body.message;
      expect(m).toMatchObject({ from: 'visitor', type: 'image', text: 'It came like this', attachment: { mimeType: 'image/png', filename: 'broken.png' } });
      // A retry with the same clientId is the same message and the same file.
      const again = await v('POST', '/attachments', { token, body: { data: PNG.toString('base64'), mimeType: 'image/png', filename: 'broken.png', clientId: 'f1' } });
      expect([again.body.message.id, again.body.message.attachment.id]).toEqual([m.id, m.attachment.id]);
      // The visitor reads their own file back (CORS for their site), byte for byte, never sniffed.
      const own = await fetch(`${svc.url}/webchat/v1/channels/${channel.id}/attachments/${m.attachment.id}`, { headers: { origin: SITE, authorization: `Bearer ${token}` } });
      expect(own.status).toBe(200);
      expect([own.headers.get('content-type'), own.headers.get('x-content-type-options'), own.headers.get('access-control-allow-origin')]).toEqual(['image/png', 'nosniff', SITE]);
      expect(Buffer.compare(Buffer.from(await own.arrayBuffer()), PNG)).toBe(0);

      // Refused by what the bytes are, not what they are called; and by size.
      const lying = await v('POST', '/attachments', { token, body: { data: PDF.toString('base64'), mimeType: 'image/png', filename: 'x.png' } });
      expect([lying.status, lying.body.error.code]).toEqual([415, 'attachment_type_mismatch']);
      const page = await v('POST', '/attachments', { token, body: { data: Buffer.from('<html><script>alert(1)</script></html>').toString('base64'), mimeType: 'text/plain', filename: 'a.txt' } });
      expect([page.status, page.body.error.code]).toEqual([415, 'unsupported_attachment_type']);
      const svg = await v('POST', '/attachments', { token, body: { data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64'), mimeType: 'image/svg+xml' } });
      expect(svg.status).toBe(415);
      const big = await v('POST', '/attachments', { token, body: { data: Buffer.concat([PDF, Buffer.alloc(4096, 0x20)]).toString('base64'), mimeType: 'application/pdf' } });
      expect([big.status, big.body.error.code]).toEqual([413, 'attachment_too_large']);

      // The agents' side: the message names the file by mediaId, read where a chat network's media is read.
      const stored = await eventually(async () => {
        const r = await agents.call('GET', `/v1/conversations/${audienceExternalId}`, { key: org.adminKey });
        return r.status === 200 ? (r.body.conversation.messages ?? []).find((x: any) => x.content?.mediaId === m.attachment.id) : undefined;
      }, 20_000);
      expect(stored.content).toMatchObject({ type: 'image', mimeType: 'image/png', filename: 'broken.png', caption: 'It came like this' });
      const file = await fetch(`${agents.url}/v1/channels/${channel.id}/media/${m.attachment.id}`, { headers: { authorization: `Bearer ${org.agentKey}` } });
      expect([file.status, file.headers.get('content-type')]).toEqual([200, 'image/png']);
      expect(Buffer.compare(Buffer.from(await file.arrayBuffer()), PNG)).toBe(0);

      // An agent uploads a document for the conversation and replies with it.
      const socket = await VisitorSocket.open(svc, channel.id, token);
      await socket.until((f) => f.type === 'welcome');
      await eventually(async () => (await agents.call('POST', `/v1/conversations/${audienceExternalId}/take`, { key: org.agentKey })).status === 200, 20_000);
      const up = await agents.call('POST', `/v1/conversations/${audienceExternalId}/attachments`, { key: org.agentKey, body: { data: PDF.toString('base64'), mimeType: 'application/pdf', filename: 'invoice' } });
      expect(up.status).toBe(201);
      expect(up.body).toMatchObject({ type: 'document', mimeType: 'application/pdf', filename: 'invoice.pdf', size: PDF.length });
      const asImage = await agents.call('POST', `/v1/conversations/${audienceExternalId}/reply`, { key: org.agentKey, body: { type: 'media', media: { type: 'image', image: { mediaId: up.body.mediaId } } } });
      expect([asImage.status, asImage.body.error.code]).toEqual([422, 'attachment_type_mismatch']);
      const byLink = await agents.call('POST', `/v1/conversations/${audienceExternalId}/reply`, { key: org.agentKey, body: { type: 'media', media: { type: 'document', document: { link: 'https://cdn.example/x.pdf' } } } });
      expect([byLink.status, byLink.body.error.code]).toEqual([422, 'not_supported_on_web_chat']);
      const reply = await agents.call('POST', `/v1/conversations/${audienceExternalId}/reply`, { key: org.agentKey, body: { type: 'media', media: { type: 'document', document: { mediaId: up.body.mediaId, caption: 'Your invoice' } } } });
      expect(reply.status).toBe(200);
      const live = await socket.until((f) => f.type === 'message' && f.message.from === 'agent');
      expect(live.message).toMatchObject({ type: 'document', text: 'Your invoice', attachment: { id: up.body.mediaId, mimeType: 'application/pdf', filename: 'invoice.pdf' } });
      const doc = await fetch(`${svc.url}/webchat/v1/channels/${channel.id}/attachments/${up.body.mediaId}`, { headers: { origin: SITE, authorization: `Bearer ${token}` } });
      expect([doc.status, doc.headers.get('content-type')]).toEqual([200, 'application/pdf']);
      expect(doc.headers.get('content-disposition')).toContain('filename="invoice.pdf"');
      expect((await v('GET', '/messages', { token })).body.messages.map((x: any) => [x.from, x.type, x.attachment?.filename])).toEqual([
        ['visitor', 'image', 'broken.png'],
        ['agent', 'document', 'invoice.pdf'],
      ]);
      socket.close();
    }, 90_000);

    it("a visitor's file reaches only that visitor and the organization's agents", async () => {
      const v = visitorCall(svc, channel.id);
      const ann = (await v('POST', '/visitors', { body: {} })).body;
      const bob = (await v('POST', '/visitors', { body: {} })).body;
      const file = (await v('POST', '/attachments', { token: ann.token, body: { data: PNG.toString('base64'), mimeType: 'image/png' } })).body.message.attachment;
      const get = (token: string, channelId = channel.id) => fetch(`${svc.url}/webchat/v1/channels/${channelId}/attachments/${file.id}`, { headers: { origin: SITE, authorization: `Bearer ${token}` } });
      expect((await get(ann.token)).status).toBe(200);
      expect((await get(bob.token)).status).toBe(404);
      // No token, or from a page of another origin: nothing.
      expect((await fetch(`${svc.url}/webchat/v1/channels/${channel.id}/attachments/${file.id}`, { headers: { origin: SITE } })).status).toBe(401);
      expect((await fetch(`${svc.url}/webchat/v1/channels/${channel.id}/attachments/${file.id}`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${ann.token}` } })).status).toBe(403);
      // An agent cannot send Ann's file into Bob's conversation.
      await v('POST', '/messages', { token: bob.token, body: { text: 'hello' } });
      const cross = await svc.call('POST', `/v1/conversations/${bob.audienceExternalId}/reply`, { key: org.adminKey, body: { type: 'media', media: { type: 'image', image: { mediaId: file.id } } } });
      expect([cross.status, cross.body.error.code]).toEqual([422, 'no_such_attachment']);

      // Another organization: not its file, not its conversation, and its visitors' tokens open nothing here.
      const other = await svc.createOrg('Files elsewhere');
      const otherChannel = await webChat(svc, other.id);
      const media = await fetch(`${svc.url}/v1/channels/${channel.id}/media/${file.id}`, { headers: { authorization: `Bearer ${other.adminKey}` } });
      expect(media.status).toBe(404);
      const upload = await svc.call('POST', `/v1/conversations/${ann.audienceExternalId}/attachments`, { key: other.adminKey, body: { data: PNG.toString('base64') } });
      expect([upload.status, upload.body.error.code]).toEqual([404, 'not_found']);
      const theirVisitor = (await visitorCall(svc, otherChannel.id)('POST', '/visitors', { body: {} })).body;
      expect((await get(theirVisitor.token)).status).toBe(401);
      expect((await get(theirVisitor.token, otherChannel.id)).status).toBe(404);
      // The agents' upload needs inbox:write, like a reply.
      const noScope = await svc.call('POST', `/v1/conversations/${ann.audienceExternalId}/attachments`, { body: { data: PNG.toString('base64') } });
      expect(noScope.status).toBe(401);
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

webChatSuite('embedded', async () => [await startTestService({ env: { WEBCHAT_VISITOR_MESSAGES_PER_MINUTE: '5', WEBCHAT_MAX_ATTACHMENT_BYTES: '4096' } })]);

const servers = useClusterServers();
webChatSuite('clustered, two nodes', async () => {
  const prefix = `wc${Date.now() % 100000}`;
  const env = (id: string) => ({ ...servers.env(prefix), NODE_ID: id, ACTOR_PARTITIONS: '4', SECRETS_KEY: '5'.repeat(64), WEBCHAT_VISITOR_MESSAGES_PER_MINUTE: '5', WEBCHAT_MAX_ATTACHMENT_BYTES: '4096' });
  const a = await startTestService({ env: env('a') });
  const b = await startTestService({ env: env('b') });
  return [a, b];
});
