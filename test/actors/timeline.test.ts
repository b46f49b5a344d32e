import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { CONVERSATION_ACTOR, conversationActorSpec, conversationKey, createEmbeddedActorSystem, durableActor, type ActorSystem, type ConversationCommand, type ConversationReplies } from '../../src/actors/index.js';
import type { MessagingHandlerDeps } from '../../src/actors/conversation/messaging.js';
import { silentLogger } from '../../src/log.js';
import { systemClock } from '../../src/clock.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { createSqliteStore, openNodeDbIn } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createSqliteChannelRepo } from '../../src/store/channels/sqlite.js';
import { createSqliteCreditRepo } from '../../src/store/credits/sqlite.js';
import { createSqliteSessionMessageRepo } from '../../src/store/session-messages/sqlite.js';
import type { SessionMessageRepo } from '../../src/store/session-messages/port.js';
import type { ChatNetwork } from '../../src/network/index.js';
import { RecordingPublisher, testSettings } from './helpers.js';

/*
 * The timeline's entries are written by the conversation actor with the
 * change (in its fenced state) and stored into the history after the commit.
 * Here without one transaction per command (as clustered): a store that fails
 * the entry's write, a retry, a restart; each entry stored exactly once, in
 * order, and before anything of the next command.
 */

const ORG = 'org_1';
const PNID = '100000000000001';
const AEID = `4915100000001:${PNID}`;

const systems: ActorSystem[] = [];
afterEach(async () => {
  await Promise.all(systems.splice(0).map((s) => s.stop()));
});

async function world() {
  const db = await openNodeDbIn(null);
  const channels = createSqliteChannelRepo(db, new SecretBox(randomBytes(32)));
  await channels.create({
    id: 'ch_1',
    organizationId: ORG,
    name: 'WA',
    kind: 'whatsapp_cloud',
    network: 'graph',
    phoneNumberId: PNID,
    businessAccountId: '200000000000001',
    displayPhoneNumber: '15550001111',
    credentials: { accessToken: 'EAAtoken', appSecret: 'app-secret', verifyToken: 'verify' },
    createdAt: '2030-01-01T00:00:00.000Z',
    updatedAt: '2030-01-01T00:00:00.000Z',
  });
  const real = createSqliteSessionMessageRepo(db);
  const faults = { append: 0 };
  const messages: SessionMessageRepo = { ...real, append: (m) => (faults.append > 0 && faults.append-- > 0 ? Promise.reject(new Error('message store unavailable')) : real.append(m)) };
  const network: ChatNetwork = {
    send: async () => ({ ok: true, messageId: 'wamid.x' }),
    listTemplates: async () => [],
    downloadMedia: async () => {
      throw new Error('no media here');
    },
  };
  const deps: MessagingHandlerDeps = { channels, networkFor: () => network, messages, contacts: createSqliteStore(db).contacts, credits: createSqliteCreditRepo(db, systemClock), log: silentLogger, sendRecoveryWaitMs: 1_000 };
  const events = new RecordingPublisher();
  /** The runtime over the stores; again after a restart (nothing kept in memory). */
  const start = async () => {
    const store = new SqliteActorStore(db);
    const system = createEmbeddedActorSystem(testSettings(), { store });
    system.register(CONVERSATION_ACTOR, durableActor(conversationActorSpec(100, deps), { store, events }));
    await system.start();
    systems.push(system);
    return system.client<ConversationCommand, ConversationReplies>(CONVERSATION_ACTOR);
  };
  const timeline = async () => {
    const state = await (await start()).ask(conversationKey(ORG, AEID), { kind: 'state.get' });
    const all = (await real.listSession(ORG, state.session!.id, { notes: true })) ?? [];
    return all.map((m) => m.system?.event ?? (m.note ? `note:${m.content.text}` : m.sender));
  };
  return { faults, start, timeline, real, events };
}

describe('timeline entries of the conversation actor', () => {
  it('stores an entry whose write failed before the next command, once, when the caller retries with its key', async () => {
    const w = await world();
    const actor = await w.start();
    const key = conversationKey(ORG, AEID);
    expect((await actor.ask(key, { kind: 'handover.request', contactId: 'c1', actor: { type: 'api', userId: 'u1', keyId: 'k1' } })).success).toBe(true);
    // The take commits, but storing its entry fails: a retryable 503, the change recorded.
    w.faults.append = 1;
    await expect(actor.ask(key, { kind: 'handover.take', contactId: 'c1', agentId: 'u1' }, { idempotencyKey: 'take-1' })).rejects.toMatchObject({ status: 503 });
    // The retry stores the entry before anything else and answers from its key: one take, one entry.
    expect(await actor.ask(key, { kind: 'handover.take', contactId: 'c1', agentId: 'u1' }, { idempotencyKey: 'take-1' })).toMatchObject({ success: true, handover: { status: 'agent', agentId: 'u1' } });
    expect((await actor.ask(key, { kind: 'note.add', contactId: 'c1', agentId: 'u1', text: 'after the take' })).success).toBe(true);
    expect(await w.timeline()).toEqual(['handover_requested', 'taken', 'note:after the take']);
    expect(w.events.events.filter((e) => e.type === 'conversation.assigned')).toHaveLength(1);
  });

  it('stores it at the next start when the process stopped before; a projection run again stores nothing twice', async () => {
    const w = await world();
    const key = conversationKey(ORG, AEID);
    let actor = await w.start();
    await actor.ask(key, { kind: 'handover.request', contactId: 'c1' });
    w.faults.append = 1;
    await expect(actor.ask(key, { kind: 'handover.take', contactId: 'c1', agentId: 'u1' })).rejects.toMatchObject({ status: 503 });
    await Promise.all(systems.splice(0).map((s) => s.stop()));
    // A new process: the state says an entry may not be stored; the first command projects it first.
    actor = await w.start();
    expect((await actor.ask(key, { kind: 'handover.release', contactId: 'c1', by: 'u1' })).success).toBe(true);
    await Promise.all(systems.splice(0).map((s) => s.stop()));
    // Started again with the hand back's entry still in the state: projected again at the first command, stored once.
    actor = await w.start();
    await actor.ask(key, { kind: 'note.add', contactId: 'c1', agentId: 'u2', text: 'n' });
    expect(await w.timeline()).toEqual(['handover_requested', 'taken', 'handed_back', 'note:n']);
  });

  it('writes a ticket entry once per ticket, and none for a contact without a conversation', async () => {
    const w = await world();
    const actor = await w.start();
    const key = conversationKey(ORG, AEID);
    expect(await actor.ask(key, { kind: 'timeline.ticket', ticketId: 'T-1', actor: { type: 'agent', userId: 'u1' } })).toEqual({ success: false, sessionId: null });
    await actor.ask(key, { kind: 'handover.request', contactId: 'c1' });
    for (let i = 0; i < 3; i++) await actor.ask(key, { kind: 'timeline.ticket', ticketId: 'T-2', subject: 'Late', actor: { type: 'agent', userId: 'u1' } }, { idempotencyKey: 'timeline.ticket:T-2' });
    expect(await w.timeline()).toEqual(['handover_requested', 'ticket_created']);
  });
});
