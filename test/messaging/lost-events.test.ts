import { randomBytes } from 'node:crypto';
import { createSqliteVisitorRepo } from '../../src/store/visitors/sqlite.js';
import { createSqliteRequestKeyRepo } from '../../src/store/request-keys/sqlite.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CONVERSATION_ACTOR, conversationActorSpec, createEmbeddedActorSystem, durableActor, type ActorSystem } from '../../src/actors/index.js';
import type { Fence } from '../../src/domain/fence.js';
import type { MessagingHandlerDeps } from '../../src/actors/conversation/messaging.js';
import type { Principal } from '../../src/domain/types.js';
import type { DomainEvent } from '../../src/events/types.js';
import { silentLogger } from '../../src/log.js';
import { MessagingService, NetworkWebhookReceiver, conversationGateway, type ConversationGateway } from '../../src/messaging/index.js';
import { ConversationClient } from '../../src/conversations/index.js';
import { signHubSignature, type ChatNetwork, type SendOutcome } from '../../src/network/index.js';
import type { ActorStateRef } from '../../src/store/actors/port.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { openNodeDbIn, createSqliteStore } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createSqliteChannelRepo } from '../../src/store/channels/sqlite.js';
import { createSqliteCreditRepo } from '../../src/store/credits/sqlite.js';
import type { CreditRepo } from '../../src/store/credits/port.js';
import { createSqliteTemplateRepo } from '../../src/store/templates/sqlite.js';
import { createMemoryRateLimiter } from '../../src/store/ratelimit/memory.js';
import { createSqliteSessionMessageRepo } from '../../src/store/session-messages/sqlite.js';
import type { SessionMessageRepo } from '../../src/store/session-messages/port.js';
import type { ChannelRepo, WhatsAppChannel } from '../../src/store/channels/port.js';
import { shapeFromDefinition } from '../../src/network/template-rules.js';
import { systemClock } from '../../src/clock.js';
import { RecordingPublisher, testSettings } from '../actors/helpers.js';

/*
 * A webhook, or a send, whose processing stops part-way: the actor's fenced
 * write fails, the event log is down, the store write after the commit fails,
 * or the process stops. The network delivers a webhook again until it gets a
 * 200 (a client retries a send with its Idempotency-Key); every such re-run
 * must leave the message stored once and its event in the log.
 */

/** The actor state store, made to fail its next writes (a Redis error, a lost partition). */
class FlakyActorStore extends SqliteActorStore {
  failSaves = 0;
  /** Saves that succeed before the failures begin (a keyed send's in-flight checkpoint is one). */
  passSaves = 0;
  override save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void> {
    if (this.failSaves > 0 && this.passSaves > 0) this.passSaves--;
    else if (this.failSaves > 0) {
      this.failSaves--;
      return Promise.reject(new Error('actor store unavailable'));
    }
    return super.save(ref, value, fence);
  }

  /** Fence reads that fail next (a status reads its fence instead of writing the state). */
  failFenceReads = 0;
  override checkFence(ref: ActorStateRef, fence: Fence): Promise<void> {
    if (this.failFenceReads > 0) {
      this.failFenceReads--;
      return Promise.reject(new Error('actor store unavailable'));
    }
    return super.checkFence(ref, fence);
  }
}

/** The session message log, made to fail its next status writes or appends. */
function flakyMessages(repo: SessionMessageRepo) {
  const faults = { advance: 0, append: 0 };
  const wrapped: SessionMessageRepo = {
    ...repo,
    advanceStatus: (m) => (faults.advance > 0 && faults.advance-- > 0 ? Promise.reject(new Error('message store unavailable')) : repo.advanceStatus(m)),
    append: (m) => (faults.append > 0 && faults.append-- > 0 ? Promise.reject(new Error('message store unavailable')) : repo.append(m)),
  };
  return { faults, repo: wrapped };
}

/** The chat network: accepts every send (or rejects the next ones), counts them. */
class CountingNetwork implements ChatNetwork {
  sends = 0;
  reject = 0;
  async send(): Promise<SendOutcome> {
    this.sends++;
    if (this.reject > 0) {
      this.reject--;
      return { ok: false, rejection: { code: 132001, title: 'Template does not exist', message: 'no such template', httpStatus: 404 } };
    }
    return { ok: true, messageId: `wamid.test-${this.sends}` };
  }
  async listTemplates() {
    return [];
  }
  async downloadMedia(): Promise<never> {
    throw new Error('no media in this test');
  }
}

const ORG = 'org_1';
const CUSTOMER = '4915100000001';

