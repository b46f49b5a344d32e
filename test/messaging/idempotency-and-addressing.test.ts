import { describe, expect, it } from 'vitest';
import { op, orderUpdate, useTwoOrgs, type MessagingOrg } from './messaging-helpers.js';

describe('idempotency keys and addressing a contact by audienceExternalId', () => {
  const orgs = useTwoOrgs({ env: { TEMPLATE_RATE_LIMIT_PER_MINUTE: '1000' } });

  const post = (path: string, key: string, body: unknown, headers?: Record<string, string>) => orgs.svc.call('POST', path, { key, body, headers });
  const phoneMessages = async (org: MessagingOrg, phone: string) =>
    (await orgs.svc.call('GET', `/v1/sandbox/channels/${org.channelId}/customers/${phone}/messages`, { key: org.adminKey })).body.messages as unknown[];
  const balance = async (org: MessagingOrg) => (await op(orgs.svc, 'GET', `/admin/v1/organizations/${org.id}/credits`)).body.balance as number;

  it('reusing an Idempotency-Key with a different template body answers 422 idempotency_key_reused and sends nothing', async () => {
    const h = { 'idempotency-key': 'reuse-1' };
    const first = await post('/v2/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '4915133333333'), h);
    expect(first.status).toBe(201);
    const before = await balance(orgs.a);
    const changed = await post('/v2/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '4915133333333', ['Bob', 'B-2', 'Friday']), h);
    expect(changed.status).toBe(422);
    expect(changed.body.error.code).toBe('idempotency_key_reused');
    // The same body still replays the first answer.
    const same = await post('/v2/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, '4915133333333'), h);
    expect(same.body).toEqual(first.body);
    expect(await balance(orgs.a)).toBe(before);
    expect(await phoneMessages(orgs.a, '4915133333333')).toHaveLength(1);
    // The same key on another endpoint is another request too.
    const text = await post('/v1/messages/text', orgs.a.adminKey, { channelId: orgs.a.channelId, to: '4915133333333', text: { body: 'hi' } }, h);
    expect(text.body.error.code).toBe('idempotency_key_reused');
    // Keys belong to the organization (and API key) that used them.
    expect((await post('/v2/wa/template', orgs.b.adminKey, orderUpdate(orgs.b.channelId, '4915133333333', ['Bob', 'B-2', 'Friday']), h)).status).toBe(201);
  });

  it('a repeated Idempotency-Key on POST /v1/tickets returns the first ticket with 201; another body answers 422', async () => {
    const h = { 'idempotency-key': 'ticket-key-1' };
    const body = { subject: 'Refund', description: 'Order A-1 arrived broken' };
    const first = await post('/v1/tickets', orgs.a.adminKey, body, h);
    expect(first.status).toBe(201);
    const again = await post('/v1/tickets', orgs.a.adminKey, body, h);
    expect(again.status).toBe(201);
    expect(again.body.ticketId).toBe(first.body.ticketId);
    const other = await post('/v1/tickets', orgs.a.adminKey, { ...body, priority: 'high' }, h);
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    const racing = await Promise.all(Array.from({ length: 8 }, () => post('/v1/tickets', orgs.a.adminKey, { ...body, subject: 'Race' }, { 'idempotency-key': 'race-1' })));
    expect(new Set(racing.map((r) => r.body.ticketId)).size).toBe(1);
    const listed = await orgs.svc.call('GET', '/v1/tickets?limit=100', { key: orgs.a.adminKey });
    expect(listed.body.tickets.filter((t: { title: string }) => t.title === 'Race')).toHaveLength(1);
    // Another organization's identical key is its own.
    const inB = await post('/v1/tickets', orgs.b.adminKey, body, h);
    expect(inB.status).toBe(201);
    expect(inB.body._id).not.toBe(first.body._id);
    expect(inB.body.organizationId).toBe(orgs.b.id);
    expect((await post('/v1/tickets', orgs.a.adminKey, body, { 'idempotency-key': 'bad key with spaces' })).status).toBe(400);
  });

  it("stores the customer's profile name on a contact the business created first, and shows it", async () => {
    const phone = '4915155555555';
    expect((await post('/v2/wa/template', orgs.a.adminKey, orderUpdate(orgs.a.channelId, phone))).status).toBe(201);
    const contacts = async () => (await op(orgs.svc, 'GET', `/admin/v1/organizations/${orgs.a.id}/contacts`)).body.contacts as { audienceExternalId: string; name: string | null }[];
    expect((await contacts()).find((c) => c.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`)?.name).toBeNull();
    await post(`/v1/sandbox/channels/${orgs.a.channelId}/customers/${phone}/messages`, orgs.a.adminKey, { text: 'thanks', profileName: 'Ann' });
    expect((await contacts()).find((c) => c.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`)?.name).toBe('Ann');
  });

  it('tickets carry the contact\'s audienceExternalId, and sends take it instead of channelId + to', async () => {
    const aeid = `4915144444444:${orgs.a.phoneNumberId}`;
    await post(`/v1/sandbox/channels/${orgs.a.channelId}/customers/4915144444444/messages`, orgs.a.adminKey, { text: 'my parcel is late' });
    const ticket = await post('/v1/tickets', orgs.a.adminKey, { subject: 'Late parcel', description: 'd', audienceExternalId: aeid });
    expect(ticket.status).toBe(201);
    expect(ticket.body.audienceExternalId).toBe(aeid);
    expect((await orgs.svc.call('GET', `/v1/tickets/${ticket.body.ticketId}`, { key: orgs.a.adminKey })).body.audienceExternalId).toBe(aeid);
    const plain = await post('/v1/tickets', orgs.a.adminKey, { subject: 'No contact', description: 'd' });
    expect(plain.body.audienceExternalId).toBeNull();

    const text = await post('/v1/messages/text', orgs.a.adminKey, { audienceExternalId: ticket.body.audienceExternalId, text: { body: 'On its way!' } });
    expect(text.body).toMatchObject({ success: true, messageId: expect.stringMatching(/^wamid\./) });
    const tpl = await post('/v2/wa/template', orgs.a.adminKey, { audienceExternalId: aeid, template: orderUpdate('', '').template });
    expect(tpl.status).toBe(201);
    expect(await phoneMessages(orgs.a, '4915144444444')).toHaveLength(3); // the customer's message and the two sends

    // Exactly one of the two forms; another organization's number is not found.
    expect((await post('/v1/messages/text', orgs.a.adminKey, { audienceExternalId: aeid, channelId: orgs.a.channelId, to: '4915144444444', text: { body: 'x' } })).status).toBe(400);
    expect((await post('/v1/messages/text', orgs.a.adminKey, { text: { body: 'x' } })).status).toBe(400);
    expect((await post('/v1/messages/text', orgs.a.adminKey, { audienceExternalId: '+49151', text: { body: 'x' } })).status).toBe(400);
    const foreign = await post('/v1/messages/text', orgs.a.adminKey, { audienceExternalId: `4915144444444:${orgs.b.phoneNumberId}`, text: { body: 'x' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('channel_not_found');
  });
});
