import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContactRepo, SearchIndex } from '../../src/store/index.js';
import type { SessionMessageRepo } from '../../src/store/session-messages/port.js';
import type { SessionMessage } from '../../src/domain/messages.js';

export interface SearchFixture {
  search: SearchIndex;
  contacts: ContactRepo;
  messages: SessionMessageRepo;
  close(): Promise<void>;
}

/** One suite for every adapter of the workspace's search. */
export function runSearchContract(name: string, open: () => Promise<SearchFixture>) {
  describe(`search contract: ${name}`, () => {
    let f: SearchFixture;
    beforeAll(async () => {
      f = await open();
    });
    afterAll(async () => f.close());

    let n = 0;
    const say = async (org: string, aeid: string, text: string, over: Partial<SessionMessage> = {}) => {
      const m: SessionMessage = {
        _id: randomUUID(), sessionId: `s-${aeid}`, organizationId: org, channelId: 'ch', audienceExternalId: aeid, direction: 'inbound', sender: 'contact',
        content: { type: 'text', text }, sentAt: new Date(Date.UTC(2026, 10, 23, 10, 0, n++)).toISOString(), messageId: `wamid.${randomUUID()}`, ...over,
      };
      await f.messages.registerSession({ sessionId: m.sessionId, organizationId: org, audienceExternalId: aeid, openedAt: m.sentAt });
      await f.messages.append(m);
      return m;
    };
    const contact = async (org: string, aeid: string, name: string | null, createdAt = new Date().toISOString()) => {
      const c = await f.contacts.upsert({ id: randomUUID(), organizationId: org, audienceExternalId: aeid, name: null, createdAt });
      if (name !== null) await f.contacts.setNameIfMissing(org, aeid, name);
      return c;
    };
    const texts = async (org: string, q: string) => (await f.search.messages(org, q, 20)).map((h) => h.text);

    it('finds messages by their words, case and accents folded, the last word as typed so far, never another organization\'s', async () => {
      const a = randomUUID();
      const b = randomUUID();
      const m = await say(a, '4915100000001:9', 'Mein Paket ist beschädigt angekommen');
      await say(a, '4915100000001:9', 'Danke schön');
      await say(b, '4915100000009:9', 'Mein Paket ist beschädigt angekommen');
      const hits = await f.search.messages(a, 'paket BESCHADIGT', 20);
      expect(hits).toEqual([{ sessionId: m.sessionId, messageId: m._id, audienceExternalId: '4915100000001:9', text: m.content.text, sentAt: m.sentAt }]);
      expect(await texts(a, 'beschädigt angek')).toEqual(['Mein Paket ist beschädigt angekommen']);
      expect(await texts(a, 'paket danke')).toEqual([]);
      expect(await texts(randomUUID(), 'paket')).toEqual([]);
      // A media message is found by its caption.
      await say(a, '4915100000001:9', '', { content: { type: 'image', mediaId: 'm1', caption: 'Foto vom Karton' } });
      expect(await texts(a, 'karton')).toEqual(['Foto vom Karton']);
    });

    it('finds a message as it was sent after its status moved, and only by its own words', async () => {
      const a = randomUUID();
      const m = await say(a, '4915100000003:9', 'Lieferung morgen früh', { direction: 'outbound', sender: 'agent', status: 'accepted' });
      for (const status of ['sent', 'delivered', 'read'] as const) {
        expect((await f.messages.advanceStatus({ ...m, status }))).toEqual({ applied: true, status });
      }
      expect(await texts(a, 'lieferung FRUH')).toEqual(['Lieferung morgen früh']);
      expect(await texts(a, 'read')).toEqual([]);
      expect((await f.messages.get(a, m._id))?.status).toBe('read');
    });

    it('ranks the better match first, and the newest first among equal ones', async () => {
      const a = randomUUID();
      const older = await say(a, '4915100000002:9', 'where is my refund');
      const newer = await say(a, '4915100000002:9', 'where is my refund');
      await say(a, '4915100000002:9', 'refund refund refund refund');
      const hits = await f.search.messages(a, 'refund', 20);
      expect(hits.map((h) => h.text)).toEqual(['refund refund refund refund', 'where is my refund', 'where is my refund']);
      expect(hits.slice(1).map((h) => h.messageId)).toEqual([newer._id, older._id]);
      expect((await f.search.messages(a, 'refund', 1)).map((h) => h.text)).toEqual(['refund refund refund refund']);
    });

    it('finds a word said many times (more than an adapter ranks at once) newest first, and a rare one among them', async () => {
      const a = randomUUID();
      let last: SessionMessage | undefined;
      for (let i = 0; i < 520; i++) last = await say(a, '4915100000003:9', `refund ${i % 2 === 0 ? 'please' : 'now'}`);
      const rare = await say(a, '4915100000003:9', 'order ZX81 refund');
      const hits = await f.search.messages(a, 'refund', 3);
      expect(hits.map((h) => h.messageId)).toContain(last!._id);
      expect(hits).toHaveLength(3);
      expect((await f.search.messages(a, 'zx81', 5)).map((h) => h.messageId)).toEqual([rare._id]);
    });

    it('finds contacts by name words and by phone digits from their start, never another organization\'s', async () => {
      const a = randomUUID();
      const b = randomUUID();
      await contact(a, '4915112345678:9', 'José Núñez');
      await contact(a, '4930999999999:9', 'Ann Müller');
      await contact(b, '4915112345678:7', 'José Núñez');
      const aeids = async (org: string, q: string) => (await f.search.contacts(org, q, 20)).map((c) => c.audienceExternalId);
      expect(await aeids(a, 'jose')).toEqual(['4915112345678:9']);
      expect(await aeids(a, 'NUNEZ jo')).toEqual(['4915112345678:9']);
      expect(await aeids(a, 'muller')).toEqual(['4930999999999:9']);
      expect(await aeids(a, '+49 151 1234')).toEqual(['4915112345678:9']);
      expect(await aeids(a, '4915112345678')).toEqual(['4915112345678:9']);
      expect(await aeids(a, '49')).toEqual(expect.arrayContaining(['4915112345678:9', '4930999999999:9']));
      expect(await aeids(a, 'nobody')).toEqual([]);
      expect((await f.search.contacts(b, 'jose', 20)).map((c) => c.organizationId)).toEqual([b]);
    });

    it("finds contacts by WhatsApp username, business-scoped user id and a number shared later, never another organization's", async () => {
      const a = randomUUID();
      const b = randomUUID();
      const phoneFirst = await contact(a, '4915100000071:9', 'Kim Berger');
      await f.contacts.noteIdentity(a, '4915100000071:9', { userId: 'US.13491208655302741918', username: 'kim.b' }, null);
      const bsuidFirst = await contact(a, 'US.20000000000000000007:9', null);
      await f.contacts.noteIdentity(a, 'US.20000000000000000007:9', { userId: 'US.20000000000000000007', username: 'noa_w', phone: '4915100000072' }, null);
      await contact(b, 'US.20000000000000000008:9', null);
      await f.contacts.noteIdentity(b, 'US.20000000000000000008:9', { userId: 'US.20000000000000000008', username: 'kim.b' }, null);
      const ids = async (org: string, q: string) => (await f.search.contacts(org, q, 10)).map((c) => c.id);
      expect(await ids(a, 'kim.b')).toEqual([phoneFirst.id]);
      expect(await ids(a, 'noa_w')).toEqual([bsuidFirst.id]);
      expect(await ids(a, 'US.13491208655302741918')).toEqual([phoneFirst.id]);
      expect(await ids(a, 'US.20000000000000000007')).toEqual([bsuidFirst.id]);
      expect(await ids(a, '+49 151 00000072')).toEqual([bsuidFirst.id]);
      expect(await ids(b, 'kim.b')).toHaveLength(1);
      expect(await ids(b, 'noa_w')).toEqual([]);
    });

    it("finds contacts by their custom attributes' values, after a change too, never another organization's", async () => {
      const a = randomUUID();
      const b = randomUUID();
      const gold = await contact(a, '4915100000001:9', 'Lena Vogel');
      await f.contacts.update(a, gold.id, { attributes: { plan: 'Gold', city: 'Köln' } });
      const other = await contact(b, '4915100000001:7', 'Lena Vogel');
      await f.contacts.update(b, other.id, { attributes: { plan: 'Gold' } });
      const aeids = async (org: string, q: string) => (await f.search.contacts(org, q, 20)).map((c) => c.audienceExternalId);
      expect(await aeids(a, 'gold')).toEqual(['4915100000001:9']);
      expect(await aeids(a, 'koln')).toEqual(['4915100000001:9']);
      expect(await aeids(a, 'lena gold')).toEqual(['4915100000001:9']);
      await f.contacts.update(a, gold.id, { attributes: { plan: 'Silver', city: null } });
      expect(await aeids(a, 'gold')).toEqual([]);
      expect(await aeids(a, 'koln')).toEqual([]);
      expect(await aeids(a, 'silver')).toEqual(['4915100000001:9']);
      // A rename keeps the attributes found, and the other way round.
      await f.contacts.update(a, gold.id, { name: 'Lena Berg' });
      expect(await aeids(a, 'silver berg')).toEqual(['4915100000001:9']);
      expect((await f.search.contacts(b, 'gold', 20)).map((c) => c.organizationId)).toEqual([b]);
    });

    it('reads what a person types as words only: query syntax finds what its words find, and no words find nothing', async () => {
      const a = randomUUID();
      await say(a, '4915100000003:9', 'order NEAR the door');
      for (const q of ['"', '*', '"order', 'order*', 'NEAR(order door)', "order' OR 1=1 --", 'order & !door', 'order:*', 'order | x', '(order)', 'a:b', '^order', '-door']) {
        await expect(f.search.messages(a, q, 5)).resolves.toBeInstanceOf(Array);
        await expect(f.search.contacts(a, q, 5)).resolves.toBeInstanceOf(Array);
      }
      expect(await texts(a, '"order')).toEqual(['order NEAR the door']);
      expect(await texts(a, 'NEAR(order door)')).toEqual(['order NEAR the door']);
      expect(await texts(a, '  !!! ')).toEqual([]);
      expect(await f.search.contacts(a, '', 5)).toEqual([]);
    });
  });
}