const systems: ActorSystem[] = [];
afterEach(async () => {
  await Promise.all(systems.splice(0).map((s) => s.stop()));
});

async function world() {
  const db = await openNodeDbIn(null);
  const box = new SecretBox(randomBytes(32));
  const channels = createSqliteChannelRepo(db, box);
  const channel: WhatsAppChannel = {
    id: 'ch_1',
    organizationId: ORG,
    name: 'WA',
    kind: 'whatsapp_cloud',
    network: 'graph',
    phoneNumberId: '100000000000001',
    businessAccountId: '200000000000001',
    displayPhoneNumber: '15550001111',
    credentials: { accessToken: 'EAAtoken', appSecret: 'app-secret', verifyToken: 'verify' },
    createdAt: '2030-01-01T00:00:00.000Z',
    updatedAt: '2030-01-01T00:00:00.000Z',
  };
  await channels.create(channel);
  const messages = flakyMessages(createSqliteSessionMessageRepo(db));
  const network = new CountingNetwork();
  const realCredits = createSqliteCreditRepo(db, systemClock);
  const creditFaults = { refund: 0 };
  const credits: CreditRepo = {
    ...realCredits,
    refund: (org, id) => (creditFaults.refund > 0 && creditFaults.refund-- > 0 ? Promise.reject(new Error('credit store unavailable')) : realCredits.refund(org, id)),
  };
  const channelFaults = { missing: 0 };
  // What the actor reads (the service reads the real repo): a channel that vanishes between the two.
  const actorChannels: ChannelRepo = {
    ...channels,
    get: (org, id) => (channelFaults.missing > 0 && channelFaults.missing-- > 0 ? Promise.resolve(null) : channels.get(org, id)),
  };
  const deps: MessagingHandlerDeps = { channels: actorChannels, networkFor: () => network, messages: messages.repo, contacts: createSqliteStore(db).contacts, credits, log: silentLogger, sendRecoveryWaitMs: 1_000 };
  const templates = createSqliteTemplateRepo(db);
  const definition = [{ type: 'BODY', text: 'Hi {{1}}' }];
  await templates.put({
    organizationId: ORG,
    channelId: channel.id,
    name: 'greeting',
    language: 'en_US',
    category: 'UTILITY',
    status: 'APPROVED',
    components: definition,
    shape: shapeFromDefinition(definition),
    networkTemplateId: null,
    source: 'operator',
    updatedAt: '2030-01-01T00:00:00.000Z',
  });
  const events = new RecordingPublisher();
  let actorStore!: FlakyActorStore;
  let gateway!: ConversationGateway;

  /** Starts the actor runtime over the stores (again: a restarted process, nothing kept in memory). */
  const start = async () => {
    actorStore = new FlakyActorStore(db);
    const system = createEmbeddedActorSystem(testSettings(), { store: actorStore });
    system.register(CONVERSATION_ACTOR, durableActor(conversationActorSpec(100, deps), { store: actorStore, events }));
    await system.start();
    systems.push(system);
    gateway = conversationGateway(new ConversationClient(system, deps.contacts));
    return system;
  };
  let system = await start();
  const conversations: ConversationGateway = { ask: (...args) => gateway.ask(...args) };
  const receiver = new NetworkWebhookReceiver({ channels, messages: messages.repo, contacts: deps.contacts, conversations, log: silentLogger });
  const service = new MessagingService({
    channels,
    contacts: deps.contacts,
    templates,
    credits,
    rateLimiter: createMemoryRateLimiter(systemClock),
    messages: messages.repo,
    requestKeys: createSqliteRequestKeyRepo(db, systemClock),
    conversations,
    visitors: createSqliteVisitorRepo(db),
    prices: { UTILITY: 2 },
    templateRatePerMinute: 1000,
    log: silentLogger,
    sendInFlightWaitMs: 2_000,
  });

  const envelope = (value: Record<string, unknown>) =>
    Buffer.from(
      JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [{ id: channel.businessAccountId, changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: channel.phoneNumberId }, ...value } }] }],
      }),
    );
  const deliver = (body: Buffer) => receiver.receive(channel.id, body, signHubSignature(channel.credentials.appSecret, body));
  const statusWebhook = (id: string, status: string) => envelope({ statuses: [{ id, status, timestamp: '1893456000', recipient_id: CUSTOMER }] });
  const inboundWebhook = (id: string, text: string, ts = '1893456000') =>
    envelope({ contacts: [{ profile: { name: 'Kim' }, wa_id: CUSTOMER }], messages: [{ from: CUSTOMER, id, timestamp: ts, type: 'text', text: { body: text } }] });

  const ofType = (type: string, messageId: string, status?: string) =>
    events.events.filter((e: DomainEvent) => e.type === type && (e.data as { messageId: string }).messageId === messageId && (status === undefined || (e.data as { status: string }).status === status));
  const principal: Principal = { organizationId: ORG, userId: 'u1', role: 'admin', keyId: 'key_1', scopes: new Set(['message:send']) };

  return {
    db,
    channel,
    credits,
    creditFaults,
    channelFaults,
    envelope,
    template: (to = CUSTOMER) => ({ channelId: channel.id, to, template: { name: 'greeting', language: { code: 'en_US', policy: 'deterministic' as const }, components: [{ type: 'body' as const, parameters: [{ type: 'text' as const, text: 'Ann' }] }] } }),
    network,
    events,
    messages,
    service,
    principal,
    deliver,
    statusWebhook,
    inboundWebhook,
    ofType,
    actorStore: () => actorStore,
    /** Stops the runtime without a word (its memory is gone) and starts another over the same stores. */
    restart: async () => {
      await system.stop();
      systems.splice(systems.indexOf(system), 1);
      system = await start();
    },
    send: (to = CUSTOMER, reservation?: { id: string; amount: number }) =>
      conversations.ask(ORG, `${to}:${channel.phoneNumberId}`, {
        kind: 'message.send',
        channelId: channel.id,
        to,
        policy: 'template',
        message: { type: 'text', text: { body: 'hi' } },
        content: { type: 'text', text: 'hi' },
        sender: 'bot',
        ...(reservation ? { reservation } : {}),
      }),
  };
}

