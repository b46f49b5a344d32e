import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { conversationKey, initialConversationState, type ConversationState, type HandlerContext } from '../../src/actors/index.js';
import { messagingHandlers, type MessagingHandlerDeps } from '../../src/actors/conversation/messaging.js';
import type { InboundMessageEvent, StatusEvent } from '../../src/network/inbound.js';
import type { SessionMessage } from '../../src/domain/messages.js';
import type { SessionMessageRepo } from '../../src/store/session-messages/port.js';
import { openNodeDbIn, createSqliteStore } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createSqliteChannelRepo } from '../../src/store/channels/sqlite.js';
import { createSqliteCreditRepo } from '../../src/store/credits/sqlite.js';
import { createSqliteSessionMessageRepo } from '../../src/store/session-messages/sqlite.js';
import { ManualClock } from '../../src/clock.js';
import { silentLogger } from '../../src/log.js';

/*
 * The messaging handlers' writes outside the actor's fenced state, run by two
 * owners of one contact: the current one and a former one that read the
 * stores, paused, lost its partition and resumed. Inbound messages and
 * statuses are stored after the fenced write (afterCommit), so a former owner
 * normally never gets that far; these tests take the worst case, a former
 * owner that committed just before its partition moved and makes its store
 * writes late, after the current owner's. They must not undo or duplicate
 * the current owner's.
 */

/** Runs a handler's outcome as the runtime does once its fenced write succeeded. */
async function committed<T extends { afterCommit?: () => Promise<void> }>(outcome: T | Promise<T>): Promise<T> {
  const o = await outcome;
  await o.afterCommit?.();
  return o;
}

const ORG = 'org_1';
const AEID = '4915100000001:pn1';

async function world() {
  const db = await openNodeDbIn(null);
  const clock = new ManualClock(Date.parse('2030-05-01T10:00:00Z'));
  const messages = createSqliteSessionMessageRepo(db);
  const store = createSqliteStore(db);
  const credits = createSqliteCreditRepo(db, clock);
  const deps: MessagingHandlerDeps = {
    channels: createSqliteChannelRepo(db, new SecretBox(randomBytes(32))),
    networkFor: () => {
      throw new Error('no network in these tests');
    },
    messages,
    contacts: store.contacts,
    credits,
    log: silentLogger,
    sendRecoveryWaitMs: 1_000,
  };
  const ctx = (): HandlerContext<ConversationState> => ({ key: conversationKey(ORG, AEID), now: new Date(clock.now()), newId: randomUUID, checkpoint: async () => {} });
  return { db, clock, messages, store, credits, deps, ctx };
}

/** The message log as a paused owner saw it: every read answers from a snapshot taken before it paused. */
function frozenReads(live: SessionMessageRepo, snapshot: Map<string, SessionMessage | null>): SessionMessageRepo {
  return {
    ...live,
    getByNetworkId: async (org, netId) => (snapshot.has(netId) ? snapshot.get(netId)! : live.getByNetworkId(org, netId)),
  };
}

const status = (id: string, s: StatusEvent['status'], at = '2030-05-01T10:00:05.000Z'): StatusEvent => ({
  kind: 'status',
  businessAccountId: 'waba',
  phoneNumberId: 'pn1',
  networkMessageId: id,
  recipientId: '4915100000001',
  status: s,
  at,
  errors: s === 'failed' ? [{ code: 131026, title: 'Message undeliverable', message: 'not on the network' }] : [],
});

async function sentMessage(w: Awaited<ReturnType<typeof world>>, price = 3): Promise<SessionMessage> {
  await w.credits.topUp(ORG, 10);
  await w.credits.reserve(ORG, 'res_1', price);
  const m: SessionMessage = {
    _id: `m_${randomUUID()}`,
    sessionId: 's1',
    organizationId: ORG,
    channelId: 'ch1',
    audienceExternalId: AEID,
    direction: 'outbound',
    sender: 'bot',
    content: { type: 'template', text: 'hi' },
    sentAt: '2030-05-01T10:00:00.000Z',
    messageId: `wamid.${randomUUID()}`,
    status: 'sent',
    statusUpdatedAt: '2030-05-01T10:00:01.000Z',
    charge: { reservationId: 'res_1', amount: price },
  };
  await w.messages.append(m);
  return m;
}

