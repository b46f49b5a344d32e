import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChannelRepo, Channel, WhatsAppChannel } from '../../src/store/channels/port.js';
import type { TemplateRecord, TemplateRepo } from '../../src/store/templates/port.js';
import { CREDIT_LEDGER_SIZE, type CreditRepo } from '../../src/store/credits/port.js';
import type { RateLimiter } from '../../src/store/ratelimit/port.js';
import type { SessionMessageRepo } from '../../src/store/session-messages/port.js';
import type { SessionMessage } from '../../src/domain/messages.js';
import { shapeFromDefinition } from '../../src/network/template-rules.js';
import { MESSAGE_STATUSES, nextStatus, type MessageStatus } from '../../src/domain/message-status.js';

/** What one adapter family provides to the suite. */
export interface MessagingStoresUnderTest {
  channels: ChannelRepo;
  templates: TemplateRepo;
  credits: CreditRepo;
  rateLimiter: RateLimiter;
  messages: SessionMessageRepo;
  /** A second limiter on the same backing store (another node). */
  otherNodeRateLimiter(): RateLimiter;
  /** The message log as another node (its own connection) sees it. */
  otherNodeMessages(): SessionMessageRepo;
  /** Everything stored, as raw text (to check secrets are not in it). */
  rawDump(): Promise<string>;
  close(): Promise<void>;
}

const now = () => new Date().toISOString();

export function waChannel(org: string, over: Partial<WhatsAppChannel> = {}): WhatsAppChannel {
  return {
    id: `ch_${randomUUID().slice(0, 12)}`,
    organizationId: org,
    name: 'Support line',
    kind: 'whatsapp_cloud',
    network: 'sandbox',
    phoneNumberId: String(100000000000000 + Math.floor(Math.random() * 1e14)),
    businessAccountId: '200000000000001',
    displayPhoneNumber: '15550001111',
    credentials: { accessToken: `EAAtoken-${randomUUID()}`, appSecret: `secret-${randomUUID()}`, verifyToken: `verify-${randomUUID()}` },
    createdAt: now(),
    updatedAt: now(),
    ...over,
  };
}

/** An approved template record with one body variable. */
export function template(org: string, channelId: string, name: string, language: string, over: Partial<TemplateRecord> = {}): TemplateRecord {
  const components = [{ type: 'BODY', text: 'Hello {{1}}' }];
  return {
    organizationId: org,
    channelId,
    name,
    language,
    category: 'UTILITY',
    status: 'APPROVED',
    components,
    shape: shapeFromDefinition(components),
    networkTemplateId: null,
    source: 'network',
    updatedAt: now(),
    ...over,
  };
}

