import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/events/types.js';
import type { TestService } from '../harness/service.js';
import { useClusterServers } from '../harness/use-servers.js';
import { mcpClient } from '../mcp/helpers.js';
import { eventually, messagingOrg, startMessagingService, type MessagingOrg } from './messaging-helpers.js';

/**
 * A bot's location, contact cards and reaction: POST /v1/messages/location,
 * /contacts and /reaction and their MCP tools, through the conversation
 * actor and the Graph adapter to the sandbox customer's phone, kept in the
 * history as what they are; the 24-hour window, the handover, web chat,
 * validation and organizations as for buttons and media. Once on one
 * embedded node, once on two clustered nodes with calls alternating.
 */
function sharesSuite(name: string, start: () => Promise<TestService[]>) {
  describe(`bot sends location, contacts, reaction (${name})`, () => {
    let nodes: TestService[];
    let a: MessagingOrg;
    let b: MessagingOrg;
    let turn = 0;
    const call: TestService['call'] = (...args) => nodes[turn++ % nodes.length]!.call(...args);
    const seen: DomainEvent[] = [];

    beforeAll(async () => {
      nodes = await start();
      a = await messagingOrg(nodes[0]!, 'A');
      b = await messagingOrg(nodes[0]!, 'B');
      await nodes[0]!.running.services.events.consume(`bot-shares-${Date.now()}`, async (e) => {
        if (e.organizationId === a.id) seen.push(e);
      });
    }, 60_000);
    afterAll(async () => {
      await Promise.all((nodes ?? []).map((n) => n.close()));
    });

    const post = (path: string, body: unknown, key = a.adminKey, headers?: Record<string, string>) => call('POST', path, { key, body, headers });
    const location = { latitude: 52.5219, longitude: 13.4132, name: 'Returns desk', address: 'Alexanderplatz 1, Berlin' };
    const card = { name: { formatted_name: 'Acme Returns', first_name: 'Acme' }, phones: [{ phone: '+49 30 1234567', type: 'WORK' }], emails: [{ email: 'returns@acme.example', type: 'WORK' }] };
    const expectError = (r: { status: number; body: any }, status: number, code: string) => {
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body).toMatchObject({ success: false, error: { code, message: expect.any(String) } });
    };

    it('inside the window: each reaches the customer and the history as what it is; outside it 422; a retried key sends once', async () => {
      const to = '4915100000101';
      expectError(await post('/v1/messages/location', { channelId: a.channelId, to, location }), 422, 'outside_customer_service_window');
      const hello = await post(`/v1/sandbox/channels/${a.channelId}/customers/${to}/messages`, { text: 'Where can I return it?' });
      expect(hello.status).toBe(201);

      const loc = await post('/v1/messages/location', { channelId: a.channelId, to, location }, a.adminKey, { 'idempotency-key': 'loc-1' });
      expect(loc).toMatchObject({ status: 200, body: { success: true, messageId: expect.stringMatching(/^wamid\./) } });
      const again = await post('/v1/messages/location', { channelId: a.channelId, to, location }, a.adminKey, { 'idempotency-key': 'loc-1' });
      expect(again.body).toEqual(loc.body);
      const cards = await post('/v1/messages/contacts', { audienceExternalId: `${to}:${a.phoneNumberId}`, contacts: [card] });
      expect(cards).toMatchObject({ status: 200, body: { success: true, messageId: expect.stringMatching(/^wamid\./) } });
      const liked = await post('/v1/messages/reaction', { channelId: a.channelId, to, reaction: { messageId: hello.body.messageId, emoji: '👍' } });
      expect(liked).toMatchObject({ status: 200, body: { success: true } });
      const undone = await post('/v1/messages/reaction', { channelId: a.channelId, to, reaction: { messageId: hello.body.messageId, emoji: '' } });
      expect(undone.status).toBe(200);

      const phone = await eventually(async () => {
        const r = (await call('GET', `/v1/sandbox/channels/${a.channelId}/customers/${to}/messages`, { key: a.adminKey })).body.messages as { type: string; text?: string; direction?: string }[];
        return r.length >= 5 ? r : undefined;
      });
      expect(phone.map((m) => m.type)).toEqual(['text', 'location', 'contacts', 'reaction', 'reaction']);
      expect(phone[1]!.text).toContain('Alexanderplatz 1, Berlin');
      expect(phone[2]!.text).toContain('Acme Returns');

      const sent = await eventually(async () => seen.find((e) => e.type === 'message.sent' && (e.data as { messageId?: string }).messageId === loc.body.messageId));
      const sessionId = (sent.data as { sessionId: string }).sessionId;
      const history = (await call('GET', `/v1/sessions/${sessionId}/messages`, { key: a.adminKey })).body as { sender: string; messageId: string; content: Record<string, unknown> }[];
      expect(history.map((m) => `${m.sender}:${m.content.type}`)).toEqual(['contact:text', 'bot:location', 'bot:contacts', 'bot:reaction', 'bot:reaction']);
      expect(history[1]).toMatchObject({ messageId: loc.body.messageId, content: { location } });
      expect(history[2]).toMatchObject({ messageId: cards.body.messageId, content: { contacts: [card], text: 'Acme Returns' } });
      expect(history[3]).toMatchObject({ content: { reaction: { messageId: hello.body.messageId, emoji: '👍' } } });
      expect(history[4]).toMatchObject({ content: { reaction: { messageId: hello.body.messageId, emoji: '' } } });
      // Session messages cost no credits (only templates do).
      expect((await call('GET', '/v1/credits', { key: a.adminKey })).body).toMatchObject({ balance: 100 });
    });

    it('a reaction only to a message of this contact\'s conversation; refused while an agent has it; a web chat answers success false', async () => {
      const to = '4915100000102';
      const other = '4915100000103';
      const mine = await post(`/v1/sandbox/channels/${a.channelId}/customers/${to}/messages`, { text: 'Hi' });
      const theirs = await post(`/v1/sandbox/channels/${a.channelId}/customers/${other}/messages`, { text: 'Hello' });
      expectError(await post('/v1/messages/reaction', { channelId: a.channelId, to, reaction: { messageId: theirs.body.messageId, emoji: '👍' } }), 422, 'no_such_message');
      expectError(await post('/v1/messages/reaction', { channelId: a.channelId, to, reaction: { messageId: 'wamid.nothing', emoji: '👍' } }), 422, 'no_such_message');
      // Organization B, on its own channel to the same number, cannot react to A's message: it is not of B's conversation.
      expectError(await post('/v1/messages/reaction', { channelId: b.channelId, to, reaction: { messageId: mine.body.messageId, emoji: '👍' } }, b.adminKey), 422, 'no_such_message');
      const handover = await post('/v1/handover', { audienceExternalId: `${to}:${a.phoneNumberId}` });
      expect(handover.status, JSON.stringify(handover.body)).toBeLessThan(300);
      expectError(await post('/v1/messages/location', { channelId: a.channelId, to, location }), 409, 'conversation_with_agent');
      expectError(await post('/v1/messages/reaction', { channelId: a.channelId, to, reaction: { messageId: mine.body.messageId, emoji: '👍' } }), 409, 'conversation_with_agent');
      for (const [path, body] of [
        ['/v1/messages/location', { location }],
        ['/v1/messages/contacts', { contacts: [card] }],
        ['/v1/messages/reaction', { reaction: { messageId: mine.body.messageId, emoji: '👍' } }],
      ] as const) {
        const web = await post(path, { channelId: a.webChannelId, to, ...body });
        expect(web, path).toMatchObject({ status: 200, body: { success: false } });
        expect(web.body.messageId).toBeUndefined();
      }
    });

    it('validation 400 with the failing fields, 401, 403 insufficient_scope, another organization\'s channel 404', async () => {
      const to = '4915100000104';
      const bad: [string, unknown, string][] = [
        ['/v1/messages/location', { channelId: a.channelId, to, location: { latitude: 91, longitude: 0 } }, 'body.location.latitude'],
        ['/v1/messages/location', { channelId: a.channelId, to, location: { latitude: 1, longitude: 2, colour: 'red' } }, 'body.location'],
        ['/v1/messages/location', { channelId: a.channelId, location }, 'body.to'],
        ['/v1/messages/contacts', { channelId: a.channelId, to, contacts: [] }, 'body.contacts'],
        ['/v1/messages/contacts', { channelId: a.channelId, to, contacts: [{ name: { first_name: 'Ada' } }] }, 'body.contacts.0.name.formatted_name'],
        ['/v1/messages/contacts', { channelId: a.channelId, to, contacts: Array.from({ length: 21 }, () => card) }, 'body.contacts'],
        ['/v1/messages/reaction', { channelId: a.channelId, to, reaction: { messageId: 'wamid.x', emoji: 'not an emoji' } }, 'body.reaction.emoji'],
        ['/v1/messages/reaction', { channelId: a.channelId, to, reaction: { emoji: '👍' } }, 'body.reaction.messageId'],
        ['/v1/messages/reaction', { audienceExternalId: `${to}:${a.phoneNumberId}`, channelId: a.channelId, reaction: { messageId: 'wamid.x', emoji: '👍' } }, 'body.audienceExternalId'],
      ];
      for (const [path, body, field] of bad) {
        const r = await post(path, body);
        expectError(r, 400, 'validation_failed');
        expect(r.body.error.details.map((d: { field: string }) => d.field), `${path} ${JSON.stringify(body)}`).toContain(field);
      }
      const ok = { channelId: a.channelId, to, location };
      expect((await call('POST', '/v1/messages/location', { body: ok })).status).toBe(401);
      const noScope = await post('/v1/messages/location', ok, await a.keyWith(['tickets:read']));
      expectError(noScope, 403, 'insufficient_scope');
      expect(noScope.body.error.details).toEqual({ requiredScope: 'message:send' });
      for (const [path, body] of [
        ['/v1/messages/location', { location }],
        ['/v1/messages/contacts', { contacts: [card] }],
        ['/v1/messages/reaction', { reaction: { messageId: 'wamid.x', emoji: '👍' } }],
      ] as const) {
        expectError(await post(path, { channelId: a.channelId, to, ...body }, b.adminKey), 404, 'channel_not_found');
        expectError(await post(path, { audienceExternalId: `${to}:${a.phoneNumberId}`, ...body }, b.adminKey), 404, 'channel_not_found');
      }
    });

    it('MCP: send_location_message, send_contacts_message and send_reaction send like their REST twins; B reaches none of A', async () => {
      const to = '4915100000105';
      const aeid = `${to}:${a.phoneNumberId}`;
      const url = `${nodes[nodes.length - 1]!.running.mcpUrl}/mcp/platform`;
      const ca = await mcpClient(url, a.adminKey);
      const cb = await mcpClient(url, b.adminKey);
      const tool = async (c: typeof ca, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any; content: { text: string }[] };
      try {
        expect((await tool(ca, 'send_location_message', { audienceExternalId: aeid, location })).content[0]!.text).toContain('outside_customer_service_window');
        const hello = await post(`/v1/sandbox/channels/${a.channelId}/customers/${to}/messages`, { text: 'Hi' });
        const results = [
          await tool(ca, 'send_location_message', { audienceExternalId: aeid, location }),
          await tool(ca, 'send_contacts_message', { channelId: a.channelId, to, contacts: [card] }),
          await tool(ca, 'send_reaction', { audienceExternalId: aeid, reaction: { messageId: hello.body.messageId, emoji: '🎉' } }),
        ];
        for (const r of results) expect(r.structuredContent, JSON.stringify(r)).toEqual({ success: true, messageId: expect.stringMatching(/^wamid\./) });
        expect((await tool(ca, 'send_reaction', { audienceExternalId: aeid, reaction: { messageId: 'wamid.nothing', emoji: '🎉' } })).content[0]!.text).toContain('no_such_message');
        expect((await tool(ca, 'send_contacts_message', { audienceExternalId: aeid, contacts: [] })).isError).toBe(true);
        for (const [name, args] of [
          ['send_location_message', { audienceExternalId: aeid, location }],
          ['send_contacts_message', { channelId: a.channelId, to, contacts: [card] }],
          ['send_reaction', { audienceExternalId: aeid, reaction: { messageId: hello.body.messageId, emoji: '🎉' } }],
        ] as const) {
          const r = await tool(cb, name, args);
          expect(r.isError, name).toBe(true);
          expect(r.content[0]!.text, name).toContain('channel_not_found');
        }
        const phone = await eventually(async () => {
          const m = (await call('GET', `/v1/sandbox/channels/${a.channelId}/customers/${to}/messages`, { key: a.adminKey })).body.messages as { type: string }[];
          return m.length >= 4 ? m : undefined;
        });
        expect(phone.map((m) => m.type)).toEqual(['text', 'location', 'contacts', 'reaction']);
      } finally {
        await ca.close();
        await cb.close();
      }
    });
  });
}

sharesSuite('embedded', async () => [await startMessagingService()]);

const servers = useClusterServers();

sharesSuite('clustered, two nodes', async () => {
  const env = (id: string) => ({ ...servers.env('shares'), NODE_ID: id, ACTOR_PARTITIONS: '8', SECRETS_KEY: '2'.repeat(64), SANDBOX_NETWORK: 'true' });
  return Promise.all(['s1', 's2'].map((id) => startMessagingService({ env: env(id) })));
});
