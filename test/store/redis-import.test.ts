import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyRecord, Contact, Organization, Ticket, User } from '../../src/domain/types.js';
import type { DomainEvent } from '../../src/domain/events.js';
import type { ToolRecord } from '../../src/domain/tools.js';
import { connectRedis, createPostgresStore, createPostgresResourceStore, createPostgresWebhookStore, orgKeys, PgDb, NODE_PG_MIGRATIONS, type RedisClient, type Resource, type WebhookDelivery, type WebhookRegistration } from '../../src/store/index.js';
import { importRedisRecords, redisImportSource, verifyRedisImport, type ImportCount, type RedisImportSource } from '../../src/store/redis-import/index.js';
import { createPostgresToolRepo } from '../../src/store/tools/postgres.js';
import { sealCredentials } from '../../src/store/tools/port.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { main } from '../../src/cli/admin.js';
import { createPostgresChannelRepo } from '../../src/store/channels/postgres.js';
import { createPostgresTemplateRepo } from '../../src/store/templates/postgres.js';
import { createPostgresCreditRepo } from '../../src/store/credits/postgres.js';
import { createPostgresSessionMessageRepo } from '../../src/store/session-messages/postgres.js';
import { createPostgresSearchIndex } from '../../src/store/search/postgres.js';
import { createPostgresConversationIndex } from '../../src/store/conversations/postgres.js';
import type { ConversationRecord } from '../../src/domain/conversation.js';
import { startPostgres, startRedis, type PostgresProcess, type ServerProcess } from '../harness/servers.js';

/*
 * A deployment's Redis as the old clustered layout left it (every record in
 * Redis), written key by key as the old adapters' scripts wrote them; then
 * copied into a fresh PostgreSQL schema and read back through the
 * PostgreSQL stores.
 */

let redis: ServerProcess;
let pg: PostgresProcess;
const clients: RedisClient[] = [];
const dbs: PgDb[] = [];
beforeAll(async () => {
  [redis, pg] = await Promise.all([startRedis(), startPostgres()]);
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(dbs.map((d) => d.close().catch(() => {})));
  await Promise.all([redis?.stop(), pg?.stop()]);
});

async function setup() {
  const client = await connectRedis(redis.url);
  clients.push(client);
  const id = randomUUID().replace(/-/g, '').slice(0, 10);
  const prefix = `t${id}`;
  const schema = `s_${id}`;
  const db = await PgDb.open(pg.url, { migrations: NODE_PG_MIGRATIONS, schema, poolSize: 4 });
  dbs.push(db);
  const src: RedisImportSource = redisImportSource({ client, target: { kind: 'single', url: redis.url }, close: async () => {} }, prefix);
  return { client, prefix, schema, db, src };
}

const box = new SecretBox(randomBytes(32));
const at = (min: number) => new Date(Date.UTC(2026, 10, 20, 9, min)).toISOString();

type Client = Awaited<ReturnType<typeof connectRedis>>;

