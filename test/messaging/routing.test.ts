import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { eventually, useTwoOrgs, type MessagingOrg } from './messaging-helpers.js';

/*
 * A channel's routing over the API: who answers first, and the bot's
 * fallback on a clock the test moves (the sweep is run by the test).
 */
describe('channel routing', () => {
  const clock = new ManualClock(Date.now());
  const orgs = useTwoOrgs({ clock, events: 'a' });
  const { events, customer, conversation } = orgs;
  const patch = (org: MessagingOrg, channelId: string, body: unknown, key = org.adminKey) => orgs.patchChannel(org, body, key, channelId);

  it('shows the defaults, changes them with settings:manage, and keeps what a patch does not name', async () => {
    const got = await orgs.svc.call('GET', `/v1/channels/${orgs.a.channelId}`, { key: orgs.a.agentKey });
    expect(got.status).toBe(200);
    expect(got.body.routing).toEqual({ firstResponder: 'bot', botFallbackSeconds: null, autoAssign: { enabled: false, capacity: null }, businessHours: null, sla: { firstResponseSeconds: null, nextResponseSeconds: null, byPriority: {}, clock: 'calendar' } });

    const hours = { timeZone: 'Europe/Berlin', weekly: { mon: [{ from: '09:00', to: '17:00' }] }, holidays: ['2026-12-25'], awayReply: 'We are closed.' };
    const r = await patch(orgs.a, orgs.a.webChannelId, { name: 'Site', routing: { botFallbackSeconds: 90, autoAssign: { enabled: true }, businessHours: hours } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'Site', routing: { firstResponder: 'bot', botFallbackSeconds: 90, autoAssign: { enabled: true, capacity: null }, businessHours: hours } });
    const r2 = await patch(orgs.a, orgs.a.webChannelId, { routing: { autoAssign: { capacity: 3 }, businessHours: null } });
    expect(r2.body.routing).toEqual({ firstResponder: 'bot', botFallbackSeconds: 90, autoAssign: { enabled: true, capacity: 3 }, businessHours: null, sla: { firstResponseSeconds: null, nextResponseSeconds: null, byPriority: {}, clock: 'calendar' } });
    expect((await orgs.svc.call('GET', `/v1/channels/${orgs.a.webChannelId}`, { key: orgs.a.adminKey })).body.routing).toEqual(r2.body.routing);
    // Listed with it too.
    const list = await orgs.svc.call('GET', '/v1/channels', { key: orgs.a.adminKey });
    expect(list.body.channels.find((c: { id: string }) => c.id === orgs.a.webChannelId).routing).toEqual(r2.body.routing);
  });

  it('needs settings:manage, refuses bad input with nothing changed, and never reaches another organization', async () => {
    const noScope = await orgs.a.keyWith(['inbox:read']);
    expect((await patch(orgs.a, orgs.a.channelId, { routing: { firstResponder: 'agents' } }, noScope)).body.error.code).toBe('insufficient_scope');
    for (const body of [
      {},
      { routing: { firstResponder: 'humans' } },
      { routing: { botFallbackSeconds: 0 } },
      { routing: { botFallbackSeconds: 1.5 } },
      { routing: { autoAssign: { capacity: 0 } } },
      { routing: { businessHours: { timeZone: 'Mars/Olympus' } } },
      { routing: { businessHours: { timeZone: 'UTC', weekly: { mon: [{ from: '17:00', to: '09:00' }] } } } },
      { routing: { businessHours: { timeZone: 'UTC', weekly: { someday: [] } } } },
      { routing: { businessHours: { timeZone: 'UTC', holidays: ['25.12.2026'] } } },
      { routing: { surprise: true } },
      { routing: { sla: { firstResponseSeconds: 5 } } },
      { routing: { sla: { nextResponseSeconds: 'soon' } } },
      { routing: { sla: { thirdResponseSeconds: 60 } } },
    ]) {
      const r = await patch(orgs.a, orgs.a.channelId, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
    }
    expect((await orgs.svc.call('GET', `/v1/channels/${orgs.a.channelId}`, { key: orgs.a.adminKey })).body.routing.firstResponder).toBe('bot');
    // Another organization's channel is not found, and stays as it was.
    expect((await orgs.svc.call('GET', `/v1/channels/${orgs.b.channelId}`, { key: orgs.a.adminKey })).status).toBe(404);
    expect((await patch(orgs.a, orgs.b.channelId, { routing: { firstResponder: 'agents' } })).status).toBe(404);
    expect((await orgs.svc.call('GET', `/v1/channels/${orgs.b.channelId}`, { key: orgs.b.adminKey })).body.routing.firstResponder).toBe('bot');
  });

  it('agents first: a new conversation goes straight to the queue, by automation', async () => {
    expect((await patch(orgs.a, orgs.a.channelId, { routing: { firstResponder: 'agents' } })).status).toBe(200);
    const phone = '4915100000101';
    expect((await customer(orgs.a, phone, 'Hello?')).status).toBe(201);
    const queued = await eventually(async () => events('handover.requested', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`)[0]);
    expect(queued.data).toMatchObject({ by: 'automation', reason: 'first_responder' });
    const inbound = events('inbound_message', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`)[0]!;
    expect(inbound.data).toMatchObject({ handover: true, handoverStatus: 'queued' });
    expect(await conversation(orgs.a, phone)).toMatchObject({ status: 'queued' });
    // A second message of the same conversation queues nothing more.
    await customer(orgs.a, phone, 'Anyone?');
    await eventually(async () => events('inbound_message', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`).length === 2);
    expect(events('handover.requested', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}`)).toHaveLength(1);
    // The other organization's channel is untouched: its customers stay with the bot.
    await customer(orgs.b, phone, 'Hello?');
    await eventually(async () => (await conversation(orgs.b, phone))?.lastInboundAt);
    expect(await conversation(orgs.b, phone)).toMatchObject({ status: 'bot' });
    await patch(orgs.a, orgs.a.channelId, { routing: { firstResponder: 'bot' } });
  });

  it("bot first with a fallback: a message the bot leaves unanswered is queued once its time runs out, one it answers is not", async () => {
    expect((await patch(orgs.a, orgs.a.channelId, { routing: { firstResponder: 'bot', botFallbackSeconds: 60 } })).status).toBe(200);
    const timers = orgs.svc.running.services.timers;
    const slow = '4915100000102';
    const quick = '4915100000103';
    await customer(orgs.a, slow, 'Where is my order?');
    await customer(orgs.a, quick, 'Where is my order?');
    await eventually(async () => (await conversation(orgs.a, slow))?.lastInboundAt && (await conversation(orgs.a, quick))?.lastInboundAt);
    // The bot answers one of them.
    const reply = await orgs.svc.call('POST', '/v1/messages/text', { key: orgs.a.adminKey, body: { channelId: orgs.a.channelId, to: quick, text: { body: 'Looking into it.' } } });
    expect(reply.status).toBe(200);
    clock.advance(59_000);
    await timers.sweep();
    expect(await conversation(orgs.a, slow)).toMatchObject({ status: 'bot' });
    clock.advance(2_000);
    await timers.sweep();
    expect(await conversation(orgs.a, slow)).toMatchObject({ status: 'queued' });
    expect(await conversation(orgs.a, quick)).toMatchObject({ status: 'bot' });
    const fallback = events('handover.requested', (d) => d.audienceExternalId === `${slow}:${orgs.a.phoneNumberId}`);
    expect(fallback).toHaveLength(1);
    expect(fallback[0]!.data).toMatchObject({ by: 'automation', reason: 'bot_fallback' });
    // Swept again: nothing happens twice.
    clock.advance(120_000);
    await timers.sweep();
    expect(events('handover.requested', (d) => d.audienceExternalId === `${slow}:${orgs.a.phoneNumberId}`)).toHaveLength(1);
    expect(events('handover.requested', (d) => d.audienceExternalId === `${quick}:${orgs.a.phoneNumberId}`)).toHaveLength(0);
  });

  it('a conversation handed back to the bot does not inherit a deadline from before', async () => {
    const phone = '4915100000104';
    await customer(orgs.a, phone, 'Hi');
    await eventually(async () => (await conversation(orgs.a, phone))?.lastInboundAt);
    // An agent takes it before the fallback, then hands it back.
    expect((await orgs.svc.call('POST', `/v1/conversations/${phone}:${orgs.a.phoneNumberId}/take`, { key: orgs.a.agentKey })).status).toBe(200);
    expect((await orgs.svc.call('POST', `/v1/conversations/${phone}:${orgs.a.phoneNumberId}/hand-back`, { key: orgs.a.agentKey })).status).toBe(200);
    clock.advance(3_600_000);
    await orgs.svc.running.services.timers.sweep();
    expect(await conversation(orgs.a, phone)).toMatchObject({ status: 'bot' });
    expect(events('handover.requested', (d) => d.audienceExternalId === `${phone}:${orgs.a.phoneNumberId}` && d.by === 'automation')).toHaveLength(0);
    await patch(orgs.a, orgs.a.channelId, { routing: { botFallbackSeconds: null } });
  });
});
