import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN } from '../harness/service.js';
import { eventually, useTwoOrgs, type MessagingOrg } from '../messaging/messaging-helpers.js';
import { extraAgent } from '../inbox/client.js';
import { call, errorText, mcpClient, structured } from './helpers.js';

describe('MCP live inbox tools', () => {
  const orgs = useTwoOrgs();
  let ann: Client;
  let bob: Client;
  let other: Client;
  let annId: string;
  beforeAll(async () => {
    const annAgent = await extraAgent(orgs.svc, orgs.a, 'ann');
    annId = annAgent.id;
    const bobAgent = await extraAgent(orgs.svc, orgs.a, 'bob');
    const scopes = ['mcp:access', 'inbox:read', 'inbox:write'] as const;
    const keyFor = async (org: MessagingOrg, userId: string) =>
      (await orgs.svc.call('POST', `/admin/v1/organizations/${org.id}/api-keys`, { key: OPERATOR_TOKEN, body: { userId, scopes } })).body.key as string;
    ann = await mcpClient(`${orgs.svc.running.mcpUrl}/mcp/platform`, await keyFor(orgs.a, annAgent.id));
    bob = await mcpClient(`${orgs.svc.running.mcpUrl}/mcp/platform`, await keyFor(orgs.a, bobAgent.id));
    other = await mcpClient(`${orgs.svc.running.mcpUrl}/mcp/platform`, orgs.b.adminKey);
  }, 60_000);
  afterAll(async () => {
    for (const c of [ann, bob, other]) await c?.close();
  });

  it('lists the queue, lets exactly one of two agents take, replies as the holder, hands back; another organization sees and takes nothing', async () => {
    const phone = '4915300000077';
    const aeid = `${phone}:${orgs.a.phoneNumberId}`;
    const help = await orgs.svc.call('POST', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${phone}/messages`, { key: orgs.a.adminKey, body: { text: 'help' } });
    expect(help.status).toBe(201);
    await eventually(async () => (await orgs.svc.call('GET', `/v1/conversations/${aeid}`, { key: orgs.a.adminKey })).status === 200);
    expect((await orgs.svc.call('POST', '/v1/handover', { key: orgs.a.adminKey, body: { audienceExternalId: aeid } })).body).toEqual({ success: true });

    const queue = structured(await call(ann, 'list_conversations', { status: 'queued' }));
    expect(queue.conversations.map((c: { id: string }) => c.id)).toContain(aeid);
    expect(structured(await call(other, 'list_conversations', { status: 'queued' })).conversations.map((c: { id: string }) => c.id)).not.toContain(aeid);

    const [x, y] = await Promise.all([call(ann, 'take_conversation', { conversationId: aeid }), call(bob, 'take_conversation', { conversationId: aeid })]);
    expect([x, y].filter((r) => r.isError)).toHaveLength(1);
    const [winner, loser] = x.isError ? [bob, ann] : [ann, bob];
    expect(errorText(x.isError ? x : y)).toContain('already_taken');
    expect(errorText(await call(loser, 'reply_in_conversation', { conversationId: aeid, message: { type: 'text', text: 'me too' } }))).toContain('not_assigned_to_you');
    const sent = structured(await call(winner, 'reply_in_conversation', { conversationId: aeid, message: { type: 'text', text: 'Here to help.' } }));
    expect(sent.messageId).toMatch(/^wamid\./);
    // A location, a contact card and a reaction to the customer's message go the same way; a reaction to a message not of the conversation does not.
    for (const message of [
      { type: 'location', location: { latitude: 52.5219, longitude: 13.4132, name: 'Our shop' } },
      { type: 'contacts', contacts: [{ name: { formatted_name: 'Ben Lee' }, phones: [{ phone: '+49 151 2345678' }] }] },
      { type: 'reaction', reaction: { messageId: help.body.messageId, emoji: '👍' } },
    ]) {
      expect(structured(await call(winner, 'reply_in_conversation', { conversationId: aeid, message })).messageId, message.type).toMatch(/^wamid\./);
    }
    const onPhone = (await orgs.svc.call('GET', `/v1/sandbox/channels/${orgs.a.channelId}/customers/${phone}/messages`, { key: orgs.a.adminKey })).body.messages as { type: string }[];
    expect(onPhone.map((m) => m.type)).toEqual(expect.arrayContaining(['location', 'contacts', 'reaction']));
    expect(errorText(await call(winner, 'reply_in_conversation', { conversationId: aeid, message: { type: 'reaction', reaction: { messageId: 'wamid.elsewhere', emoji: '👍' } } }))).toContain('no_such_message');
    expect(errorText(await call(other, 'take_conversation', { conversationId: aeid }))).toContain('not_found');
    expect(structured(await call(winner, 'hand_back_conversation', { conversationId: aeid })).conversation).toMatchObject({ status: 'bot', assigneeId: null });
    expect(annId).toBeTruthy();
  });
});