/** What the old adapters wrote for two organizations; returns the records written, to compare with. */
async function writeOldLayout(c: Client, p: string) {
  const orgs: Organization[] = [
    { id: 'org_a', name: 'Acme', createdAt: at(0) },
    { id: 'org_b', name: 'Bolt', createdAt: at(1) },
  ];
  for (const o of orgs) {
    await c.set(`${p}:org:${o.id}`, JSON.stringify(o));
    await c.sAdd(`${p}:orgs`, o.id);
  }
  const ka = orgKeys(p, 'org_a');
  const kb = orgKeys(p, 'org_b');
  const users: User[] = [
    { id: 'usr_1', organizationId: 'org_a', email: 'Ann@acme.test', name: 'Ann', role: 'admin', passwordHash: 'scrypt$x', createdAt: at(2) },
    { id: 'usr_2', organizationId: 'org_a', email: 'bob@acme.test', name: 'Bob', role: 'agent', passwordHash: 'scrypt$y', createdAt: at(3), active: false },
    { id: 'usr_3', organizationId: 'org_b', email: 'ann@acme.test', name: 'Ann B', role: 'admin', passwordHash: 'scrypt$z', createdAt: at(4) },
  ];
  for (const u of users) {
    const k = orgKeys(p, u.organizationId);
    await c.sAdd(`${p}:user-email:${u.email.toLowerCase()}`, `${u.organizationId}/${u.id}`);
    await c.hSet(k('users'), u.email.toLowerCase(), u.id);
    await c.set(k('user', u.id), JSON.stringify(u));
  }
  const hash = (s: string) => createHash('sha256').update(s).digest('hex');
  const keys: ApiKeyRecord[] = [
    { id: 'key_1', organizationId: 'org_a', userId: 'usr_1', name: 'bot', hash: hash('org_one'), prefix: 'org_one', scopes: ['tickets:read'], createdAt: at(5), revokedAt: null, lastUsedAt: at(30) },
    { id: 'key_2', organizationId: 'org_a', userId: 'usr_1', name: 'old', hash: hash('org_two'), prefix: 'org_two', scopes: ['tickets:read', 'tickets:create'], createdAt: at(6), revokedAt: at(7), lastUsedAt: null },
    { id: 'key_3', organizationId: 'org_b', userId: 'usr_3', name: 'b', hash: hash('org_three'), prefix: 'org_thr', scopes: ['tickets:read'], createdAt: at(8), revokedAt: null, lastUsedAt: null },
  ];
  for (const k of keys) {
    await c.hSet(orgKeys(p, k.organizationId)('apikeys'), k.id, k.hash);
    await c.set(`${p}:apikey:${k.hash}`, JSON.stringify(k));
  }
  const contacts: Contact[] = [
    { id: 'ct_1', organizationId: 'org_a', audienceExternalId: '15550001:pn1', name: 'Zoë', createdAt: at(9) },
    { id: 'ct_2', organizationId: 'org_a', audienceExternalId: '15550002:pn1', name: null, createdAt: at(10) },
    { id: 'ct_3', organizationId: 'org_b', audienceExternalId: '15550003:pn9', name: 'Carl', createdAt: at(11) },
  ];
  for (const ct of contacts) {
    const k = orgKeys(p, ct.organizationId);
    await c.set(k('contact', ct.audienceExternalId), JSON.stringify(ct));
    await c.hSet(k('contact-ids'), ct.id, ct.audienceExternalId);
  }
  // Tickets as createTicketScript / updateTicketScript left them: the record with seq and version, its sets, its event.
  const tickets: Ticket[] = [];
  const statuses = ['open', 'in_progress', 'open', 'resolved', 'closed'] as const;
  const writeTicket = async (org: string, n: number, status: Ticket['status'], extra: Partial<Ticket> = {}) => {
    const k = orgKeys(p, org);
    const seq = Number(await c.incr(k('ticket-seq')));
    const t: Ticket = {
      _id: `tk_${org}_${n}`,
      ticketId: `T-261120-${String(seq).padStart(6, '0')}`,
      title: `Ticket ${n}`,
      description: `About thing ${n}`,
      status,
      priority: n % 2 === 0 ? 'high' : 'low',
      assigneeId: n === 2 ? 'usr_2' : null,
      audienceId: n === 1 ? 'ct_1' : null,
      audienceExternalId: n === 1 ? '15550001:pn1' : null,
      organizationId: org,
      resolutionDate: status === 'resolved' ? at(40) : null,
      createdBy: { kind: 'api_key', userId: 'usr_1', keyId: 'key_1', keyName: 'bot' },
      createdAt: at(12 + n),
      updatedAt: at(12 + n),
      ...extra,
    };
    await c.set(k('ticket', t.ticketId), JSON.stringify({ ...t, seq, version: status === 'open' ? 1 : 2 }));
    for (const set of [k('tix'), k('tix', 's', t.status), k('tix', 'p', t.priority), k('tix', 'a', t.assigneeId ?? '-')]) await c.zAdd(set, { score: seq, value: t.ticketId });
    if (t.audienceId !== null) await c.zAdd(k('tix', 'c', t.audienceId), { score: seq, value: t.ticketId });
    tickets.push(t);
    return t;
  };
  for (let n = 0; n < 5; n++) await writeTicket('org_a', n, statuses[n]!);
  // A ticket record written before createdBy existed.
  await writeTicket('org_b', 0, 'open', { createdBy: undefined as unknown as null });
  // A sequence drawn by a create that died before its script: the next ticket must not reuse it.
  await c.incr(kb('ticket-seq'));
  await c.set(ka('ticket-idem', 'idem-1'), JSON.stringify({ f: 'fp-1', t: tickets[4]!.ticketId }), { PX: 3_600_000 });
  const event: DomainEvent = { id: 'evt_1', type: 'ticket.updated', organizationId: 'org_a', createdAt: at(41), data: tickets[4] };
  await c.rPush(ka('outbox'), JSON.stringify(event));
  await c.sAdd(`${p}:outbox-orgs`, 'org_a');
  await c.set(`${p}:meta:operator-token-hash`, 'abc123');
  await c.set(`${p}:meta:user-email-index-v1`, at(0));

  const reg: WebhookRegistration = {
    id: 'wh_1',
    organizationId: 'org_a',
    url: 'https://hooks.acme.test/in',
    events: ['*'],
    secret: 'sealed:whsec_x',
    previousSecret: null,
    status: 'active',
    disabledReason: null,
    createdAt: at(20),
    updatedAt: at(20),
  };
  await c.hSetNX(ka('wh', 'urls'), reg.url, reg.id);
  await c.set(ka('wh', 'reg', reg.id), JSON.stringify(reg));
  await c.sAdd(ka('wh', 'regs'), reg.id);
  const deliveries: WebhookDelivery[] = [0, 1].map((i) => ({
    id: `dlv_${i}`,
    organizationId: 'org_a',
    registrationId: reg.id,
    eventId: `evt_${i}`,
    eventType: 'ticket.created',
    payload: `{"id":"evt_${i}"}`,
    status: i === 0 ? 'succeeded' : 'pending',
    attempts: i === 0 ? [{ at: at(21), statusCode: 200, durationMs: 12, error: null } as unknown as WebhookDelivery['attempts'][number]] : [],
    attemptCount: i === 0 ? 1 : 0,
    nextAttemptAt: i === 0 ? null : at(50),
    retryUntil: at(59),
    createdAt: at(21 + i),
    updatedAt: at(21 + i),
  }));
  for (const d of deliveries) {
    const dl = ka('wh', 'dlvs', reg.id);
    await c.set(ka('wh', 'dlv', d.id), JSON.stringify(d));
    await c.zAdd(dl, { score: Date.parse(d.createdAt), value: d.id });
    await c.zAdd(`${dl}:${d.status}`, { score: Date.parse(d.createdAt), value: d.id });
    if (d.status === 'pending') await c.zAdd(ka('wh', 'due', reg.id), { score: Date.parse(d.nextAttemptAt!), value: d.id });
  }
  await c.zAdd(`${p}:wh:lanes`, { score: Date.parse(at(50)), value: 'org_a/wh_1' });

  const resource: Resource = { id: 'rs_1', organizationId: 'org_a', name: 'Price List', type: 'document', config: { url: 'https://acme.test/p.pdf' }, createdAt: at(25), updatedAt: at(26), version: 2 };
  await c.hSetNX(ka('res', 'names'), 'price list', resource.id);
  await c.set(ka('res', resource.id), JSON.stringify(resource));
  await c.zAdd(ka('res', 'ids'), { score: Date.parse(resource.createdAt), value: resource.id });

  const tool: ToolRecord = {
    id: 'tool_1',
    organizationId: 'org_b',
    integration: 'payment',
    name: 'Payments',
    status: 'active',
    statusReason: null,
    provider: 'sandbox',
    account: 'Bolt Ltd',
    returnUrl: null,
    createdByKeyId: 'key_3',
    createdAt: at(27),
    updatedAt: at(27),
    lastUsedAt: at(28),
  };
  const creds = { kind: 'api_key' as const, apiKey: 'sk_test_1', webhookSecret: null, webhookEndpointId: null, returnUrl: null, merchantName: null };
  await c.zAdd(kb('tools'), { score: Date.parse(tool.createdAt), value: tool.id });
  await c.set(`${p}:{t:${tool.id}}:tool`, JSON.stringify(tool));
  await c.set(`${p}:{t:${tool.id}}:tool-cred`, JSON.stringify(sealCredentials(box, tool.id, creds)));
  await c.hSet(`${p}:{t:${tool.id}}:tool-pay`, 'evt_p1', JSON.stringify({ paymentId: 'pay_1', status: 'paid', eventId: 'evt_p1', at: at(29) }));
  await c.sAdd(`${p}:tool-return-origins`, 'https://app.bolt.test');
  // Messaging: a web chat channel, a template, credits with their ledger, a session with two messages, the inbox index.
  const channel = { id: 'ch_1', organizationId: 'org_a', kind: 'web_chat' as const, name: 'Site chat', allowedOrigins: ['https://acme.test'], createdAt: at(30) };
  await c.set(`${p}:channel:${channel.id}`, JSON.stringify(channel));
  await c.zAdd(ka('channels'), { score: Date.parse(channel.createdAt), value: channel.id });
  const template = { organizationId: 'org_a', channelId: 'ch_1', name: 'welcome', language: 'en', source: 'operator', category: 'UTILITY', status: 'APPROVED', components: [] };
  await c.hSet(ka('templates', 'ch_1'), 'welcome\u0000en', JSON.stringify(template));
  await c.set(ka('credits'), '70');
  const ledger = [
    { ms: Date.parse(at(31)), kind: 'top_up', amount: 100, balance: 100, reference: 'op-1' },
    { ms: Date.parse(at(32)), kind: 'charge', amount: -30, balance: 70, reference: 'res_1' },
  ];
  for (const e of ledger) await c.lPush(ka('credit-ledger'), JSON.stringify(e));
  await c.set(ka('credit-res', 'res_1'), 'reserved:30', { PX: 3_600_000 });
  await c.set(ka('credit-topup', 'op-1'), '1', { PX: 3_600_000 });
  const session = { sessionId: 'ses_1', organizationId: 'org_a', audienceExternalId: '15550001:pn1', openedAt: at(33) };
  await c.set(ka('session', 'ses_1'), JSON.stringify(session));
  await c.zAdd(ka('contact-sessions', '15550001:pn1'), { score: Date.parse(at(33)), value: 'ses_1' });
  const messages = [0, 1].map((i) => ({
    _id: `msg_${i}`,
    sessionId: 'ses_1',
    organizationId: 'org_a',
    audienceExternalId: '15550001:pn1',
    sender: i === 0 ? 'contact' : 'bot',
    content: { type: 'text', text: i === 0 ? 'Hello there' : 'Hi!' },
    sentAt: at(34 + i),
    messageId: `wamid.${i}`,
    ...(i === 1 ? { status: 'delivered', statusUpdatedAt: at(36) } : {}),
  }));
  for (const m of messages) {
    await c.set(ka('smsg', m._id), JSON.stringify(m));
    await c.set(ka('smsg-net', m.messageId), `${m._id}\n${m.audienceExternalId}`);
    await c.rPush(ka('session-msgs', 'ses_1'), m._id);
  }
  const conversation: ConversationRecord = {
    organizationId: 'org_a',
    audienceExternalId: '15550001:pn1',
    contactId: 'ct_1',
    status: 'queued',
    assigneeId: null,
    queuedAt: at(35),
    assignedAt: null,
    sessionId: 'ses_1',
    sessionStatus: 'open',
    lastInboundAt: at(34),
    inboundCount: 1,
    updatedAt: at(35),
    version: 3,
  };
  await c.set(ka('conv', conversation.audienceExternalId), JSON.stringify(conversation));
  await c.hSet(ka('conv-seen', 'usr_1'), conversation.audienceExternalId, JSON.stringify({ sessionId: 'ses_1', inboundSeen: 1 }));
  // What stays in Redis and is not copied: a sign-in session, an OAuth state in flight.
  await c.set(`${p}:session:abc`, '{}', { PX: 60_000 });
  await c.set(`${p}:tool-state:st1`, '{}', { PX: 60_000 });
  return { orgs, users, keys, contacts, tickets, event, reg, deliveries, resource, tool, creds, channel, template, session, messages, conversation };
}