const notRecorded = { status: 503, code: 'not_recorded' };
const envelope = (w: { envelope: (v: Record<string, unknown>) => Buffer }, value: Record<string, unknown>) => w.envelope(value);

describe('message_status: no status event lost when a run stops part-way', () => {
  it('the fence read fails: nothing is stored, and the redelivery stores the status and records its event', async () => {
    const w = await world();
    const sent = await w.send();
    if (sent.outcome !== 'sent') throw new Error('send failed');
    w.actorStore().failFenceReads = 1;
    await expect(w.deliver(w.statusWebhook(sent.messageId, 'delivered'))).rejects.toMatchObject(notRecorded);
    // The status waits for its event: not stored while the event is not recorded.
    expect(await w.messages.repo.getByNetworkId(ORG, sent.messageId)).toMatchObject({ status: 'accepted' });
    expect(w.ofType('message_status', sent.messageId)).toHaveLength(0);

    expect(await w.deliver(w.statusWebhook(sent.messageId, 'delivered'))).toMatchObject({ applied: 1 });
    expect(await w.messages.repo.getByNetworkId(ORG, sent.messageId)).toMatchObject({ status: 'delivered' });
    expect(w.ofType('message_status', sent.messageId, 'delivered')).toHaveLength(1);
    // A plain redelivery after that publishes nothing more.
    expect(await w.deliver(w.statusWebhook(sent.messageId, 'delivered'))).toMatchObject({ applied: 0, duplicates: 1 });
    expect(w.ofType('message_status', sent.messageId, 'delivered')).toHaveLength(1);
  });

  it('the event log is down, then the process stops: nothing is stored, and the redelivery stores the status and records its event', async () => {
    const w = await world();
    const sent = await w.send();
    if (sent.outcome !== 'sent') throw new Error('send failed');
    w.events.failNext = 1;
    await expect(w.deliver(w.statusWebhook(sent.messageId, 'read'))).rejects.toMatchObject(notRecorded);
    // The status is stored only after its event is in the log.
    expect(await w.messages.repo.getByNetworkId(ORG, sent.messageId)).toMatchObject({ status: 'accepted' });
    expect(w.ofType('message_status', sent.messageId)).toHaveLength(0);
    await w.restart();
    expect(await w.deliver(w.statusWebhook(sent.messageId, 'read'))).toMatchObject({ applied: 1 });
    expect(await w.messages.repo.getByNetworkId(ORG, sent.messageId)).toMatchObject({ status: 'read' });
    expect(w.ofType('message_status', sent.messageId, 'read')).toHaveLength(1);
  });

  it('a status whose earlier event is still unpublished goes through the state write, after that event', async () => {
    const w = await world();
    w.events.failNext = 1;
    // The send is stored, its message.sent event kept in the actor's outbox.
    await expect(w.send()).rejects.toMatchObject({ status: 503 });
    const networkId = 'wamid.test-1';
    expect(await w.messages.repo.getByNetworkId(ORG, networkId)).toMatchObject({ status: 'accepted' });
    expect(await w.deliver(w.statusWebhook(networkId, 'delivered'))).toMatchObject({ applied: 1 });
    expect(w.events.events.filter((e) => e.type === 'message.sent' || e.type === 'message_status').map((e) => e.type)).toEqual(['message.sent', 'message_status']);
  });

  it('the status write after the commit fails: 503, and the redelivery stores it (the event, same id, at least once)', async () => {
    const w = await world();
    const sent = await w.send();
    if (sent.outcome !== 'sent') throw new Error('send failed');
    w.messages.faults.advance = 1;
    await expect(w.deliver(w.statusWebhook(sent.messageId, 'sent'))).rejects.toMatchObject(notRecorded);
    expect(await w.messages.repo.getByNetworkId(ORG, sent.messageId)).toMatchObject({ status: 'accepted' });
    await w.restart();
    expect(await w.deliver(w.statusWebhook(sent.messageId, 'sent'))).toMatchObject({ applied: 1 });
    expect(await w.messages.repo.getByNetworkId(ORG, sent.messageId)).toMatchObject({ status: 'sent' });
    const recorded = w.ofType('message_status', sent.messageId, 'sent');
    expect(recorded.length).toBeGreaterThanOrEqual(1);
    // Consumers deduplicate by event id (the webhook-id): one event, however often it was recorded.
    expect(new Set(recorded.map((e) => e.id)).size).toBe(1);
  });

  it('a failure whose refund was cut short is refunded by the redelivery, once', async () => {
    const w = await world();
    await w.credits.topUp(ORG, 10);
    await w.credits.reserve(ORG, 'res_1', 4);
    const sent = await w.send(CUSTOMER, { id: 'res_1', amount: 4 });
    if (sent.outcome !== 'sent') throw new Error('send failed');
    w.creditFaults.refund = 1;
    const failed = () =>
      envelope(w, { statuses: [{ id: sent.messageId, status: 'failed', timestamp: '1893456000', recipient_id: CUSTOMER, errors: [{ code: 131026, title: 'Message undeliverable' }] }] });
    await expect(w.deliver(failed())).rejects.toMatchObject(notRecorded);
    expect(await w.messages.repo.getByNetworkId(ORG, sent.messageId)).toMatchObject({ status: 'failed' });
    expect(await w.credits.balance(ORG)).toBe(6);
    expect(await w.deliver(failed())).toMatchObject({ applied: 0 });
    expect(await w.credits.balance(ORG)).toBe(10);
    expect(await w.deliver(failed())).toMatchObject({ applied: 0 });
    expect(await w.credits.balance(ORG)).toBe(10);
    expect(w.ofType('message_status', sent.messageId, 'failed')).toHaveLength(1);
  });
});

