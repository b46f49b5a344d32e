import { afterAll, describe, expect, it } from 'vitest';
import { signHubSignature } from '../../src/network/index.js';
import type { WhatsAppChannel } from '../../src/store/channels/port.js';
import { useClusterServers } from '../harness/use-servers.js';
import type { TestService } from '../harness/service.js';
import { eventually, messagingOrg, startMessagingService } from './messaging-helpers.js';

const servers = useClusterServers();

/*
 * One person, two webhooks at the same moment on two nodes: one names them
 * by BSUID only, the other by phone and BSUID. However the two placements
 * interleave, the person is one contact, one conversation, one actor: both
 * messages land in one session.
 */
describe('placing a person across nodes', () => {
  const nodes: TestService[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it('two webhooks of the same person at once on two clustered nodes make one contact and one conversation', async () => {
    const env = (id: string) => ({ ...servers.env('identity'), NODE_ID: id, ACTOR_PARTITIONS: '8', SECRETS_KEY: '2'.repeat(64), SANDBOX_NETWORK: 'true', SANDBOX_STATUS_DELAY_MS: '0' });
    nodes.push(...(await Promise.all(['i1', 'i2'].map((id) => startMessagingService({ env: env(id) })))));
    const [n1, n2] = nodes as [TestService, TestService];
    const org = await messagingOrg(n1, 'Identity');
    const channel = (await n1.running.services.messaging.stores.channels.get(org.id, org.channelId)) as WhatsAppChannel;
    const post = (node: TestService, message: Record<string, unknown>, contact: Record<string, unknown>) => {
      const body = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [{ id: channel.businessAccountId, changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: channel.phoneNumberId }, contacts: [contact], messages: [message] } }] }],
      });
      return fetch(`${node.url}/webhooks/whatsapp/${channel.id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signHubSignature(channel.credentials.appSecret, body) }, body });
    };
    const people = Array.from({ length: 12 }, (_, i) => ({ phone: `4915177${String(i).padStart(5, '0')}`, userId: `US.9${String(i).padStart(19, '0')}` }));
    const ts = String(Math.floor(Date.now() / 1000));
    const answers = await Promise.all(
      people.flatMap((p, i) => [
        post(n1, { from_user_id: p.userId, id: `wamid.race.${i}.a`, timestamp: ts, type: 'text', text: { body: 'by BSUID' } }, { profile: { name: 'Kim', username: `kim${i}` }, user_id: p.userId }),
        post(n2, { from: p.phone, from_user_id: p.userId, id: `wamid.race.${i}.b`, timestamp: ts, type: 'text', text: { body: 'by phone and BSUID' } }, { profile: { name: 'Kim' }, wa_id: p.phone, user_id: p.userId }),
      ]),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    for (const p of people) {
      const byPhone = await eventually(async () => {
        const r = await n1.call('GET', `/v1/contacts/${p.phone}:${channel.phoneNumberId}`, { key: org.adminKey });
        return r.status === 200 ? r.body : null;
      }, 15_000);
      const byUser = await n2.call('GET', `/v1/contacts/${p.userId}:${channel.phoneNumberId}`, { key: org.adminKey });
      expect(byUser.body.contact.id).toBe(byPhone.contact.id);
      const canonical = byPhone.contact.audienceExternalId as string;
      const conv = await eventually(async () => {
        const r = await n2.call('GET', `/v1/conversations/${canonical}`, { key: org.adminKey });
        return r.status === 200 ? r.body.conversation : null;
      });
      const history = await eventually(async () => {
        const r = await n1.call('GET', `/v1/sessions/${conv.sessionId}/messages`, { key: org.adminKey });
        return Array.isArray(r.body) && r.body.length === 2 ? r.body : null;
      });
      expect(history.map((m: { content: { text: string } }) => m.content.text).sort()).toEqual(['by BSUID', 'by phone and BSUID']);
    }
    // Two contacts of one person, made on two nodes, merged by a webhook that names both ids.
    const mia = { phone: '4915188000001', userId: 'US.70000000000000000001' };
    expect((await post(n1, { from: mia.phone, id: 'wamid.m.1', timestamp: ts, type: 'text', text: { body: 'by phone' } }, { profile: { name: 'Mia' }, wa_id: mia.phone })).status).toBe(200);
    expect((await post(n2, { from_user_id: mia.userId, id: 'wamid.m.2', timestamp: ts, type: 'text', text: { body: 'by BSUID' } }, { profile: { name: 'Mia' }, user_id: mia.userId })).status).toBe(200);
    expect((await post(n2, { from: mia.phone, from_user_id: mia.userId, id: 'wamid.m.3', timestamp: ts, type: 'text', text: { body: 'by both' } }, { profile: { name: 'Mia' }, wa_id: mia.phone, user_id: mia.userId })).status).toBe(200);
    const miaContact = await n1.call('GET', `/v1/contacts/${mia.userId}:${channel.phoneNumberId}`, { key: org.adminKey });
    expect(miaContact.body.contact.audienceExternalId).toBe(`${mia.phone}:${channel.phoneNumberId}`);
    expect(miaContact.body.sessions).toHaveLength(2);
    expect((await n2.call('GET', `/v1/conversations/${mia.userId}:${channel.phoneNumberId}`, { key: org.adminKey })).body.conversation.audienceExternalId).toBe(`${mia.phone}:${channel.phoneNumberId}`);
    // Every person once in the organization's conversations.
    const all = await n1.call('GET', '/v1/conversations?view=all&limit=100', { key: org.adminKey });
    const mine = all.body.conversations.filter((c: { userId: string | null }) => people.some((p) => p.userId === c.userId));
    expect(mine).toHaveLength(people.length);
    expect(all.body.conversations.filter((c: { audienceExternalId: string }) => c.audienceExternalId.startsWith(mia.userId))).toEqual([]);
  });
});