const byTable = (counts: ImportCount[]) => Object.fromEntries(counts.map((c) => [c.table, c]));

describe('storage import-redis', () => {
  it('copies every record of the old layout, and the PostgreSQL stores read them back as the Redis stores served them', async () => {
    const { client, prefix, db, src } = await setup();
    const old = await writeOldLayout(client, prefix);
    const keysBefore = (await client.keys(`${prefix}:*`)).sort();

    const counts = byTable(await importRedisRecords(src, db));
    expect(counts.organizations).toMatchObject({ read: 2, inserted: 2 });
    expect(counts.users).toMatchObject({ read: 3, inserted: 3 });
    expect(counts.api_keys).toMatchObject({ read: 3, inserted: 3 });
    expect(counts.contacts).toMatchObject({ read: 3, inserted: 3 });
    expect(counts.tickets).toMatchObject({ read: 6, inserted: 6 });
    expect(counts.ticket_idempotency).toMatchObject({ read: 1, inserted: 1 });
    expect(counts.outbox).toMatchObject({ read: 1, inserted: 1 });
    expect(counts['records (meta)']).toMatchObject({ read: 2, inserted: 2 });
    expect(counts.webhook_registrations).toMatchObject({ read: 1, inserted: 1 });
    expect(counts.webhook_deliveries).toMatchObject({ read: 2, inserted: 2 });
    expect(counts.resources).toMatchObject({ read: 1, inserted: 1 });
    expect(counts.tools).toMatchObject({ read: 1, inserted: 1 });
    expect(counts.tool_credentials).toMatchObject({ read: 1, inserted: 1 });
    expect(counts.tool_payment_events).toMatchObject({ read: 1, inserted: 1 });
    expect(counts['records (toolReturnOrigins)']).toMatchObject({ read: 1, inserted: 1 });
    // The import only reads Redis.
    expect((await client.keys(`${prefix}:*`)).sort()).toEqual(keysBefore);

    const store = createPostgresStore(db, client, { prefix });
    expect(await store.organizations.list()).toEqual(old.orgs);
    expect(await store.users.list('org_a')).toEqual(old.users.slice(0, 2));
    expect((await store.users.findByEmail('ANN@acme.test')).map((u) => u.id)).toEqual(['usr_1', 'usr_3']);
    expect(await store.apiKeys.getByHash(old.keys[1]!.hash)).toEqual(old.keys[1]);
    expect(await store.apiKeys.list('org_a')).toEqual(old.keys.slice(0, 2));
    expect(await store.contacts.getById('org_a', 'ct_1')).toEqual(old.contacts[0]);
    expect(await store.contacts.get('org_b', '15550003:pn9')).toEqual(old.contacts[2]);

    const page = await store.tickets.list({ organizationId: 'org_a', offset: 0, limit: 3 });
    expect(page.total).toBe(5);
    expect(page.tickets).toEqual(old.tickets.slice(2, 5).reverse());
    expect((await store.tickets.list({ organizationId: 'org_a', status: 'open', offset: 0, limit: 10 })).total).toBe(2);
    expect((await store.tickets.list({ organizationId: 'org_a', status: 'closed', offset: 0, limit: 10 })).total).toBe(1);
    expect((await store.tickets.list({ organizationId: 'org_a', priority: 'high', offset: 0, limit: 10 })).total).toBe(3);
    expect((await store.tickets.list({ organizationId: 'org_a', visibleToAgent: 'usr_1', offset: 0, limit: 10 })).total).toBe(4);
    expect((await store.tickets.get('org_b', 'T-261120-000001'))?.createdBy).toBeNull();
    // A retried create with the same key gets the same ticket; new tickets continue each organization's sequence.
    const stamp = { id: randomUUID(), type: 'ticket.created' as const, createdAt: at(45) };
    const again = await store.tickets.createOnce({ ...old.tickets[0]!, organizationId: 'org_a' }, stamp, { key: 'idem-1', fingerprint: 'fp-1', ttlMs: 60_000 });
    expect(again).toEqual({ outcome: 'replayed', ticket: old.tickets[4] });
    const { ticketId: _a, ...fresh } = old.tickets[0]!;
    expect((await store.tickets.create({ ...fresh, createdAt: at(46) }, { ...stamp, id: randomUUID() })).ticketId).toBe('T-261120-000006');
    expect((await store.tickets.create({ ...fresh, organizationId: 'org_b', createdAt: at(46) }, { ...stamp, id: randomUUID() })).ticketId).toBe('T-261120-000003');
    expect((await store.outbox.peek('org_a', 1))[0]?.event).toEqual(old.event);
    expect(await store.meta.get('operator-token-hash')).toBe('abc123');

    const webhooks = createPostgresWebhookStore(db, client, { prefix });
    expect(await webhooks.listRegistrations('org_a')).toEqual([old.reg]);
    expect(await webhooks.listDeliveries('org_a', 'wh_1', { offset: 0, limit: 10 })).toEqual({ deliveries: [...old.deliveries].reverse(), total: 2 });
    expect((await webhooks.listDeliveries('org_a', 'wh_1', { status: 'pending', offset: 0, limit: 10 })).total).toBe(1);
    expect(await webhooks.dueDeliveries({ organizationId: 'org_a', registrationId: 'wh_1' }, Date.parse(at(55)), 10)).toEqual(['dlv_1']);
    expect(await createPostgresResourceStore(db).list('org_a', { offset: 0, limit: 10 })).toEqual({ resources: [old.resource], total: 1 });
    const tools = createPostgresToolRepo(db, client, prefix, box);
    expect(await tools.list('org_b')).toEqual([old.tool]);
    expect(await tools.getCredentials('tool_1')).toEqual(old.creds);
    expect(await tools.paymentEvents('tool_1', 'pay_1')).toEqual([{ paymentId: 'pay_1', status: 'paid', eventId: 'evt_p1', at: at(29) }]);
    expect(await tools.returnOrigins()).toEqual(['https://app.bolt.test']);

    expect(await createPostgresChannelRepo(db, null).get('org_a', 'ch_1')).toEqual(old.channel);
    expect(await createPostgresTemplateRepo(db).list('org_a', 'ch_1')).toEqual([old.template]);
    const credits = createPostgresCreditRepo(db, { now: () => Date.now() } as never);
    expect(await credits.balance('org_a')).toBe(70);
    expect((await credits.history('org_a', 10)).map((e) => [e.kind, e.amount, e.balance, e.reference])).toEqual([
      ['charge', -30, 70, 'res_1'],
      ['top_up', 100, 100, 'op-1'],
    ]);
    expect(await credits.reserve('org_a', 'res_1', 30)).toEqual({ ok: true, balance: 70 });
    expect(await credits.topUp('org_a', 100, 'op-1')).toEqual({ balance: 70, applied: false });
    expect(await credits.refund('org_a', 'res_1')).toEqual({ refunded: true, balance: 100 });
    const log = createPostgresSessionMessageRepo(db);
    expect(await log.listSession('org_a', 'ses_1')).toEqual(old.messages);
    expect(await log.contactSessions('org_a', '15550001:pn1')).toEqual([old.session]);
    expect((await log.getByNetworkId('org_a', 'wamid.1'))?._id).toBe('msg_1');
    // Copied messages are found by their words, as appended ones are.
    expect((await createPostgresSearchIndex(db).messages('org_a', 'hello', 10)).map((h) => h.messageId)).toEqual(['msg_0']);
    const inbox = createPostgresConversationIndex(db);
    expect(await inbox.get('org_a', '15550001:pn1')).toEqual(old.conversation);
    expect((await inbox.list({ organizationId: 'org_a', status: 'queued', offset: 0, limit: 10 } as never)).conversations).toEqual([old.conversation]);
  });

  it('copies nothing on a second run; after more traffic, only what is new or changed; verification passes', async () => {
    const { client, prefix, db, src } = await setup();
    const old = await writeOldLayout(client, prefix);
    await importRedisRecords(src, db);

    const second = await importRedisRecords(src, db);
    for (const c of second) expect({ table: c.table, inserted: c.inserted, updated: c.updated, refused: c.refused }).toEqual({ table: c.table, inserted: 0, updated: 0, refused: 0 });
    expect(byTable(second).tickets!.unchanged).toBe(6);

    // More traffic on the old nodes: a ticket closed, a new one, a key revoked, the outbox relayed.
    const ka = orgKeys(prefix, 'org_a');
    const t0 = old.tickets[0]!;
    const closed = { ...t0, status: 'closed' as const, updatedAt: at(50) };
    await client.set(ka('ticket', t0.ticketId), JSON.stringify({ ...closed, seq: 1, version: 2 }));
    await client.zRem(ka('tix', 's', 'open'), t0.ticketId);
    await client.zAdd(ka('tix', 's', 'closed'), { score: 1, value: t0.ticketId });
    const seq = Number(await client.incr(ka('ticket-seq')));
    const t6 = { ...t0, _id: 'tk_new', ticketId: `T-261120-00000${seq}`, createdAt: at(51), updatedAt: at(51) };
    await client.set(ka('ticket', t6.ticketId), JSON.stringify({ ...t6, seq, version: 1 }));
    await client.zAdd(ka('tix'), { score: seq, value: t6.ticketId });
    await client.zAdd(ka('tix', 's', 'open'), { score: seq, value: t6.ticketId });
    const k0 = old.keys[0]!;
    await client.set(`${prefix}:apikey:${k0.hash}`, JSON.stringify({ ...k0, revokedAt: at(52) }));
    await client.lRem(ka('outbox'), 1, JSON.stringify(old.event));

    const before = await verifyRedisImport(src, db);
    expect(before.tables.find((t) => t.table === 'outbox')?.extra).toBe(1);
    expect(before.mismatches).toContainEqual({ table: 'api_keys', key: [k0.hash], problem: 'different' });

    const third = byTable(await importRedisRecords(src, db, { removeMissing: true }));
    expect(third.tickets).toMatchObject({ read: 6 + 1, inserted: 1, updated: 1, unchanged: 5 });
    expect(third.api_keys).toMatchObject({ inserted: 0, updated: 1 });
    expect(third.outbox).toMatchObject({ read: 0, removed: 1 });
    expect(third.users).toMatchObject({ inserted: 0, updated: 0 });

    const verified = await verifyRedisImport(src, db);
    expect(verified.total).toBe(0);
    expect(verified.tables.find((t) => t.table === 'ticket_counts')).toMatchObject({ missing: 0, different: 0 });
    const store = createPostgresStore(db, client, { prefix });
    expect((await store.apiKeys.getByHash(k0.hash))?.revokedAt).toBe(at(52));
    expect((await store.tickets.list({ organizationId: 'org_a', status: 'open', offset: 0, limit: 10 })).total).toBe(2);
    expect((await store.tickets.list({ organizationId: 'org_a', status: 'closed', offset: 0, limit: 10 })).total).toBe(2);
    expect((await store.tickets.list({ organizationId: 'org_a', offset: 0, limit: 1 })).total).toBe(6);
  });

  it('the command reports a count per table, and exits non-zero when verification finds a row that differs', async () => {
    const { client, prefix, schema, db } = await setup();
    await writeOldLayout(client, prefix);
    const env = { DATABASE_URL: pg.url, DATABASE_SCHEMA: schema, REDIS_URL: redis.url, KEY_PREFIX: prefix };
    const run = async (...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(['storage', 'import-redis', ...args], env, (s) => out.push(s), (s) => err.push(s));
      return { code, out: out.join('\n'), err: err.join('\n') };
    };

    const first = await run('--json');
    expect(first.code).toBe(0);
    const report = JSON.parse(first.out) as { imported: ImportCount[]; verification: { total: number } };
    expect(report.imported.find((c) => c.table === 'tickets')).toMatchObject({ read: 6, inserted: 6 });
    expect(report.verification.total).toBe(0);

    const second = await run();
    expect(second.code).toBe(0);
    expect(second.out).toMatch(/tickets\s+6\s+0\s+0\s+6\s+0\s+0/);
    expect(second.out).toContain('Every record is in PostgreSQL as it is in Redis.');

    // A row changed behind the import's back: the verification names it.
    await db.query("UPDATE tickets SET body = jsonb_set(body, '{title}', '\"changed\"') WHERE org = 'org_a' AND seq = 3");
    const checked = await run('--verify-only');
    expect(checked.code).toBe(1);
    expect(checked.out).toMatch(/different\s+tickets\s+org_a 3/);
    expect(checked.out).not.toContain('Copied from Redis');
    const json = JSON.parse((await run('--verify-only', '--json')).out) as { imported: null; verification: { total: number; mismatches: unknown[] } };
    expect(json.imported).toBeNull();
    expect(json.verification.mismatches).toEqual([{ table: 'tickets', key: ['org_a', '3'], problem: 'different' }]);

    // The next run puts Redis's content back.
    expect((await run()).code).toBe(0);
  });
});