describe('inbound_message: no event lost when a run stops part-way', () => {
  it('two messages in the same second, the second one\'s state write fails: its redelivery records it', async () => {
    const w = await world();
    expect(await w.deliver(w.inboundWebhook('wamid.in-a', 'first'))).toMatchObject({ applied: 1 });
    w.actorStore().failSaves = 1;
    await expect(w.deliver(w.inboundWebhook('wamid.in-b', 'second'))).rejects.toMatchObject(notRecorded);
    expect(await w.messages.repo.getByNetworkId(ORG, 'wamid.in-b')).toBeNull();
    expect(await w.deliver(w.inboundWebhook('wamid.in-b', 'second'))).toMatchObject({ applied: 1, duplicates: 0 });
    const b = (await w.messages.repo.getByNetworkId(ORG, 'wamid.in-b'))!;
    expect((await w.messages.repo.listSession(ORG, b.sessionId))!.map((m) => m.content.text)).toEqual(['first', 'second']);
    expect(w.ofType('inbound_message', 'wamid.in-b')).toHaveLength(1);
    expect(await w.deliver(w.inboundWebhook('wamid.in-b', 'second'))).toMatchObject({ applied: 0, duplicates: 1 });
    expect(w.ofType('inbound_message', 'wamid.in-b')).toHaveLength(1);
  });

  it('the message write after the commit fails, then the process stops: the redelivery stores it once and its event is in the log', async () => {
    const w = await world();
    w.messages.faults.append = 1;
    await expect(w.deliver(w.inboundWebhook('wamid.in-c', 'hello'))).rejects.toMatchObject(notRecorded);
    await w.restart();
    expect(await w.deliver(w.inboundWebhook('wamid.in-c', 'hello'))).toMatchObject({ applied: 1 });
    const c = (await w.messages.repo.getByNetworkId(ORG, 'wamid.in-c'))!;
    expect((await w.messages.repo.listSession(ORG, c.sessionId))!.map((m) => m.content.text)).toEqual(['hello']);
    const recorded = w.ofType('inbound_message', 'wamid.in-c');
    expect(recorded.length).toBeGreaterThanOrEqual(1);
    expect(new Set(recorded.map((e) => e.id)).size).toBe(1);
  });
});

