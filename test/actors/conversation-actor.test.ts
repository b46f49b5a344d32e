import { afterEach, describe, expect, it } from 'vitest';
import {
  CONVERSATION_ACTOR,
  conversationActorSpec,
  conversationKey,
  durableActor,
  type ActorSystem,
  type ConversationCommand,
  type ConversationReplies,
} from '../../src/actors/index.js';
import { AppError } from '../../src/errors.js';
import { embeddedSystem, ManualClock, RecordingPublisher } from './helpers.js';

const systems: ActorSystem[] = [];
afterEach(async () => {
  await Promise.all(systems.splice(0).map((s) => s.stop()));
});

async function setup() {
  const clock = new ManualClock(Date.parse('2030-05-01T10:00:00Z'));
  const env = await embeddedSystem({}, clock);
  const events = new RecordingPublisher();
  let n = 0;
  env.system.register(CONVERSATION_ACTOR, durableActor(conversationActorSpec(50), { store: env.store, events, newId: () => `id-${++n}` }));
  await env.system.start();
  systems.push(env.system);
  return { ...env, events, clock, conversations: env.system.client<ConversationCommand, ConversationReplies>(CONVERSATION_ACTOR) };
}

const key = conversationKey('org_1', '15550001111:pn1');

describe('conversation actor', () => {
  it('queues the latest conversation once, emits handover.requested, and hands it back', async () => {
    const { conversations, events } = await setup();
    const r1 = await conversations.ask(key, { kind: 'handover.request', contactId: 'c1' });
    expect(r1).toMatchObject({ success: true, handover: { status: 'queued', requestedAt: '2030-05-01T10:00:00.000Z' } });
    const sessionId = r1.sessionId;
    expect(sessionId).toBeTruthy();
    const r2 = await conversations.ask(key, { kind: 'handover.request', contactId: 'c1' });
    expect(r2).toMatchObject({ success: false, reason: 'already_queued', sessionId });
    expect(events.events.map((e) => e.type)).toEqual(['handover.requested']);
    expect(events.events[0]).toMatchObject({
      organizationId: 'org_1',
      createdAt: '2030-05-01T10:00:00.000Z',
      data: { audienceExternalId: '15550001111:pn1', contactId: 'c1', sessionId },
    });

    const o1 = await conversations.ask(key, { kind: 'handover.open', contactId: 'c1' });
    expect(o1).toMatchObject({ success: true, sessionId, handover: { status: 'bot' } });
    const o2 = await conversations.ask(key, { kind: 'handover.open', contactId: 'c1' });
    expect(o2).toMatchObject({ success: false, reason: 'already_with_bot' });
    expect(events.events.map((e) => e.type)).toEqual(['handover.requested', 'handover.opened']);
    expect(events.events[1]!.data).toMatchObject({ previous: { status: 'queued' } });

    const st = await conversations.ask(key, { kind: 'state.get' });
    expect(st).toMatchObject({ organizationId: 'org_1', audienceExternalId: '15550001111:pn1', contactId: 'c1', handover: { status: 'bot' }, session: { id: sessionId, status: 'open' } });
  });

  it('refuses a request while an agent holds the conversation', async () => {
    const { conversations } = await setup();
    await conversations.ask(key, { kind: 'handover.request', contactId: 'c1' });
    expect(await conversations.ask(key, { kind: 'handover.assign', contactId: 'c1', agentId: 'u9' })).toMatchObject({ success: true, handover: { status: 'agent', agentId: 'u9' } });
    expect(await conversations.ask(key, { kind: 'handover.request', contactId: 'c1' })).toMatchObject({ success: false, reason: 'with_agent' });
  });

  it('50 simultaneous requests: exactly one success', async () => {
    const { conversations, events } = await setup();
    const replies = await Promise.all(Array.from({ length: 50 }, () => conversations.ask(key, { kind: 'handover.request', contactId: 'c1' })));
    expect(replies.filter((r) => r.success)).toHaveLength(1);
    expect(events.events).toHaveLength(1);
  });

  it('publishes the event before acknowledging; a failed publish is retryable and repeats nothing', async () => {
    const { conversations, events } = await setup();
    events.failNext = 1;
    const err = await conversations.ask(key, { kind: 'handover.request', contactId: 'c1' }, { idempotencyKey: 'req-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(503);
    expect(events.events).toHaveLength(0);
    // The retry gets the first result (success), and the event goes out once.
    const retry = await conversations.ask(key, { kind: 'handover.request', contactId: 'c1' }, { idempotencyKey: 'req-1' });
    expect(retry.success).toBe(true);
    expect(events.events.map((e) => e.type)).toEqual(['handover.requested']);
    const again = await conversations.ask(key, { kind: 'handover.request', contactId: 'c1' }, { idempotencyKey: 'req-1' });
    expect(again).toEqual(retry);
    expect(events.events).toHaveLength(1);
  });

  it('rejects malformed commands with 400', async () => {
    const { system } = await setup();
    const err = await system.ask({ type: CONVERSATION_ACTOR, key }, { kind: 'handover.request' }).catch((e: unknown) => e);
    expect((err as AppError).status).toBe(400);
  });

  it('keeps the state across passivation', async () => {
    const { conversations, system, clock } = await setup();
    await conversations.ask(key, { kind: 'handover.request', contactId: 'c1' });
    clock.advance(10 * 60_000);
    await system.host.passivateIdle();
    expect(system.host.stats().actors).toBe(0);
    expect(await conversations.ask(key, { kind: 'handover.request', contactId: 'c1' })).toMatchObject({ success: false, reason: 'already_queued' });
  });
});