export function runMessagingStoreContract(name: string, create: () => Promise<MessagingStoresUnderTest>): void {
  describe(`messaging stores contract: ${name}`, () => {
    let s: MessagingStoresUnderTest;
    beforeEach(async () => {
      s = await create();
    });
    afterEach(async () => {
      await s.close();
    });

    describe('channels', () => {
      it('creates, gets, lists and deletes channels of one organization only', async () => {
        const a = waChannel('orgA');
        const web: Channel = { id: 'ch_web1', organizationId: 'orgA', name: 'Site', kind: 'web_chat', allowedOrigins: ['https://a.example'], createdAt: now(), updatedAt: now() };
        await s.channels.create(a);
        await s.channels.create(web);
        expect(await s.channels.get('orgA', a.id)).toEqual(a);
        expect(await s.channels.get('orgB', a.id)).toBeNull();
        expect(await s.channels.getGlobal(a.id)).toEqual(a);
        expect((await s.channels.list('orgA')).map((c) => c.id).sort()).toEqual([a.id, web.id].sort());
        expect(await s.channels.list('orgB')).toEqual([]);
        expect(await s.channels.getByPhoneNumberId(a.phoneNumberId)).toEqual(a);
        expect(await s.channels.delete('orgB', a.id)).toBe(false);
        expect(await s.channels.delete('orgA', a.id)).toBe(true);
        expect(await s.channels.get('orgA', a.id)).toBeNull();
        expect(await s.channels.getByPhoneNumberId(a.phoneNumberId)).toBeNull();
      });

      it('gives a phone number id to one channel only, across organizations', async () => {
        const a = waChannel('orgA');
        await s.channels.create(a);
        await expect(s.channels.create(waChannel('orgB', { phoneNumberId: a.phoneNumberId }))).rejects.toMatchObject({ status: 409, code: 'phone_number_in_use' });
        const races = await Promise.allSettled([1, 2, 3, 4].map(() => s.channels.create(waChannel('orgC', { phoneNumberId: '999000111' }))));
        expect(races.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      });

      it('keeps credentials encrypted at rest and updates them', async () => {
        const a = waChannel('orgA');
        await s.channels.create(a);
        const dump = await s.rawDump();
        expect(dump).toContain(a.phoneNumberId);
        expect(dump).not.toContain(a.credentials.accessToken);
        expect(dump).not.toContain(a.credentials.appSecret);
        expect(dump).not.toContain(a.credentials.verifyToken);
        const rotated = { ...a, credentials: { ...a.credentials, accessToken: 'EAAnew' } };
        await s.channels.update(rotated);
        expect((await s.channels.get('orgA', a.id)) as WhatsAppChannel).toMatchObject({ credentials: { accessToken: 'EAAnew' } });
        // Another organization cannot overwrite it.
        await s.channels.update({ ...rotated, organizationId: 'orgB', credentials: { ...a.credentials, accessToken: 'EAAevil' } });
        expect((await s.channels.get('orgA', a.id)) as WhatsAppChannel).toMatchObject({ credentials: { accessToken: 'EAAnew' } });
      });
    });

    describe('templates', () => {
      it('stores templates per channel and organization, sorted', async () => {
        await s.templates.put(template('orgA', 'ch1', 'order_update', 'en_US'));
        await s.templates.put(template('orgA', 'ch1', 'hello_world', 'en_US'));
        await s.templates.put(template('orgA', 'ch1', 'hello_world', 'de'));
        await s.templates.put(template('orgB', 'ch1', 'secret_template', 'en_US'));
        const list = await s.templates.list('orgA', 'ch1');
        expect(list.map((t) => `${t.name}/${t.language}`)).toEqual(['hello_world/de', 'hello_world/en_US', 'order_update/en_US']);
        expect(await s.templates.get('orgA', 'ch1', 'secret_template', 'en_US')).toBeNull();
        expect(await s.templates.get('orgA', 'ch1', 'hello_world', 'de')).toMatchObject({ name: 'hello_world', language: 'de' });
        expect(await s.templates.delete('orgA', 'ch1', 'hello_world', 'de')).toBe(true);
        expect(await s.templates.delete('orgA', 'ch1', 'hello_world', 'de')).toBe(false);
      });

      it('sync replaces network templates, keeps operator entries', async () => {
        await s.templates.put(template('orgA', 'ch1', 'gone', 'en_US'));
        await s.templates.put(template('orgA', 'ch1', 'manual', 'en_US', { source: 'operator' }));
        await s.templates.put(template('orgA', 'ch1', 'both', 'en_US', { source: 'operator', status: 'PENDING' }));
        const r = await s.templates.replaceFromNetwork('orgA', 'ch1', [template('orgA', 'ch1', 'both', 'en_US'), template('orgA', 'ch1', 'fresh', 'en_US')]);
        expect(r.removed).toBe(1);
        const list = await s.templates.list('orgA', 'ch1');
        expect(list.map((t) => `${t.name}:${t.source}:${t.status}`)).toEqual(['both:network:APPROVED', 'fresh:network:APPROVED', 'manual:operator:APPROVED']);
        await s.templates.deleteChannel('orgA', 'ch1');
        expect(await s.templates.list('orgA', 'ch1')).toEqual([]);
      });
    });

    describe('credits', () => {
      it('tops up once per operation id and reserves only what the balance covers', async () => {
        expect(await s.credits.balance('orgA')).toBe(0);
        expect(await s.credits.topUp('orgA', 5, 'op1')).toEqual({ balance: 5, applied: true });
        expect(await s.credits.topUp('orgA', 5, 'op1')).toEqual({ balance: 5, applied: false });
        expect(await s.credits.topUp('orgA', 1)).toEqual({ balance: 6, applied: true });
        expect(await s.credits.reserve('orgA', 'r1', 4)).toEqual({ ok: true, balance: 2 });
        expect(await s.credits.reserve('orgA', 'r1', 4)).toEqual({ ok: true, balance: 2 });
        expect(await s.credits.reserve('orgA', 'r2', 3)).toEqual({ ok: false, balance: 2 });
        expect(await s.credits.balance('orgB')).toBe(0);
      });

      it('refunds a reservation once, and never an unknown one', async () => {
        await s.credits.topUp('orgA', 3);
        await s.credits.reserve('orgA', 'r1', 2);
        const refunds = await Promise.all([1, 2, 3, 4, 5].map(() => s.credits.refund('orgA', 'r1')));
        expect(refunds.filter((r) => r.refunded)).toHaveLength(1);
        expect(await s.credits.balance('orgA')).toBe(3);
        expect((await s.credits.refund('orgA', 'nope')).refunded).toBe(false);
        expect((await s.credits.refund('orgB', 'r1')).refunded).toBe(false);
        expect(await s.credits.balance('orgA')).toBe(3);
      });

      it('releases a reservation once and forgets it (a new reserve with the id charges again); a refunded one stays refunded', async () => {
        await s.credits.topUp('orgA', 10);
        await s.credits.reserve('orgA', 'r1', 4);
        const releases = await Promise.all([1, 2, 3].map(() => s.credits.release('orgA', 'r1')));
        expect(releases.filter((r) => r.released)).toHaveLength(1);
        expect(await s.credits.balance('orgA')).toBe(10);
        // The same id again is a new attempt: charged.
        expect(await s.credits.reserve('orgA', 'r1', 4)).toEqual({ ok: true, balance: 6 });
        // Refunded (sent, then failed): remembered, a retry is not charged, and nothing more is given back.
        expect((await s.credits.refund('orgA', 'r1')).refunded).toBe(true);
        expect(await s.credits.reserve('orgA', 'r1', 4)).toEqual({ ok: true, balance: 10 });
        expect((await s.credits.release('orgA', 'r1')).released).toBe(false);
        expect((await s.credits.refund('orgA', 'r1')).refunded).toBe(false);
        expect(await s.credits.balance('orgA')).toBe(10);
        // Released first: a later refund finds nothing to give back.
        await s.credits.reserve('orgA', 'r2', 3);
        await Promise.all([s.credits.release('orgA', 'r2'), s.credits.refund('orgA', 'r2'), s.credits.release('orgA', 'r2')]);
        expect(await s.credits.balance('orgA')).toBe(10);
        expect((await s.credits.release('orgB', 'r2')).released).toBe(false);
      });

      it('keeps a ledger of every change, newest first, with the balance after each and nothing of other organizations', async () => {
        await s.credits.topUp('orgA', 10, 'op1');
        await s.credits.topUp('orgA', 10, 'op1');
        await s.credits.reserve('orgA', 'r1', 4);
        await s.credits.reserve('orgA', 'r1', 4);
        await s.credits.refund('orgA', 'r1');
        await s.credits.reserve('orgA', 'r2', 3);
        await s.credits.release('orgA', 'r2');
        await s.credits.reserve('orgA', 'r3', 50);
        await s.credits.topUp('orgB', 1);
        const h = await s.credits.history('orgA', 100);
        expect(h.map(({ kind, amount, balance, reference }) => ({ kind, amount, balance, reference }))).toEqual([
          { kind: 'release', amount: 3, balance: 10, reference: 'r2' },
          { kind: 'charge', amount: -3, balance: 7, reference: 'r2' },
          { kind: 'refund', amount: 4, balance: 10, reference: 'r1' },
          { kind: 'charge', amount: -4, balance: 6, reference: 'r1' },
          { kind: 'top_up', amount: 10, balance: 10, reference: 'op1' },
        ]);
        for (const e of h) expect(Date.parse(e.at)).not.toBeNaN();
        expect(await s.credits.history('orgA', 2)).toEqual(h.slice(0, 2));
        expect((await s.credits.history('orgB', 10)).map((e) => e.reference)).toEqual([null]);
        expect(await s.credits.history('orgC', 10)).toEqual([]);
      });

      it('a refused reservation leaves no trace (the id can be reserved after a top-up); the ledger shows at most its size', async () => {
        expect(await s.credits.reserve('orgA', 'r1', 5)).toEqual({ ok: false, balance: 0 });
        await s.credits.topUp('orgA', 3);
        expect(await s.credits.reserve('orgA', 'r1', 5)).toEqual({ ok: false, balance: 3 });
        expect(await s.credits.balance('orgA')).toBe(3);
        expect((await s.credits.history('orgA', 10)).map((e) => e.kind)).toEqual(['top_up']);
        await s.credits.topUp('orgA', 2);
        expect(await s.credits.reserve('orgA', 'r1', 5)).toEqual({ ok: true, balance: 0 });
        expect(await s.credits.reserve('orgA', 'r1', 5)).toEqual({ ok: true, balance: 0 });
        expect((await s.credits.history('orgA', 10)).map((e) => [e.kind, e.amount, e.balance])).toEqual([
          ['charge', -5, 0],
          ['top_up', 2, 5],
          ['top_up', 3, 3],
        ]);
        for (let i = 0; i < CREDIT_LEDGER_SIZE + 50; i++) await s.credits.topUp('orgA', 1);
        const all = await s.credits.history('orgA', CREDIT_LEDGER_SIZE * 2);
        expect(all).toHaveLength(CREDIT_LEDGER_SIZE);
        expect(all[0]!.balance).toBe(CREDIT_LEDGER_SIZE + 50);
        expect(all.at(-1)!.balance).toBe(51);
      });

      it('never goes below zero under concurrent reservations', async () => {
        await s.credits.topUp('orgA', 25);
        const results = await Promise.all(Array.from({ length: 100 }, (_, i) => s.credits.reserve('orgA', `c${i}`, 1 + (i % 2))));
        const taken = results.map((r, i) => (r.ok ? 1 + (i % 2) : 0)).reduce((a, b) => a + b, 0);
        const balance = await s.credits.balance('orgA');
        expect(balance).toBeGreaterThanOrEqual(0);
        expect(balance + taken).toBe(25);
        for (const r of results) expect(r.balance).toBeGreaterThanOrEqual(0);
      });

      it('reservations asked together come out as if made one after the other, in the order asked', async () => {
        await s.credits.topUp('orgA', 10, 'op1');
        await s.credits.reserve('orgA', 'held', 1);
        // Asked in one turn: a charge, an id held already, the first id again, one that does not fit, smaller ones that still do.
        const asked: [string, number][] = [
          ['a', 3],
          ['held', 1],
          ['a', 3],
          ['big', 7],
          ['b', 2],
          ['c', 4],
          ['d', 0],
        ];
        const results = await Promise.all(asked.map(([id, amount]) => s.credits.reserve('orgA', id, amount)));
        expect(results).toEqual([
          { ok: true, balance: 6 },
          { ok: true, balance: 6 },
          { ok: true, balance: 6 },
          { ok: false, balance: 6 },
          { ok: true, balance: 4 },
          { ok: true, balance: 0 },
          { ok: true, balance: 0 },
        ]);
        expect(await s.credits.balance('orgA')).toBe(0);
        const h = await s.credits.history('orgA', 10);
        expect(h.map((e) => [e.kind, e.amount, e.balance, e.reference])).toEqual([
          ['charge', 0, 0, 'd'],
          ['charge', -4, 0, 'c'],
          ['charge', -2, 4, 'b'],
          ['charge', -3, 6, 'a'],
          ['charge', -1, 9, 'held'],
          ['top_up', 10, 10, 'op1'],
        ]);
        // Each of them is held: giving one back restores its amount once.
        expect((await s.credits.release('orgA', 'b')).released).toBe(true);
        expect(await s.credits.balance('orgA')).toBe(2);
      });
    });

    describe('session messages', () => {
      const msg = (over: Partial<SessionMessage>): SessionMessage => ({
        _id: `m-${randomUUID()}`,
        sessionId: 's1',
        organizationId: 'orgA',
        channelId: 'ch1',
        audienceExternalId: '4911:pn1',
        direction: 'outbound',
        sender: 'bot',
        content: { type: 'text', text: 'hi' },
        sentAt: now(),
        messageId: `wamid.${randomUUID()}`,
        status: 'accepted',
        ...over,
      });

      it("lists system entries with the messages, and agents' private notes only when asked for", async () => {
        const sid = `tl-${randomUUID()}`;
        const inbound = msg({ sessionId: sid, direction: 'inbound', sender: 'contact', status: undefined, content: { type: 'text', text: 'help' } });
        const entry = msg({ sessionId: sid, direction: 'internal', sender: 'system', status: undefined, messageId: null, content: { type: 'text', text: 'Taken by agent u1' }, system: { event: 'taken', by: { type: 'agent', userId: 'u1' } } });
        const note = msg({ sessionId: sid, direction: 'internal', sender: 'agent', agentId: 'u1', note: true, status: undefined, messageId: null, content: { type: 'text', text: 'private' } });
        for (const m of [inbound, entry, note]) expect(await s.messages.append(m)).toBe(true);
        expect((await s.messages.listSession('orgA', sid))!.map((m) => m.content.text)).toEqual(['help', 'Taken by agent u1']);
        expect(await s.messages.listSession('orgA', sid, { notes: true })).toEqual([inbound, entry, note]);
        expect(await s.messages.listSession('orgB', sid, { notes: true })).toBeNull();
      });

      it('appends in order, once per _id, and lists a session of its organization only', async () => {
        const a = msg({ content: { type: 'template', text: 'first' } });
        const b = msg({ direction: 'inbound', sender: 'contact', status: undefined, content: { type: 'text', text: 'second' } });
        const c = msg({ messageId: null, content: { type: 'text', text: 'third' } });
        expect(await s.messages.append(a)).toBe(true);
        expect(await s.messages.append(b)).toBe(true);
        expect(await s.messages.append(c)).toBe(true);
        expect(await s.messages.append(a)).toBe(false);
        expect((await s.messages.listSession('orgA', 's1'))!.map((m) => m.content.text)).toEqual(['first', 'second', 'third']);
        expect(await s.messages.listSession('orgB', 's1')).toBeNull();
        expect(await s.messages.listSession('orgA', 'nope')).toBeNull();
        expect(await s.messages.getSession('orgA', 's1')).toMatchObject({ sessionId: 's1', audienceExternalId: '4911:pn1' });
        expect(await s.messages.getByNetworkId('orgA', a.messageId!)).toEqual(a);
        expect(await s.messages.getByNetworkId('orgB', a.messageId!)).toBeNull();
      });

      it('locates a message by network id (its _id and contact), on any node; a repeated _id takes no network id', async () => {
        const a = msg({ audienceExternalId: '4915100000001:123' });
        expect(await s.messages.append(a)).toBe(true);
        const where = { _id: a._id, audienceExternalId: '4915100000001:123' };
        expect(await s.messages.locateByNetworkId('orgA', a.messageId!)).toEqual(where);
        expect(await s.otherNodeMessages().locateByNetworkId('orgA', a.messageId!)).toEqual(where);
        expect(await s.messages.locateByNetworkId('orgB', a.messageId!)).toBeNull();
        expect(await s.messages.locateByNetworkId('orgA', 'wamid.none')).toBeNull();
        // A second append under the same _id stores nothing, and its network id is not taken for the first's.
        expect(await s.messages.append({ ...a, messageId: 'wamid.two' })).toBe(false);
        expect(await s.messages.locateByNetworkId('orgA', 'wamid.two')).toBeNull();
        expect(await s.messages.getByNetworkId('orgA', 'wamid.two')).toBeNull();
      });

      it('lists a contact\'s sessions newest first', async () => {
        await s.messages.registerSession({ sessionId: 'old', organizationId: 'orgA', audienceExternalId: 'c:1', openedAt: '2030-01-01T00:00:00.000Z' });
        await s.messages.append(msg({ sessionId: 'new', audienceExternalId: 'c:1', sentAt: '2030-01-02T00:00:00.000Z' }));
        expect((await s.messages.contactSessions('orgA', 'c:1')).map((r) => r.sessionId)).toEqual(['new', 'old']);
        expect(await s.messages.contactSessions('orgB', 'c:1')).toEqual([]);
      });

      it('prunes the oldest messages past the retention, a batch at a time, keeping their sessions and newer messages', async () => {
        const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
        for (const text of ['a', 'b', 'c']) await s.messages.append(msg({ sessionId: 'p1', sentAt: old, content: { type: 'text', text } }));
        // The embedded store goes by the send time, PostgreSQL by when the row was stored (moments later): "before" is just ahead of both.
        const before = new Date(Date.now() + 1000);
        expect(await s.messages.pruneBefore(before, 2)).toBe(2);
        expect((await s.messages.listSession('orgA', 'p1'))!.map((m) => m.content.text)).toEqual(['c']);
        expect(await s.messages.pruneBefore(before, 10)).toBe(1);
        expect(await s.messages.listSession('orgA', 'p1')).toEqual([]);
        await s.messages.append(msg({ sessionId: 'p2', content: { type: 'text', text: 'kept' } }));
        expect(await s.messages.pruneBefore(new Date(Date.now() - 86_400_000), 10)).toBe(0);
        expect((await s.messages.listSession('orgA', 'p2'))!.map((m) => m.content.text)).toEqual(['kept']);
      });

      it('registers empty sessions, once', async () => {
        await s.messages.registerSession({ sessionId: 's2', organizationId: 'orgA', audienceExternalId: 'x:y', openedAt: now() });
        await s.messages.registerSession({ sessionId: 's2', organizationId: 'orgA', audienceExternalId: 'other', openedAt: now() });
        expect(await s.messages.listSession('orgA', 's2')).toEqual([]);
        expect(await s.messages.getSession('orgA', 's2')).toMatchObject({ audienceExternalId: 'x:y' });
        expect(await s.messages.getSession('orgB', 's2')).toBeNull();
      });

      it('gets a message by its _id, in its organization only', async () => {
        const a = msg({ content: { type: 'template', text: 'x', template: { name: 't', language: 'en', components: [] } } });
        await s.messages.append(a);
        expect(await s.messages.get('orgA', a._id)).toEqual(a);
        expect(await s.messages.get('orgB', a._id)).toBeNull();
        expect(await s.messages.get('orgA', 'nope')).toBeNull();
      });

      it('advances a status in place, and only forward, as nextStatus says, for every pair of statuses', async () => {
        for (const from of MESSAGE_STATUSES) {
          for (const to of MESSAGE_STATUSES) {
            const m = msg({ status: from, content: { type: 'interactive', text: 'pick', buttons: [] } });
            await s.messages.append(m);
            const at = new Date(Date.parse('2030-01-01T00:00:00Z') + 1000).toISOString();
            const errors = to === 'failed' ? [{ code: 131026, title: 'Message undeliverable', message: 'x' }] : undefined;
            const r = await s.messages.advanceStatus({ ...m, status: to, statusUpdatedAt: at, ...(errors ? { errors } : {}) });
            const expected = nextStatus(from, to) === to;
            expect({ from, to, ...r }).toEqual({ from, to, applied: expected, status: expected ? to : from });
            const stored = await s.messages.getByNetworkId('orgA', m.messageId!);
            // Stored exactly as given (an empty array stays an array), or untouched.
            expect(stored).toEqual(expected ? { ...m, status: to, statusUpdatedAt: at, ...(errors ? { errors } : {}) } : m);
          }
        }
        // A message appended without a status counts as accepted; an unknown one is not created.
        const bare = msg({ status: undefined });
        await s.messages.append(bare);
        expect(await s.messages.advanceStatus({ ...bare, status: 'sent' })).toEqual({ applied: true, status: 'sent' });
        const ghost = msg({});
        expect(await s.messages.advanceStatus({ ...ghost, status: 'read' })).toEqual({ applied: false, status: null });
        expect(await s.messages.get('orgA', ghost._id)).toBeNull();
        // Another organization's copy of the id changes nothing.
        expect(await s.messages.advanceStatus({ ...bare, organizationId: 'orgB', status: 'read' })).toEqual({ applied: false, status: null });
        expect((await s.messages.listSession('orgA', 's1'))!.length).toBe(MESSAGE_STATUSES.length ** 2 + 1);
      });

      it('judges each of many status writes asked at once on its own, in its organization', async () => {
        const cases = MESSAGE_STATUSES.flatMap((from) => MESSAGE_STATUSES.map((to) => ({ from, to, m: msg({ status: from }) })));
        for (const c of cases) await s.messages.append(c.m);
        const ghost = msg({});
        const results = await Promise.all([
          ...cases.map((c) => s.messages.advanceStatus({ ...c.m, status: c.to, statusUpdatedAt: '2030-01-01T00:00:01.000Z' })),
          s.messages.advanceStatus({ ...ghost, status: 'read' }),
          s.messages.advanceStatus({ ...cases[0]!.m, organizationId: 'orgB', status: 'read' }),
        ]);
        cases.forEach((c, i) => {
          const expected = nextStatus(c.from, c.to) === c.to;
          expect({ from: c.from, to: c.to, ...results[i] }).toEqual({ from: c.from, to: c.to, applied: expected, status: expected ? c.to : c.from });
        });
        expect(results.slice(cases.length)).toEqual([{ applied: false, status: null }, { applied: false, status: null }]);
        for (const c of cases) {
          const expected = nextStatus(c.from, c.to) === c.to;
          expect((await s.messages.get('orgA', c.m._id))?.status).toBe(expected ? c.to : c.from);
        }
      });

      it('a stale writer never moves a status backwards', async () => {
        const m = msg({ status: 'accepted' });
        await s.messages.append(m);
        // Two writers read the message while it is accepted (an actor paused, then resumed after its partition moved).
        const stale = s.otherNodeMessages();
        const staleRead = (await stale.getByNetworkId('orgA', m.messageId!))!;
        const freshRead = (await s.messages.getByNetworkId('orgA', m.messageId!))!;
        expect(staleRead.status).toBe('accepted');
        expect(await s.messages.advanceStatus({ ...freshRead, status: 'read', statusUpdatedAt: '2030-01-01T00:00:03.000Z' })).toEqual({ applied: true, status: 'read' });
        // The stale writer computed 'delivered' (and 'failed') from its old read: refused, and its record is not written.
        expect(await stale.advanceStatus({ ...staleRead, status: 'delivered', statusUpdatedAt: '2030-01-01T00:00:02.000Z' })).toEqual({ applied: false, status: 'read' });
        expect(await stale.advanceStatus({ ...staleRead, status: 'failed', errors: [{ code: 1, title: 't', message: 'm' }] })).toEqual({ applied: false, status: 'read' });
        expect(await s.messages.getByNetworkId('orgA', m.messageId!)).toEqual({ ...m, status: 'read', statusUpdatedAt: '2030-01-01T00:00:03.000Z' });
      });

      it('concurrent reports in any order end at the furthest status they allow', async () => {
        for (let round = 0; round < 20; round++) {
          const m = msg({ status: 'accepted' });
          await s.messages.append(m);
          const reports: MessageStatus[] = round % 2 === 0 ? ['sent', 'delivered', 'read'] : ['sent', 'delivered', 'read', 'failed'];
          // Shuffled, all from the same (old) read, all in flight at once.
          const order = reports.map((r) => [Math.random(), r] as const).sort((a, b) => a[0] - b[0]).map(([, r]) => r);
          const other = s.otherNodeMessages();
          const results = await Promise.all(order.map((to, i) => (i % 2 === 0 ? s.messages : other).advanceStatus({ ...m, status: to })));
          const applied = new Map(order.map((to, i) => [to, results[i]!.applied]));
          const final = (await s.messages.get('orgA', m._id))!.status;
          if (applied.get('failed')) {
            // failed can only follow accepted or sent, and nothing follows it.
            expect(applied.get('delivered') || applied.get('read')).toBe(false);
            expect(final).toBe('failed');
          } else {
            expect(applied.get('read')).toBe(true);
            expect(final).toBe('read');
          }
        }
      });
    });

    describe('rate limiter', () => {
      it('allows the limit per window per key, then refuses with a retry time', async () => {
        const key = `k-${randomUUID()}`;
        const results = [];
        for (let i = 0; i < 4; i++) results.push(await s.rateLimiter.hit(key, 3, 60_000));
        expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
        expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
        expect(results[3]!.retryAfterMs).toBeGreaterThan(0);
        expect(results[3]!.retryAfterMs).toBeLessThanOrEqual(60_000);
        expect((await s.rateLimiter.hit(`other-${key}`, 3, 60_000)).allowed).toBe(true);
      });

      it('is shared by every node of the deployment', async () => {
        const key = `k-${randomUUID()}`;
        const other = s.otherNodeRateLimiter();
        const a = await Promise.all([1, 2, 3].map(() => s.rateLimiter.hit(key, 5, 60_000)));
        const b = await Promise.all([1, 2, 3].map(() => other.hit(key, 5, 60_000)));
        expect([...a, ...b].filter((r) => r.allowed)).toHaveLength(5);
      });
    });
  });
}
