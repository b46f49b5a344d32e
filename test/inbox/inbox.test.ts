import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { eventually, messagingOrg, orderUpdate, startMessagingService, type MessagingOrg } from '../messaging/messaging-helpers.js';
import { extraAgent, InboxClient } from './client.js';

/**
 * The live inbox end to end, over real sockets: once on one embedded node,
 * once on two clustered nodes (real Redis and NATS) with the agents on
 * different nodes.
 */
function inboxSuite(name: string, start: () => Promise<TestService[]>) {
  describe(`live inbox (${name})`, () => {
    let nodes: TestService[];
    let a: MessagingOrg;
    let b: MessagingOrg;
    let ann: { id: string; key: string };
    let bob: { id: string; key: string };
    const clients: InboxClient[] = [];
    const connect = async (node: TestService, key: string, since?: number) => {
      const c = await InboxClient.connect(node.url, key, since === undefined ? {} : { since });
      clients.push(c);
      return c;
    };
    const last = () => nodes[nodes.length - 1]!;
    let phone = 4917000000000 + Math.floor(Math.random() * 1e6) * 100;
    /** A contact of org `o` whose conversation is in the live-chat queue. */
    const queued = async (o: MessagingOrg, node = nodes[0]!) => {
      const p = String(phone++);
      const aeid = `${p}:${o.phoneNumberId}`;
      const w = await node.call('POST', `/v1/sandbox/channels/${o.channelId}/customers/${p}/messages`, { key: o.adminKey, body: { text: 'I need a human', profileName: 'Ann Customer' } });
      expect(w.status).toBe(201);
      await eventually(async () => (await node.call('GET', `/v1/conversations/${aeid}`, { key: o.adminKey })).status === 200);
      const h = await node.call('POST', '/v1/handover', { key: o.adminKey, body: { audienceExternalId: aeid } });
      expect(h.body).toEqual({ success: true });
      return { phone: p, aeid };
    };

    beforeAll(async () => {
      nodes = await start();
      a = await messagingOrg(nodes[0]!, 'A', 1000);
      b = await messagingOrg(nodes[0]!, 'B', 1000);
      ann = await extraAgent(nodes[0]!, a, 'ann');
      bob = await extraAgent(nodes[0]!, a, 'bob');
    }, 60_000);
    afterEach(() => {
      for (const c of clients.splice(0)) c.close();
    });
    afterAll(async () => {
      await Promise.all((nodes ?? []).map((n) => n.close()));
    });

    it('refuses an upgrade without a valid key, or without inbox:read, as HTTP before any socket opens', async () => {
      await expect(InboxClient.connect(nodes[0]!.url, 'org_nope')).rejects.toThrow(/401/);
      const noScope = await a.keyWith(['tickets:read']);
      await expect(InboxClient.connect(nodes[0]!.url, noScope)).rejects.toThrow(/403/);
      const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${nodes[0]!.url}/ws`, { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('upgrade', () => reject(new Error('upgraded without credentials')));
        req.on('error', reject);
        req.end();
      });
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toMatchObject({ success: false, error: { code: 'unauthorized' } });
    });

    it('two agents race to take one conversation, 100 times: exactly one wins each time, the other gets already_taken and sees the taken event', async () => {
      const annWs = await connect(nodes[0]!, ann.key);
    expect(annWs.frames[0]!.type).toBe('welcome');
      const bobWs = await connect(last(), bob.key);
      const convs: { phone: string; aeid: string }[] = [];
      for (let i = 0; i < 100; i++) convs.push(await queued(a, nodes[i % nodes.length]!));
      for (const { aeid } of convs) {
        const [x, y] = await Promise.all([annWs.command({ type: 'take', conversationId: aeid }), bobWs.command({ type: 'take', conversationId: aeid })]);
        const wins = [x, y].filter((f) => f.type === 'ack');
        const losses = [x, y].filter((f) => f.type === 'error');
        expect(wins).toHaveLength(1);
        expect(losses).toHaveLength(1);
        expect(losses[0]!.error.code).toBe('already_taken');
        const winner = wins[0] === x ? ann.id : bob.id;
        expect(wins[0]!.result.conversation).toMatchObject({ id: aeid, status: 'assigned', assigneeId: winner });
        expect(losses[0]!.error.details).toEqual({ assigneeId: winner });
      }
      // Both sockets see every conversation become taken, by the winner.
      for (const ws of [annWs, bobWs]) {
        for (const { aeid } of convs) await ws.waitFor((f) => f.type === 'conversation.assigned' && f.data.audienceExternalId === aeid);
        expect(ws.events().filter((f) => f.type === 'conversation.assigned' && convs.some((c) => c.aeid === f.data.audienceExternalId))).toHaveLength(100);
      }
    }, 120_000);

    it('the whole loop with the sandbox customer: writes → handover → take → reply → customer gets it → read on the socket → hand back → the bot answers again', async () => {
      const agent = await connect(last(), ann.key);
      const { phone: p, aeid } = await queued(a);
      const q = await agent.waitFor((f) => f.type === 'handover.requested' && f.data.audienceExternalId === aeid);
      expect(q).toMatchObject({ organizationId: a.id, seq: expect.any(Number), id: expect.any(String), createdAt: expect.any(String) });
      expect((await agent.command({ type: 'take', conversationId: aeid })).type).toBe('ack');
      // Before taking, the bot was refused; the agent's reply goes.
      const reply = await agent.command({ type: 'reply', conversationId: aeid, message: { type: 'text', text: 'Hi, Bob from support here.' } });
      expect(reply).toMatchObject({ type: 'ack', result: { messageId: expect.stringMatching(/^wamid\./), sessionId: expect.any(String) } });
      const messageId = reply.result.messageId as string;
      const phoneView = await eventually(async () => {
        const r = await nodes[0]!.call('GET', `/v1/sandbox/channels/${a.channelId}/customers/${p}/messages`, { key: a.adminKey });
        return r.body.messages.find((m: { text?: string }) => JSON.stringify(m).includes('Bob from support')) ? r : null;
      });
      expect(phoneView.status).toBe(200);
      await agent.waitFor((f) => f.type === 'message.sent' && f.data.messageId === messageId && f.data.sender === 'agent');
      await agent.waitFor((f) => f.type === 'message_status' && f.data.messageId === messageId && f.data.status === 'read');
      const detail = await nodes[0]!.call('GET', `/v1/conversations/${aeid}`, { key: a.adminKey });
      expect(detail.body.conversation).toMatchObject({ status: 'assigned', assigneeId: ann.id, contactName: 'Ann Customer', channelId: a.channelId, window: { open: true } });
      // The system entries of the handover and the take, in order with the messages.
      expect(detail.body.conversation.messages.map((m: { sender: string; system?: { event: string } }) => m.system?.event ?? m.sender)).toEqual(['contact', 'handover_requested', 'taken', 'agent']);
      // While the agent has it the bot may not answer; after the hand back it may.
      const botBefore = await nodes[0]!.call('POST', '/v1/messages/text', { key: a.adminKey, body: { channelId: a.channelId, to: p, text: { body: 'bot here' } } });
      expect(botBefore.status).toBe(409);
      expect((await agent.command({ type: 'hand_back', conversationId: aeid })).result.conversation).toMatchObject({ status: 'bot', assigneeId: null });
      await agent.waitFor((f) => f.type === 'handover.opened' && f.data.audienceExternalId === aeid);
      const botAfter = await nodes[0]!.call('POST', '/v1/messages/text', { key: a.adminKey, body: { channelId: a.channelId, to: p, text: { body: 'bot here again' } } });
      expect(botAfter.status).toBe(200);
      expect(botAfter.body).toMatchObject({ success: true });
    });

    it("every socket of the organization hears a conversation's changed row once the views hold it (queued, taken, resolved), another organization's never", async () => {
      const annWs = await connect(nodes[0]!, ann.key);
      const other = await connect(last(), b.adminKey);
      const { aeid } = await queued(a);
      const row = (pred: (c: Record<string, any>) => boolean) => annWs.waitFor((f) => f.type === 'conversation' && f.conversation.id === aeid && pred(f.conversation));
      const ids = async (query: string) => (await nodes[0]!.call('GET', `/v1/conversations?${query}`, { key: ann.key })).body.conversations.map((c: { id: string }) => c.id);
      const waiting = await row((c) => c.status === 'queued');
      // The frame comes after the index write: the view it names already lists the conversation.
      expect(await ids('view=waiting&limit=100')).toContain(aeid);
      expect((await nodes[0]!.call('POST', `/v1/conversations/${aeid}/take`, { key: bob.key })).status).toBe(200);
      const taken = await row((c) => c.status === 'assigned');
      expect(taken.conversation).toMatchObject({ assigneeId: bob.id, sessionId: waiting.conversation.sessionId });
      expect(taken.conversation.version).toBeGreaterThan(waiting.conversation.version);
      expect(await ids('view=others&limit=100')).toContain(aeid);
      expect((await nodes[0]!.call('POST', `/v1/conversations/${aeid}/resolve`, { key: bob.key })).status).toBe(200);
      const resolved = await row((c) => c.sessionStatus === 'resolved');
      expect(resolved.conversation).toMatchObject({ status: 'bot', assigneeId: null });
      expect(await ids('view=resolved&limit=100')).toContain(aeid);
      // The other organization's socket heard its own welcome and nothing of these.
      const mine = await queued(b);
      await other.waitFor((f) => f.type === 'conversation' && f.conversation.id === mine.aeid);
      expect(other.frames.filter((f) => f.type === 'conversation' && f.conversation.id === aeid)).toEqual([]);
    });

    it("every socket of the organization hears that a contact was renamed or labelled, another organization's never", async () => {
      const annWs = await connect(nodes[0]!, ann.key);
      const other = await connect(last(), b.adminKey);
      const { aeid } = await queued(a);
      const contactId = (await nodes[0]!.call('GET', `/v1/conversations/${aeid}`, { key: a.adminKey })).body.conversation.contactId as string;
      const heard = () => annWs.waitFor((f) => f.type === 'contact' && f.contact.id === contactId);
      expect((await last().call('PATCH', `/v1/contacts/${contactId}`, { key: a.adminKey, body: { name: 'Renamed Elsewhere' } })).status).toBe(200);
      expect((await heard()).contact).toEqual({ id: contactId, audienceExternalId: aeid });
      const label = await last().call('POST', '/v1/labels', { key: a.adminKey, body: { name: `vip-${contactId.slice(0, 6)}`, color: '#aa2200' } });
      const before = annWs.frames.filter((f) => f.type === 'contact').length;
      expect((await last().call('POST', `/v1/contacts/${contactId}/labels`, { key: a.adminKey, body: { labels: [label.body.label.id] } })).status).toBe(200);
      await annWs.waitFor(() => annWs.frames.filter((f) => f.type === 'contact').length > before);
      // The other organization's socket hears its own contacts' changes only.
      const mine = await queued(b);
      const theirs = (await nodes[0]!.call('GET', `/v1/conversations/${mine.aeid}`, { key: b.adminKey })).body.conversation.contactId as string;
      expect((await nodes[0]!.call('PATCH', `/v1/contacts/${theirs}`, { key: b.adminKey, body: { name: 'Theirs' } })).status).toBe(200);
      await other.waitFor((f) => f.type === 'contact' && f.contact.id === theirs);
      expect(other.frames.filter((f) => f.type === 'contact' && f.contact.id === contactId)).toEqual([]);
    });

    it('reconnecting with the last seq gets exactly what was missed, in order, without duplicates', async () => {
      const watcher = await connect(nodes[0]!, a.adminKey); // stays connected: the reference
      const agent = await connect(last(), ann.key);
      const { aeid, phone: p } = await queued(a);
      await agent.waitFor((f) => f.type === 'handover.requested' && f.data.audienceExternalId === aeid);
      const since = agent.lastSeq();
      agent.close();
      await agent.waitForClose();
      // 50+ events while it is away: tickets, inbound messages, sends and their statuses.
      for (let i = 0; i < 20; i++) expect((await nodes[i % nodes.length]!.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: `Missed ${i}`, description: 'while away' } })).status).toBe(201);
      for (let i = 0; i < 15; i++) {
        expect((await nodes[0]!.call('POST', `/v1/sandbox/channels/${a.channelId}/customers/${p}/messages`, { key: a.adminKey, body: { text: `message ${i}` } })).status).toBe(201);
      }
      for (let i = 0; i < 5; i++) expect((await nodes[0]!.call('POST', '/v2/wa/template', { key: a.adminKey, body: orderUpdate(a.channelId, String(Number(p) + 50_000 + i)) })).status).toBe(201);
      const missed = await eventually(async () => {
        const after = watcher.events().filter((f) => f.seq > since);
        return after.length >= 50 ? after : null;
      }, 15_000);
      const back = await connect(nodes[0]!, ann.key, since);
      const done = await back.waitFor((f) => f.type === 'replay_done');
      const replayed = back.frames.slice(0, back.frames.indexOf(done)).filter((f) => typeof f.seq === 'number' && f.type !== 'welcome');
      const expected = watcher.events().filter((f) => f.seq > since && f.seq <= done.seq);
      expect(expected.length).toBeGreaterThanOrEqual(missed.length);
      expect(replayed.map((f) => f.id)).toEqual(expected.map((f) => f.id));
      expect(new Set(replayed.map((f) => f.id)).size).toBe(replayed.length);
      expect(replayed.map((f) => f.seq)).toEqual([...replayed.map((f) => f.seq)].sort((x, y) => x - y));
      // Live events continue after the replay, none twice.
      await nodes[0]!.call('POST', '/v1/tickets', { key: a.adminKey, body: { subject: 'After', description: 'live' } });
      const live = await back.waitFor((f) => f.type === 'ticket.created' && f.data.title === 'After');
      expect(live.seq).toBeGreaterThan(done.seq);
      const ids = back.events().map((f) => f.id);
      expect(new Set(ids).size).toBe(ids.length);
    }, 60_000);

    it("never shows one organization's events to another, and refuses every command on another organization's ids", async () => {
      const spy = await connect(last(), b.adminKey);
      const { aeid } = await queued(a);
      const ownB = await queued(b);
      await spy.waitFor((f) => f.type === 'handover.requested' && f.data.audienceExternalId === ownB.aeid);
      for (const cmd of [
        { type: 'take', conversationId: aeid },
        { type: 'reply', conversationId: aeid, message: { type: 'text', text: 'hi' } },
        { type: 'hand_back', conversationId: aeid },
        { type: 'resolve', conversationId: aeid },
        { type: 'transfer', conversationId: aeid, agentId: ann.id },
        { type: 'typing', conversationId: aeid },
        { type: 'ticket_update', ticketId: 'T-000000-000001', changes: { status: 'closed' } },
      ]) {
        const r = await spy.command(cmd);
        expect(r.type, JSON.stringify(cmd)).toBe('error');
        expect(['not_found', 'unknown_agent', 'channel_not_found']).toContain(r.error.code);
      }
      for (const path of [`/v1/conversations/${aeid}`, `/v1/conversations/${aeid}/take`]) {
        const r = await nodes[0]!.call(path.endsWith('take') ? 'POST' : 'GET', path, { key: b.adminKey });
        expect(r.status).toBe(404);
      }
      const listed = await nodes[0]!.call('GET', '/v1/conversations?status=queued&limit=100', { key: b.adminKey });
      expect(listed.body.conversations.map((c: { id: string }) => c.id)).not.toContain(aeid);
      const contacts = await nodes[0]!.call('GET', '/v1/contacts?limit=100', { key: b.adminKey });
      expect(contacts.body.contacts.every((c: { audienceExternalId: string }) => c.audienceExternalId.endsWith(b.phoneNumberId))).toBe(true);
      const aContact = (await nodes[0]!.call('GET', '/v1/contacts?limit=1', { key: a.adminKey })).body.contacts[0];
      expect((await nodes[0]!.call('GET', `/v1/contacts/${aContact.id}`, { key: b.adminKey })).status).toBe(404);
      expect(spy.events().filter((f) => f.organizationId !== b.id)).toEqual([]);
    });

    it('bad frames get an error frame and the socket stays open; a conversation not held and a taken one are refused', async () => {
      const agent = await connect(nodes[0]!, ann.key);
      const other = await connect(last(), bob.key);
      const { aeid } = await queued(a);
      agent.ws.send('{not json');
      expect((await agent.waitFor((f) => f.type === 'error' && f.error.code === 'invalid_json')).commandId).toBeUndefined();
      agent.ws.send(JSON.stringify({ type: 'dance', id: 'x1' }));
      expect(await agent.waitFor((f) => f.type === 'error' && f.commandId === 'x1')).toMatchObject({ error: { code: 'unknown_frame_type' } });
      agent.ws.send(JSON.stringify({ type: 'reply', id: 'big', conversationId: aeid, message: { type: 'text', text: 'x'.repeat(70_000) } }));
      expect((await agent.waitFor((f) => f.type === 'error' && f.error.code === 'frame_too_large')).type).toBe('error');
      expect(await agent.command({ type: 'take', conversationId: 'not an id' })).toMatchObject({ type: 'error', error: { code: 'validation_failed' } });
      expect(await agent.command({ type: 'reply', conversationId: aeid, message: { type: 'text', text: 'not mine' } })).toMatchObject({ type: 'error', error: { code: 'not_assigned_to_you' } });
      expect((await other.command({ type: 'take', conversationId: aeid })).type).toBe('ack');
      expect(await agent.command({ type: 'take', conversationId: aeid })).toMatchObject({ type: 'error', error: { code: 'already_taken', details: { assigneeId: bob.id } } });
      expect(await agent.command({ type: 'hand_back', conversationId: aeid })).toMatchObject({ type: 'error', error: { code: 'not_assigned_to_you' } });
      expect(await agent.command({ type: 'transfer', conversationId: aeid, agentId: ann.id })).toMatchObject({ type: 'error', error: { code: 'not_assigned_to_you' } });
      // Nothing changed, and the socket is still usable.
      expect((await nodes[0]!.call('GET', `/v1/conversations/${aeid}`, { key: a.adminKey })).body.conversation).toMatchObject({ status: 'assigned', assigneeId: bob.id });
      expect(agent.closed).toBeNull();
      expect((await agent.command({ type: 'presence', status: 'away' })).type).toBe('ack');
      // A transfer by the holder, then a resolve by the new holder.
      expect((await other.command({ type: 'transfer', conversationId: aeid, agentId: ann.id })).result.conversation).toMatchObject({ assigneeId: ann.id });
      await agent.waitFor((f) => f.type === 'conversation.assigned' && f.data.audienceExternalId === aeid && f.data.via === 'transfer' && f.data.by === bob.id);
      expect((await agent.command({ type: 'resolve', conversationId: aeid })).result.conversation).toMatchObject({ status: 'bot', sessionStatus: 'resolved' });
      await other.waitFor((f) => f.type === 'conversation.resolved' && f.data.audienceExternalId === aeid);
    });

    it('a retried command id acts once', async () => {
      const agent = await connect(nodes[0]!, ann.key);
      const { aeid } = await queued(a);
      expect((await agent.command({ type: 'take', id: 'same-1', conversationId: aeid })).type).toBe('ack');
      expect((await agent.command({ type: 'hand_back', id: 'same-2', conversationId: aeid })).type).toBe('ack');
      // The same take again (a retry after a reconnect, on another node): answered, not acted on — the conversation stays with the bot.
      const again = await connect(last(), ann.key);
      expect((await again.command({ type: 'take', id: 'same-1', conversationId: aeid })).type).toBe('ack');
      expect((await nodes[0]!.call('GET', `/v1/conversations/${aeid}`, { key: a.adminKey })).body.conversation.status).toBe('bot');
    });

    it('relays typing and presence to the other agents, not stored', async () => {
      const x = await connect(nodes[0]!, ann.key);
      const y = await connect(last(), bob.key);
      const { aeid } = await queued(a);
      await y.waitFor((f) => f.type === 'presence' && f.userId === ann.id);
      expect((await x.command({ type: 'typing', conversationId: aeid })).type).toBe('ack');
      await y.waitFor((f) => f.type === 'typing' && f.userId === ann.id && f.conversationId === aeid);
      expect(x.frames.some((f) => f.type === 'typing' && f.userId === ann.id)).toBe(false);
      x.close();
      await y.waitFor((f) => f.type === 'presence' && f.userId === ann.id && f.status === 'offline');
    });

    it('counts unread customer messages per agent: seen resets the caller only; a new message counts again; never across organizations', async () => {
      const q = await queued(a);
      const unread = async (key: string) => (await last().call('GET', `/v1/conversations/${q.aeid}`, { key })).body.conversation.unreadCount;
      expect(await unread(ann.key)).toBe(1);
      expect(await unread(bob.key)).toBe(1);
      const seen = await last().call('POST', `/v1/conversations/${q.aeid}/seen`, { key: ann.key });
      expect(seen.status).toBe(200);
      expect(seen.body.conversation).toMatchObject({ id: q.aeid, unreadCount: 0 });
      expect(await unread(ann.key)).toBe(0);
      expect(await unread(bob.key)).toBe(1);
      for (const text of ['still there?', 'hello?']) {
        expect((await nodes[0]!.call('POST', `/v1/sandbox/channels/${a.channelId}/customers/${q.phone}/messages`, { key: a.adminKey, body: { text } })).status).toBe(201);
      }
      await eventually(async () => (await unread(ann.key)) === 2);
      expect(await unread(bob.key)).toBe(3);
      const listed = await nodes[0]!.call('GET', '/v1/conversations?status=queued&limit=100', { key: ann.key });
      expect(listed.body.conversations.find((c: { id: string }) => c.id === q.aeid).unreadCount).toBe(2);
      // Resolving ends the session: the next message opens a new one, counted from zero.
      expect((await nodes[0]!.call('POST', `/v1/conversations/${q.aeid}/resolve`, { key: a.adminKey })).status).toBe(200);
      expect((await nodes[0]!.call('POST', `/v1/sandbox/channels/${a.channelId}/customers/${q.phone}/messages`, { key: a.adminKey, body: { text: 'new question' } })).status).toBe(201);
      await eventually(async () => (await unread(ann.key)) === 1);
      expect((await last().call('POST', `/v1/conversations/${q.aeid}/seen`, { key: b.adminKey })).status).toBe(404);
      expect((await last().call('POST', '/v1/conversations/1:2/seen', { key: ann.key })).status).toBe(404);
    });

    it('REST twins: list the queue oldest first, read, take, reply, transfer, resolve; contacts with sessions', async () => {
      const key = (await extraAgent(nodes[0]!, a, `rest${Math.random().toString(36).slice(2, 6)}`)).key;
      const one = await queued(a);
      const two = await queued(a, last());
      const list = await last().call('GET', '/v1/conversations?status=queued&limit=100', { key });
      expect(list.status).toBe(200);
      const ids = list.body.conversations.map((c: { id: string }) => c.id);
      expect(ids.indexOf(one.aeid)).toBeLessThan(ids.indexOf(two.aeid));
      expect((await nodes[0]!.call('POST', `/v1/conversations/${one.aeid}/take`, { key })).status).toBe(200);
      expect((await nodes[0]!.call('POST', `/v1/conversations/${one.aeid}/take`, { key: bob.key })).body).toMatchObject({ success: false, error: { code: 'already_taken' } });
      const r = await last().call('POST', `/v1/conversations/${one.aeid}/reply`, { key, body: { type: 'buttons', interactive: { body: { text: 'Better?' }, buttons: [{ id: 'y', title: 'Yes' }] } } });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, messageId: expect.stringMatching(/^wamid\./) });
      expect((await last().call('POST', `/v1/conversations/${one.aeid}/transfer`, { key, body: { agentId: 'nobody' } })).status).toBe(422);
      expect((await last().call('POST', `/v1/conversations/${one.aeid}/transfer`, { key, body: { agentId: bob.id } })).body.conversation).toMatchObject({ assigneeId: bob.id });
      const mine = await nodes[0]!.call('GET', `/v1/conversations?assigneeId=${bob.id}&limit=100`, { key });
      expect(mine.body.conversations.map((c: { id: string }) => c.id)).toContain(one.aeid);
      expect((await nodes[0]!.call('POST', `/v1/conversations/${one.aeid}/resolve`, { key: a.adminKey })).body.conversation).toMatchObject({ status: 'bot', sessionStatus: 'resolved' });
      expect((await nodes[0]!.call('GET', '/v1/conversations?page=0', { key })).status).toBe(400);
      const found = await nodes[0]!.call('GET', `/v1/contacts?q=${one.phone}`, { key });
      expect(found.body).toMatchObject({ success: true, total: 1, contacts: [{ audienceExternalId: one.aeid, name: 'Ann Customer' }] });
      const contact = await nodes[0]!.call('GET', `/v1/contacts/${found.body.contacts[0].id}`, { key });
      expect(contact.body.sessions).toHaveLength(1);
      // An outside-the-window reply is refused before the network; a template goes.
      const tmpl = await nodes[0]!.call('POST', `/v1/conversations/${two.aeid}/send-template`, {
        key: a.adminKey,
        body: { template: { name: 'order_update', language: { code: 'en_US', policy: 'deterministic' }, components: [{ type: 'body', parameters: ['Ann', 'A-1', 'Monday'].map((text) => ({ type: 'text', text })) }] } },
      });
      expect(tmpl.status).toBe(200);
    });
  });
}

inboxSuite('embedded', async () => [await startMessagingService({ env: { INBOX_FRAMES_PER_SECOND: '1000' } })]);

describe('clustered', () => {
  const servers = useClusterServers();
  inboxSuite('clustered, 2 nodes', async () => {
    const env = { ...servers.env(`in${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true', SANDBOX_STATUS_DELAY_MS: '0', INBOX_FRAMES_PER_SECOND: '1000' };
    return [await startMessagingService({ env: { ...env, NODE_ID: 'n1' } }), await startMessagingService({ env: { ...env, NODE_ID: 'n2' } })];
  });
});

describe('clustered failover', () => {
  const servers = useClusterServers();
  it('a node that stops closes its sockets with 1012; the client resumes on another node from its seq, missing nothing', async () => {
    const env = { ...servers.env(`fo${Date.now() % 100000}`), SECRETS_KEY: '0'.repeat(64), SANDBOX_NETWORK: 'true' };
    const n1 = await startMessagingService({ env: { ...env, NODE_ID: 'f1' } });
    const n2 = await startMessagingService({ env: { ...env, NODE_ID: 'f2' } });
    try {
      const org = await messagingOrg(n1, 'F');
      const c = await InboxClient.connect(n2.url, org.adminKey);
      await n1.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'before', description: 'x' } });
      await c.waitFor((f) => f.type === 'ticket.created' && f.data.title === 'before');
      const since = c.lastSeq();
      const stopping = n2.close();
      expect((await c.waitForClose()).code).toBe(1012);
      for (let i = 0; i < 10; i++) await n1.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: `during ${i}`, description: 'x' } });
      await stopping;
      const again = await InboxClient.connect(n1.url, org.adminKey, { since });
      await again.waitFor((f) => f.type === 'replay_done');
      // What the relay had not yet moved to the log when the client came back follows live, after the replay.
      await again.waitFor((f) => f.type === 'ticket.created' && f.data.title === 'during 9');
      expect(again.events().map((f) => f.data.title)).toEqual(Array.from({ length: 10 }, (_, i) => `during ${i}`));
      again.close();
    } finally {
      await Promise.all([n1.close(), n2.close()]);
    }
  }, 60_000);
});