describe('messaging writes by a stale owner', () => {
  it('a status computed from an old read never moves a message back, and refunds nothing', async () => {
    const w = await world();
    const m = await sentMessage(w);
    const state = { ...initialConversationState(conversationKey(ORG, AEID)), contactId: 'c1' };
    // The former owner read the message while it was "sent", then paused.
    const stale = messagingHandlers({ ...w.deps, messages: frozenReads(w.messages, new Map([[m.messageId!, m]])) });
    const current = messagingHandlers(w.deps);

    expect((await committed(current['network.status'](state, { kind: 'network.status', channelId: 'ch1', event: status(m.messageId!, 'read') }, w.ctx()))).reply).toEqual({ applied: true, status: 'read' });
    const balance = await w.credits.balance(ORG);

    for (const late of ['delivered', 'failed'] as const) {
      await committed(stale['network.status'](state, { kind: 'network.status', channelId: 'ch1', event: status(m.messageId!, late) }, w.ctx()));
    }
    expect(await w.messages.getByNetworkId(ORG, m.messageId!)).toMatchObject({ status: 'read', statusUpdatedAt: '2030-05-01T10:00:05.000Z' });
    expect((await w.messages.getByNetworkId(ORG, m.messageId!))!.errors).toBeUndefined();
    // The message was delivered: the late "failed" of the former owner refunds nothing.
    expect(await w.credits.balance(ORG)).toBe(balance);
  });

  it('a failure reported to both owners refunds the send once', async () => {
    const w = await world();
    const m = await sentMessage(w, 4);
    const state = initialConversationState(conversationKey(ORG, AEID));
    const before = await w.credits.balance(ORG);
    const stale = messagingHandlers({ ...w.deps, messages: frozenReads(w.messages, new Map([[m.messageId!, m]])) });
    const current = messagingHandlers(w.deps);
    const cmd = { kind: 'network.status', channelId: 'ch1', event: status(m.messageId!, 'failed') } as const;
    expect((await committed(current['network.status'](state, cmd, w.ctx()))).reply).toEqual({ applied: true, status: 'failed' });
    await committed(stale['network.status'](state, cmd, w.ctx()));
    // And the network's redelivery to the current owner.
    expect((await committed(current['network.status'](state, cmd, w.ctx()))).reply).toEqual({ applied: false, status: 'failed' });
    expect(await w.credits.balance(ORG)).toBe(before + 4);
  });

  it('an inbound message run by both owners is stored once, for one contact', async () => {
    const w = await world();
    const state = initialConversationState(conversationKey(ORG, AEID));
    const ev: InboundMessageEvent = {
      kind: 'message',
      businessAccountId: 'waba',
      phoneNumberId: 'pn1',
      from: '4915100000001',
      customer: { phone: '4915100000001' },
      profileName: 'Kim',
      networkMessageId: 'wamid.in-1',
      at: '2030-05-01T09:59:59.000Z',
      content: { type: 'text', text: 'hello' },
    };
    // The former owner had looked for the message (not there yet) before it paused.
    const stale = messagingHandlers({ ...w.deps, messages: frozenReads(w.messages, new Map([['wamid.in-1', null]])) });
    const current = messagingHandlers(w.deps);
    const a = await committed(current['network.inbound'](state, { kind: 'network.inbound', channelId: 'ch1', event: ev }, w.ctx()));
    const b = await committed(stale['network.inbound'](state, { kind: 'network.inbound', channelId: 'ch1', event: ev }, w.ctx()));
    const sessionId = a.reply.sessionId!;
    expect((await w.messages.listSession(ORG, sessionId))!.map((x) => x.content.text)).toEqual(['hello']);
    // The former owner chose another session from its old state: nothing of it is listed there.
    if (b.reply.sessionId !== sessionId) expect(await w.messages.listSession(ORG, b.reply.sessionId!)).toBeNull();
    expect((await w.store.contacts.list(ORG)).map((c) => c.audienceExternalId)).toEqual([AEID]);
    expect(a.state.contactId).toBe(b.state.contactId);
  });
});
