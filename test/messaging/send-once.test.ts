import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { conversationKey, initialConversationState, type ConversationState, type HandlerContext } from '../../src/actors/index.js';
import { keyedSendRecordId, messagingHandlers, type MessagingCommand, type MessagingHandlerDeps } from '../../src/actors/conversation/messaging.js';
import { callbackData, PARKED_TTL_MS } from '../../src/actors/conversation/send-recovery.js';
import { ManualClock } from '../../src/clock.js';
import { silentLogger } from '../../src/log.js';
import { NetworkUnavailableError, type ChatNetwork, type SendOutcome, type StatusEvent } from '../../src/network/index.js';
import { openNodeDbIn, createSqliteStore } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createSqliteChannelRepo } from '../../src/store/channels/sqlite.js';
import { createSqliteCreditRepo } from '../../src/store/credits/sqlite.js';
import { createSqliteSessionMessageRepo } from '../../src/store/session-messages/sqlite.js';

/*
 * A keyed send across an owner that stopped in the middle of its network
 * call, run as the runtime runs the handlers: each command on the state the
 * previous run left durable (its checkpoint when it stopped, its outcome when
 * it finished). The network is scripted; what it is told (callback data) and
 * what it reports (statuses echoing it) are the Cloud API's.
 */

const ORG = 'org_1';
const CUSTOMER = '4915100000001';
const PNID = '100000000000001';
const AEID = `${CUSTOMER}:${PNID}`;
const KEY = 'usr_1:order-42';

/** The network as this test scripts it: every request recorded, answered by `answer` (throwing = the sender died mid-call). */
class ScriptedNetwork implements ChatNetwork {
  readonly requests: { callbackData: string | undefined; wamid: string }[] = [];
  /** The sender stops after its checkpoint and before its request is written: nothing reaches the network. */
  stopBeforeSending = false;
  answer: (wamid: string) => SendOutcome | Promise<SendOutcome> = (wamid) => ({ ok: true, messageId: wamid });
  async send(_a: unknown, _to: string, _m: unknown, callbackData?: string): Promise<SendOutcome> {
    if (this.stopBeforeSending) throw new OwnerDied('stopped before the request was written');
    const wamid = `wamid.copy-${this.requests.length + 1}`;
    this.requests.push({ callbackData, wamid });
    return this.answer(wamid);
  }
  async listTemplates() {
    return [];
  }
  async downloadMedia(): Promise<never> {
    throw new Error('no media here');
  }
}

class OwnerDied extends Error {}

async function world() {
  const db = await openNodeDbIn(null);
  const clock = new ManualClock(Date.parse('2030-05-01T10:00:00Z'));
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
  const network = new ScriptedNetwork();
  const messages = createSqliteSessionMessageRepo(db);
  const resends: number[] = [];
  const credits = createSqliteCreditRepo(db, clock);
  const deps: MessagingHandlerDeps = {
    channels,
    networkFor: () => network,
    messages,
    contacts: createSqliteStore(db).contacts,
    credits,
    log: silentLogger,
    sendRecoveryWaitMs: 10_000,
    onResend: ({ attempt }) => resends.push(attempt),
  };
  const handlers = messagingHandlers(deps);
  /** The durable state: what the last run left (its checkpoint, or its outcome). */
  let durable: ConversationState = initialConversationState(conversationKey(ORG, AEID));
  /** Makes the next checkpoint fail (this run lost its partition), as the actor's fenced write would. */
  const failing: { next?: Error } = {};
  const run = async (cmd: MessagingCommand) => {
    const ctx: HandlerContext<ConversationState> = {
      key: conversationKey(ORG, AEID),
      now: new Date(clock.now()),
      newId: randomUUID,
      checkpoint: async (state) => {
        const e = failing.next;
        failing.next = undefined;
        if (e !== undefined) throw e;
        durable = state;
      },
    };
    const handler = handlers[cmd.kind] as (s: ConversationState, c: MessagingCommand, x: HandlerContext<ConversationState>) => Promise<{ state: ConversationState; reply: unknown; events?: { type: string; data: unknown }[]; afterCommit?: () => Promise<void> }>;
    const outcome = await handler(durable, cmd, ctx);
    durable = outcome.state;
    await outcome.afterCommit?.();
    return outcome;
  };
  const send = (sendKey = KEY, reservation?: { id: string; amount: number }) =>
    run({
      ...(reservation === undefined ? {} : { reservation }),
      kind: 'message.send',
      channelId: 'ch_1',
      to: CUSTOMER,
      policy: 'template',
      message: { type: 'template', template: { name: 'order_update', language: { code: 'en_US' } } },
      content: { type: 'template', template: { name: 'order_update', language: 'en_US' } },
      sender: 'bot',
      sendKey,
    } as MessagingCommand);
  const status = (wamid: string, s: StatusEvent['status'], cb?: string) => {
    const event: StatusEvent = { kind: 'status', businessAccountId: '200000000000001', phoneNumberId: PNID, networkMessageId: wamid, recipientId: CUSTOMER, status: s, at: new Date(clock.now()).toISOString(), errors: [] };
    if (cb !== undefined) event.callbackData = cb;
    return run({ kind: 'network.status', channelId: 'ch_1', event } as MessagingCommand);
  };
  return { clock, network, messages, credits, resends, failing, run, send, status, state: () => durable };
}