describe('live inbox replay retention', () => {
  it('tells a client that fell behind what the log keeps to resync, then streams live', async () => {
    const svc = await startMessagingService({ env: { EVENTS_REPLAY_RETAIN: '10' } });
    try {
      const org = await messagingOrg(svc, 'R');
      const c = await InboxClient.connect(svc.url, org.adminKey);
      await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'first', description: 'x' } });
      const first = await c.waitFor((f) => f.type === 'ticket.created');
      c.close();
      for (let i = 0; i < 100; i++) await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: `t${i}`, description: 'x' } });
      const back = await InboxClient.connect(svc.url, org.adminKey, { since: first.seq });
      const resync = await back.waitFor((f) => f.type === 'resync_required');
      expect(resync.oldestSeq).toBeGreaterThan(first.seq + 1);
      await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: 'live', description: 'x' } });
      const live = await back.waitFor((f) => f.type === 'ticket.created' && f.data.title === 'live');
      expect(live.seq).toBeGreaterThan(resync.seq);
      // Nothing older than the resync point is sent after it.
      expect(back.events().every((f) => f.seq > resync.seq)).toBe(true);
      back.close();
    } finally {
      await svc.close();
    }
  }, 60_000);
});

describe('live inbox limits', () => {
  let svc: TestService;
  let org: MessagingOrg;
  beforeAll(async () => {
    svc = await startMessagingService({ env: { INBOX_MAX_BUFFERED_BYTES: String(64 * 1024), INBOX_FRAMES_PER_SECOND: '20' } });
    org = await messagingOrg(svc, 'L');
  });
  afterAll(async () => svc?.close());

  it('cuts off a client that does not read (1013) and keeps what the node buffers bounded', async () => {
    const slow = await InboxClient.connect(svc.url, org.adminKey);
    // Stop reading: the kernel buffers fill, then the server's send buffer grows.
    (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    let peak = 0;
    const big = "x".repeat(19_000);
    for (let i = 0; i < 3000 && slow.closed === null; i++) {
      await svc.call('POST', '/v1/tickets', { key: org.adminKey, body: { subject: `Big ${i}`, description: big } });
      peak = Math.max(peak, svc.running.services.inboxSockets.stats().bufferedBytes);
      if (svc.running.services.inboxSockets.stats().sockets === 0) break;
    }
    expect(svc.running.services.inboxSockets.stats().sockets).toBe(0);
    // Bounded by the limit (plus the one frame that found it full).
    expect(peak).toBeLessThanOrEqual(64 * 1024 + 20_000);
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    expect((await slow.waitForClose()).code).toBe(1013);
  }, 60_000);

  it('drops a connection that stops answering pings within two heartbeats', async () => {
    const s2 = await startMessagingService({ env: { INBOX_HEARTBEAT_MS: '300' } });
    try {
      const o = await messagingOrg(s2, 'H');
      const live = await InboxClient.connect(s2.url, o.adminKey);
      const dead = await InboxClient.connect(s2.url, o.adminKey);
      expect(s2.running.services.inboxSockets.stats().sockets).toBe(2);
      (dead.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      await eventually(async () => s2.running.services.inboxSockets.stats().sockets === 1, 3000);
      // One that answers stays.
      await new Promise((r) => setTimeout(r, 1000));
      expect(s2.running.services.inboxSockets.stats().sockets).toBe(1);
      expect(live.closed).toBeNull();
      live.close();
    } finally {
      await s2.close();
    }
  });

  it('rate-limits a flooding socket with error frames, then closes it (1008)', async () => {
    const flood = await InboxClient.connect(svc.url, org.adminKey);
    for (let i = 0; i < 300; i++) flood.ws.send(JSON.stringify({ type: 'presence', id: `p${i}`, status: 'online' }));
    await flood.waitFor((f) => f.type === 'error' && f.error.code === 'rate_limited');
    expect((await flood.waitForClose()).code).toBe(1008);
  });

  it('closes sockets with 1012 when the node stops', async () => {
    const s2 = await startMessagingService();
    const o = await messagingOrg(s2, 'S');
    const c = await InboxClient.connect(s2.url, o.adminKey);
    await s2.close();
    expect((await c.waitForClose()).code).toBe(1012);
  });
});

describe('the protocol document', () => {
  it('serves /asyncapi.json (AsyncAPI 3.0) built from the frame schemas: every command and server frame, with payload schemas', async () => {
    const svc = await startMessagingService();
    try {
      const r = await svc.call('GET', '/asyncapi.json');
      expect(r.status).toBe(200);
      const doc = r.body;
      expect(doc.asyncapi).toBe('3.0.0');
      expect(doc.channels.inbox.address).toBe('/ws');
      const names = Object.keys(doc.components.messages);
      for (const t of ['take', 'reply', 'send_template', 'hand_back', 'resolve', 'transfer', 'typing', 'presence', 'ticket_create', 'ticket_update', 'welcome', 'event', 'replay_done', 'resync_required', 'conversation', 'server_ack', 'server_error']) {
        expect(names).toContain(t);
      }
      // The schema that validates a reply is the one documented: its message is a one-of of text, buttons and media.
      expect(JSON.stringify(doc.components.messages.reply.payload)).toContain('interactive');
      for (const op of Object.values(doc.operations) as { messages: { $ref: string }[] }[]) {
        for (const m of op.messages) expect(doc.channels.inbox.messages[m.$ref.split('/').pop()!]).toBeDefined();
      }
    } finally {
      await svc.close();
    }
  });
});