describe('message.sent: a keyed send that stops after the network took it', () => {
  it('the retry with the same Idempotency-Key finishes it: no second send, one message, its event recorded', async () => {
    const w = await world();
    // The customer wrote, so free-form text may be sent.
    await w.deliver(w.inboundWebhook('wamid.in-d', 'help?'));
    // The in-flight record is stored, the request leaves, the write of its outcome fails.
    w.actorStore().passSaves = 1;
    w.actorStore().failSaves = 1;
    const req = { channelId: w.channel.id, to: CUSTOMER, text: { body: 'On its way' } };
    await expect(w.service.sendText(w.principal, req, 'key-1')).rejects.toMatchObject({ status: 503 });
    expect(w.network.sends).toBe(1);
    await w.restart();
    const retry = await w.service.sendText(w.principal, req, 'key-1');
    expect(retry).toEqual({ success: true, messageId: 'wamid.test-1' });
    expect(w.network.sends).toBe(1);
    const stored = (await w.messages.repo.getByNetworkId(ORG, 'wamid.test-1'))!;
    expect((await w.messages.repo.listSession(ORG, stored.sessionId))!.map((m) => m.content.text)).toEqual(['help?', 'On its way']);
    expect(w.ofType('message.sent', 'wamid.test-1')).toHaveLength(1);
    // Answered from the remembered key from now on.
    expect(await w.service.sendText(w.principal, req, 'key-1')).toEqual(retry);
    // Another key is another send.
    expect(await w.service.sendText(w.principal, req, 'key-2')).toEqual({ success: true, messageId: 'wamid.test-2' });
    expect(w.network.sends).toBe(2);
  });
});

describe('credits of keyed template sends that are retried', () => {
  it('refused before the network: released, and the retry with the same key is charged once and sent', async () => {
    const w = await world();
    await w.credits.topUp(ORG, 10);
    w.channelFaults.missing = 1;
    await expect(w.service.sendTemplate(w.principal, w.template(), 'retry-1')).rejects.toMatchObject({ status: 404, code: 'channel_not_found' });
    expect(await w.credits.balance(ORG)).toBe(10);
    expect(w.network.sends).toBe(0);
    // Not a free send: the retry is a new attempt and pays.
    expect(await w.service.sendTemplate(w.principal, w.template(), 'retry-1')).toMatchObject({ success: true, messageId: 'wamid.test-1' });
    expect(await w.credits.balance(ORG)).toBe(8);
    expect(await w.service.sendTemplate(w.principal, w.template(), 'retry-1')).toMatchObject({ messageId: 'wamid.test-1' });
    expect(await w.credits.balance(ORG)).toBe(8);
    expect(w.network.sends).toBe(1);
  });

  it('rejected by the network: 502, and a retry answered from the key charges nothing', async () => {
    const w = await world();
    await w.credits.topUp(ORG, 10);
    w.network.reject = 1;
    for (let i = 0; i < 3; i++) {
      await expect(w.service.sendTemplate(w.principal, w.template(), 'rejected-1')).rejects.toMatchObject({ status: 502, code: 'network_rejected' });
      expect(await w.credits.balance(ORG)).toBe(10);
    }
    expect(w.network.sends).toBe(1);
  });

  it('sent, then reported failed: refunded once, and a retry of the send is answered without a new charge', async () => {
    const w = await world();
    await w.credits.topUp(ORG, 10);
    const sent = await w.service.sendTemplate(w.principal, w.template(), 'failed-1');
    expect(await w.credits.balance(ORG)).toBe(8);
    await w.deliver(w.envelope({ statuses: [{ id: sent.messageId, status: 'failed', timestamp: '1893456000', recipient_id: CUSTOMER, errors: [{ code: 131026 }] }] }));
    expect(await w.credits.balance(ORG)).toBe(10);
    expect(await w.service.sendTemplate(w.principal, w.template(), 'failed-1')).toEqual(sent);
    expect(await w.credits.balance(ORG)).toBe(10);
    expect(w.network.sends).toBe(1);
  });
});