describe('a keyed send reaches the network once across an owner that stopped mid-call', () => {
  it('records the attempt in flight before the request leaves, and tells the network which send and attempt it is', async () => {
    const w = await world();
    w.network.answer = () => {
      // What is durable while the request is out: the attempt.
      expect(w.state().sendsInFlight).toEqual([{ key: KEY, attempt: 1, startedAt: expect.any(String) }]);
      return { ok: true, messageId: 'wamid.copy-1' };
    };
    const r = await w.send();
    expect(r.reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-1' });
    expect(w.network.requests).toEqual([{ callbackData: callbackData(ORG, AEID, KEY, 1), wamid: 'wamid.copy-1' }]);
    expect(w.network.requests[0]!.callbackData).not.toContain(KEY);
    // Finished: nothing in flight any more.
    expect(w.state().sendsInFlight).toBeUndefined();
  });

  it('a successor waits for the network to report the first attempt, then adopts it: one copy, its id answered, its statuses applied', async () => {
    const w = await world();
    w.network.answer = () => {
      throw new OwnerDied('killed after the request left');
    };
    await expect(w.send()).rejects.toBeInstanceOf(OwnerDied);
    expect(w.network.requests).toHaveLength(1);

    // The successor's retry before the network said anything: wait, do not send.
    await expect(w.send()).rejects.toMatchObject({ status: 503, code: 'send_in_flight' });
    expect(w.network.requests).toHaveLength(1);

    // The network reports copy 1, echoing its callback data; its message is not stored yet: parked, not dropped.
    const cb = w.network.requests[0]!.callbackData!;
    const sent = await w.status('wamid.copy-1', 'sent', cb);
    expect(sent.reply).toEqual({ applied: false, status: null, parked: true });
    await w.status('wamid.copy-1', 'delivered', cb);

    const adopted = await w.send();
    expect(adopted.reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-1' });
    expect(w.network.requests).toHaveLength(1);
    expect(w.resends).toEqual([]);
    const stored = (await w.messages.getByNetworkId(ORG, 'wamid.copy-1'))!;
    expect(stored.status).toBe('delivered');
    expect(adopted.events!.map((e) => e.type)).toEqual(['message_status', 'message_status', 'message.sent']);
    expect(w.state().parkedStatuses).toBeUndefined();
    expect(w.state().sendsInFlight).toBeUndefined();

    // Later statuses find the message; a retry of the send answers the same id.
    expect((await w.status('wamid.copy-1', 'read', cb)).reply).toEqual({ applied: true, status: 'read' });
    expect((await w.send()).reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-1' });
    expect(w.network.requests).toHaveLength(1);
  });

  it('sends again only when no status came within the wait, counts it, and names the new attempt', async () => {
    const w = await world();
    w.network.answer = () => {
      throw new OwnerDied('killed');
    };
    await expect(w.send()).rejects.toBeInstanceOf(OwnerDied);
    w.network.answer = (wamid) => ({ ok: true, messageId: wamid });
    w.clock.advance(10_001);
    const r = await w.send();
    expect(r.reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-2' });
    expect(w.network.requests.map((q) => q.callbackData)).toEqual([callbackData(ORG, AEID, KEY, 1), callbackData(ORG, AEID, KEY, 2)]);
    expect(w.resends).toEqual([2]);
  });

  it('keeps the send in flight when the network may have taken it (timeout), so the retry waits instead of sending', async () => {
    const w = await world();
    const { NetworkUnavailableError } = await import('../../src/network/index.js');
    w.network.answer = () => {
      throw new NetworkUnavailableError('no answer within 15000 ms', true);
    };
    const timedOut = await w.send();
    expect(timedOut.reply).toMatchObject({ outcome: 'unavailable', maybeSent: true });
    // Not the key's answer: a retry with the same key must reach the handler again.
    expect(timedOut).toMatchObject({ forget: true });
    expect(w.state().sendsInFlight).toHaveLength(1);
    await expect(w.send()).rejects.toMatchObject({ code: 'send_in_flight' });
    // A refused connection sent nothing: nothing in flight, the retry sends at once.
    const v = await world();
    v.network.answer = () => {
      throw new NetworkUnavailableError('connection refused', false);
    };
    expect((await v.send()).reply).toMatchObject({ outcome: 'unavailable', maybeSent: false });
    expect(v.state().sendsInFlight).toBeUndefined();
  });

  it('answers with the copy stored first under the key when a paused former owner stored its copy late', async () => {
    const w = await world();
    let late: Promise<unknown> | undefined;
    w.network.answer = async (wamid) => {
      if (wamid === 'wamid.copy-2') {
        // While copy 2 is out, the former owner resumes and stores copy 1 under the key's record.
        late = w.messages.append({
          _id: keyedSendRecordId(ORG, AEID, KEY),
          sessionId: 'ses_former',
          organizationId: ORG,
          channelId: 'ch_1',
          audienceExternalId: AEID,
          direction: 'outbound',
          sender: 'bot',
          content: { type: 'template' },
          sentAt: new Date(w.clock.now()).toISOString(),
          messageId: 'wamid.copy-1',
          status: 'accepted',
          statusUpdatedAt: new Date(w.clock.now()).toISOString(),
        });
        await late;
      }
      return { ok: true, messageId: wamid };
    };
    w.network.requests.push({ callbackData: callbackData(ORG, AEID, KEY, 1), wamid: 'wamid.copy-1' });
    const r = await w.send();
    expect(late).toBeDefined();
    // The answer names the recorded copy, which has history and gets statuses.
    expect(r.reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-1' });
    expect((await w.status('wamid.copy-1', 'read')).reply).toEqual({ applied: true, status: 'read' });
  });
});

describe('no status is acknowledged and dropped', () => {
  it('parks a status that comes before its message and applies it, in order, once a former owner stored the message', async () => {
    const w = await world();
    expect((await w.status('wamid.early', 'delivered')).reply).toEqual({ applied: false, status: null, parked: true });
    expect((await w.status('wamid.early', 'read')).reply).toMatchObject({ parked: true });
    // The same report redelivered is kept once.
    await w.status('wamid.early', 'read');
    expect(w.state().parkedStatuses).toHaveLength(2);
    await w.messages.append({
      _id: 'out_early',
      sessionId: 'ses_1',
      organizationId: ORG,
      channelId: 'ch_1',
      audienceExternalId: AEID,
      direction: 'outbound',
      sender: 'bot',
      content: { type: 'text', text: 'hi' },
      sentAt: '2030-05-01T09:59:59.000Z',
      messageId: 'wamid.early',
      status: 'accepted',
      statusUpdatedAt: '2030-05-01T09:59:59.000Z',
    });
    // The next status of the contact, of any message, applies what waited.
    const next = await w.status('wamid.unknown-other', 'sent');
    expect(next.events!.filter((e) => e.type === 'message_status').map((e) => (e.data as { status: string }).status)).toEqual(['delivered', 'read']);
    expect((await w.messages.getByNetworkId(ORG, 'wamid.early'))!.status).toBe('read');
    expect(w.state().parkedStatuses!.map((p) => p.networkMessageId)).toEqual(['wamid.unknown-other']);
  });

  it('forgets parked statuses after their time, and keeps at most a bounded number', async () => {
    const w = await world();
    for (let i = 0; i < 120; i++) await w.status(`wamid.n${i}`, 'sent');
    expect(w.state().parkedStatuses).toHaveLength(100);
    w.clock.advance(PARKED_TTL_MS + 1);
    await w.status('wamid.last', 'sent');
    expect(w.state().parkedStatuses!.map((p) => p.networkMessageId)).toEqual(['wamid.last']);
  });
});

describe('credits charge each copy that reached the network', () => {
  /** The service's part: the send's price reserved under its reservation before the actor is asked. */
  async function charged(w: Awaited<ReturnType<typeof world>>, balance: number) {
    await w.credits.topUp(ORG, balance);
    const reservation = { id: 'res_order-42', amount: 2 };
    expect((await w.credits.reserve(ORG, reservation.id, reservation.amount)).ok).toBe(true);
    return reservation;
  }

  /** A charged send whose request left and whose answer never came (the call timed out): copy 1 may be at the network, and its owner knows it. */
  async function chargedAndTimedOut(w: Awaited<ReturnType<typeof world>>, balance: number) {
    const reservation = await charged(w, balance);
    w.network.answer = () => {
      throw new NetworkUnavailableError('no answer within 15000 ms', true);
    };
    expect((await w.send(KEY, reservation)).reply).toMatchObject({ outcome: 'unavailable', maybeSent: true });
    expect(w.state().sendsInFlight).toEqual([expect.objectContaining({ attempt: 1, maybeSent: true })]);
    return reservation;
  }

  it('charges a counted resend again, once however often its run is retried, and not an adopted first copy', async () => {
    const w = await world();
    const reservation = await chargedAndTimedOut(w, 10);
    expect(await w.credits.balance(ORG)).toBe(8);
    // The resend's run dies too, after its copy left: two copies at the network, two charges.
    w.clock.advance(10_001);
    w.network.answer = () => {
      throw new OwnerDied('killed after the request left');
    };
    await expect(w.send(KEY, reservation)).rejects.toBeInstanceOf(OwnerDied);
    expect(w.network.requests).toHaveLength(2);
    expect(await w.credits.balance(ORG)).toBe(6);
    // Copy 2 is reported: adopted, nothing more sent, nothing more charged.
    await w.status('wamid.copy-2', 'sent', w.network.requests[1]!.callbackData);
    const adopted = await w.send(KEY, reservation);
    expect(adopted.reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-2' });
    expect(w.network.requests).toHaveLength(2);
    expect(await w.credits.balance(ORG)).toBe(6);
    expect(w.resends).toEqual([2]);
  });

  it('charges the copy a resend stored, refunds it when the network reports it failed, and gives back a copy that never left', async () => {
    const w = await world();
    const reservation = await chargedAndTimedOut(w, 10);
    w.clock.advance(10_001);
    // The network refuses the resend outright: that copy did not leave, its charge goes back.
    w.network.answer = () => ({ ok: false, rejection: { code: 131026, title: 'Message Undeliverable', message: 'no', httpStatus: 400 } });
    expect((await w.send(KEY, reservation)).reply).toMatchObject({ outcome: 'rejected' });
    expect(await w.credits.balance(ORG)).toBe(10);

    const v = await world();
    const r2 = await chargedAndTimedOut(v, 10);
    v.clock.advance(10_001);
    v.network.answer = (wamid) => ({ ok: true, messageId: wamid });
    expect((await v.send(KEY, r2)).reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-2' });
    expect(await v.credits.balance(ORG)).toBe(6);
    // Copy 2 failed at the network: its own charge comes back; copy 1 (which may have been delivered) stays charged.
    await v.status('wamid.copy-2', 'failed');
    expect(await v.credits.balance(ORG)).toBe(8);
  });

  it('gives back the charge of a resend whose in-flight record could not be written: that copy never left', async () => {
    const w = await world();
    const reservation = await chargedAndTimedOut(w, 10);
    expect(await w.credits.balance(ORG)).toBe(8);
    w.clock.advance(10_001);
    w.failing.next = new OwnerDied('partition lost before the resend left');
    await expect(w.send(KEY, reservation)).rejects.toBeInstanceOf(OwnerDied);
    expect(w.network.requests).toHaveLength(1);
    expect(await w.credits.balance(ORG)).toBe(8);
    // The next run sends it, charged once.
    w.network.answer = (wamid) => ({ ok: true, messageId: wamid });
    expect((await w.send(KEY, reservation)).reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-2' });
    expect(await w.credits.balance(ORG)).toBe(6);
  });

  it('sends no further copy without the credits for it: 402, and the send stays in flight', async () => {
    const w = await world();
    const reservation = await chargedAndTimedOut(w, 2);
    w.clock.advance(10_001);
    await expect(w.send(KEY, reservation)).rejects.toMatchObject({ status: 402, code: 'insufficient_credits' });
    expect(w.network.requests).toHaveLength(1);
    expect(w.state().sendsInFlight).toEqual([expect.objectContaining({ key: KEY, attempt: 1 })]);
    // A status for copy 1 still comes in: adopted, no further copy needed.
    await w.status('wamid.copy-1', 'delivered', w.network.requests[0]!.callbackData);
    expect((await w.send(KEY, reservation)).reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-1' });
  });

  /** A charged send whose owner stopped after its in-flight checkpoint and before its request was written (SIGKILL, or a pause): nothing reached the network. */
  async function chargedAndStoppedBeforeItLeft(w: Awaited<ReturnType<typeof world>>, balance: number) {
    const reservation = await charged(w, balance);
    w.network.stopBeforeSending = true;
    await expect(w.send(KEY, reservation)).rejects.toBeInstanceOf(OwnerDied);
    w.network.stopBeforeSending = false;
    expect(w.network.requests).toHaveLength(0);
    expect(w.state().sendsInFlight).toEqual([{ key: KEY, attempt: 1, startedAt: expect.any(String) }]);
    return reservation;
  }

  it('a resend after an owner that stopped mid-call takes over that attempt\'s charge: one copy at the network, paid once', async () => {
    const w = await world();
    const reservation = await chargedAndStoppedBeforeItLeft(w, 10);
    expect(await w.credits.balance(ORG)).toBe(8);
    // No status came in all the wait (there was nothing to report): the successor sends it, as attempt 2.
    w.clock.advance(10_001);
    const sent = await w.send(KEY, reservation);
    expect(sent.reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-1' });
    expect(w.network.requests.map((r) => r.callbackData)).toEqual([callbackData(ORG, AEID, KEY, 2)]);
    expect(w.resends).toEqual([2]);
    // Paid once, under the send's own reservation (before: a second charge, for a copy the network never had).
    expect(await w.credits.balance(ORG)).toBe(8);
    expect(await w.messages.get(ORG, keyedSendRecordId(ORG, AEID, KEY))).toMatchObject({ charge: { reservationId: reservation.id, amount: 2 } });
    // A retry of the answered send changes nothing; the stored copy failing gives its one charge back.
    await w.send(KEY, reservation);
    expect(await w.credits.balance(ORG)).toBe(8);
    await w.status('wamid.copy-1', 'failed');
    expect(await w.credits.balance(ORG)).toBe(10);
  });

  it('the charge taken over stays with the send when the resend stops too, and a resend after a timeout pays its own', async () => {
    const w = await world();
    const reservation = await chargedAndStoppedBeforeItLeft(w, 10);
    // The resend's owner stops before its request leaves too; the next run loses the partition at its checkpoint.
    w.clock.advance(10_001);
    w.network.stopBeforeSending = true;
    await expect(w.send(KEY, reservation)).rejects.toBeInstanceOf(OwnerDied);
    w.network.stopBeforeSending = false;
    expect(w.state().sendsInFlight).toEqual([expect.objectContaining({ attempt: 2, paidBy: reservation.id })]);
    w.clock.advance(10_001);
    w.failing.next = new OwnerDied('partition lost before the resend left');
    await expect(w.send(KEY, reservation)).rejects.toBeInstanceOf(OwnerDied);
    expect(await w.credits.balance(ORG)).toBe(8);
    // Attempt 3 times out: it may be at the network, so it keeps the charge, and attempt 4 pays its own.
    w.network.answer = () => {
      throw new NetworkUnavailableError('no answer within 15000 ms', true);
    };
    expect((await w.send(KEY, reservation)).reply).toMatchObject({ outcome: 'unavailable', maybeSent: true });
    expect(await w.credits.balance(ORG)).toBe(8);
    w.clock.advance(10_001);
    w.network.answer = (wamid) => ({ ok: true, messageId: wamid });
    expect((await w.send(KEY, reservation)).reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-2' });
    expect(w.network.requests.map((r) => r.callbackData)).toEqual([callbackData(ORG, AEID, KEY, 3), callbackData(ORG, AEID, KEY, 4)]);
    expect(await w.credits.balance(ORG)).toBe(6);
  });

  it('a copy taken as never having left that the network reports after all is charged then, once, and given back if it failed', async () => {
    const w = await world();
    const reservation = await charged(w, 10);
    // The owner dies after the request left; every status of copy 1 is late, past the wait.
    w.network.answer = () => {
      throw new OwnerDied('killed after the request left');
    };
    await expect(w.send(KEY, reservation)).rejects.toBeInstanceOf(OwnerDied);
    w.clock.advance(10_001);
    w.network.answer = (wamid) => ({ ok: true, messageId: wamid });
    expect((await w.send(KEY, reservation)).reply).toMatchObject({ outcome: 'sent', messageId: 'wamid.copy-2' });
    // Two copies at the network, paid once so far: nothing said copy 1 arrived.
    expect(w.network.requests).toHaveLength(2);
    expect(await w.credits.balance(ORG)).toBe(8);
    // Its statuses come now: it did arrive, and is charged, once however many come.
    const copy1 = w.network.requests[0]!.callbackData;
    await w.status('wamid.copy-1', 'sent', copy1);
    await w.status('wamid.copy-1', 'delivered', copy1);
    await w.status('wamid.copy-1', 'sent', copy1);
    expect(await w.credits.balance(ORG)).toBe(6);
    // Copy 2's statuses charge nothing more.
    await w.status('wamid.copy-2', 'delivered', w.network.requests[1]!.callbackData);
    expect(await w.credits.balance(ORG)).toBe(6);
    // A late copy that failed at the network is not billed.
    const v = await world();
    const r2 = await charged(v, 10);
    v.network.answer = () => {
      throw new OwnerDied('killed after the request left');
    };
    await expect(v.send(KEY, r2)).rejects.toBeInstanceOf(OwnerDied);
    v.clock.advance(10_001);
    v.network.answer = (wamid) => ({ ok: true, messageId: wamid });
    await v.send(KEY, r2);
    await v.status('wamid.copy-1', 'sent', v.network.requests[0]!.callbackData);
    expect(await v.credits.balance(ORG)).toBe(6);
    await v.status('wamid.copy-1', 'failed', v.network.requests[0]!.callbackData);
    expect(await v.credits.balance(ORG)).toBe(8);
  });
});
