import { randomUUID } from 'node:crypto';
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import type { ConversationIndexRepo } from '../../src/store/index.js';
import type { ConversationRecord, ConversationView, ConversationViewQuery } from '../../src/domain/conversation.js';

/** A conversation with the bot, no session, version 1. */
export function record(org: string, aeid: string, over: Partial<ConversationRecord> = {}): ConversationRecord {
  return {
    organizationId: org,
    audienceExternalId: aeid,
    contactId: null,
    status: 'bot',
    assigneeId: null,
    queuedAt: null,
    assignedAt: null,
    sessionId: null,
    sessionStatus: null,
    lastInboundAt: null,
    updatedAt: '2026-11-23T10:00:00.000Z',
    version: 1,
    ...over,
  };
}

/** One suite for every adapter of the conversation index. */
export function runConversationIndexContract(name: string, open: () => Promise<{ repo: ConversationIndexRepo; close(): Promise<void> }>) {
  describe(`conversation index contract: ${name}`, () => {
    let repo: ConversationIndexRepo;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ repo, close } = await open());
    });
    afterAll(async () => close());

    it('keeps the newest version: an older or equal one changes nothing', async () => {
      const org = randomUUID();
      expect(await repo.put(record(org, '1:9', { version: 3, status: 'queued', queuedAt: '2026-11-23T10:00:00.000Z' }))).toBe(true);
      expect(await repo.put(record(org, '1:9', { version: 2, status: 'bot' }))).toBe(false);
      expect(await repo.put(record(org, '1:9', { version: 3, status: 'bot' }))).toBe(false);
      expect((await repo.get(org, '1:9'))?.status).toBe('queued');
      expect((await repo.list({ organizationId: org, status: 'bot', offset: 0, limit: 10 })).total).toBe(0);
      expect((await repo.list({ organizationId: org, status: 'queued', offset: 0, limit: 10 })).total).toBe(1);
    });

    it('puts asked together land as if made one after the other: each conversation keeps its newest version', async () => {
      const org = randomUUID();
      const other = randomUUID();
      await repo.put(record(org, '1:9', { version: 5, status: 'queued', queuedAt: '2026-11-23T10:00:00.000Z' }));
      const answers = await Promise.all([
        repo.put(record(org, '1:9', { version: 4, status: 'bot' })),
        repo.put(record(org, '2:9', { version: 1, status: 'queued', queuedAt: '2026-11-23T10:01:00.000Z' })),
        repo.put(record(other, '2:9', { version: 1, status: 'assigned', assigneeId: 'ann' })),
        repo.put(record(org, '2:9', { version: 2, status: 'assigned', assigneeId: 'bob' })),
        repo.put(record(org, '3:9', { version: 1 })),
        repo.put(record(org, '3:9', { version: 1, status: 'queued', queuedAt: '2026-11-23T10:02:00.000Z' })),
      ]);
      expect(answers).toEqual([false, true, true, true, true, false]);
      expect((await repo.get(org, '1:9'))?.status).toBe('queued');
      expect((await repo.get(org, '2:9'))?.assigneeId).toBe('bob');
      expect((await repo.get(other, '2:9'))?.assigneeId).toBe('ann');
      expect((await repo.get(org, '3:9'))?.status).toBe('bot');
      expect((await repo.list({ organizationId: org, status: 'queued', offset: 0, limit: 10 })).conversations.map((c) => c.audienceExternalId)).toEqual(['1:9']);
      expect((await repo.list({ organizationId: other, offset: 0, limit: 10 })).total).toBe(1);
    });

    it('lists queued oldest first, others newest first, moves records between statuses and agents, pages', async () => {
      const org = randomUUID();
      for (let i = 0; i < 5; i++) {
        await repo.put(record(org, `10${i}:9`, { version: 1, status: 'queued', queuedAt: `2026-11-23T10:0${4 - i}:00.000Z`, updatedAt: `2026-11-23T11:0${i}:00.000Z` }));
      }
      const queued = await repo.list({ organizationId: org, status: 'queued', offset: 0, limit: 3 });
      expect(queued.total).toBe(5);
      expect(queued.conversations.map((c) => c.audienceExternalId)).toEqual(['104:9', '103:9', '102:9']);
      const page2 = await repo.list({ organizationId: org, status: 'queued', offset: 3, limit: 3 });
      expect(page2.conversations.map((c) => c.audienceExternalId)).toEqual(['101:9', '100:9']);

      await repo.put(record(org, '102:9', { version: 2, status: 'assigned', assigneeId: 'ann', assignedAt: '2026-11-23T12:00:00.000Z', updatedAt: '2026-11-23T12:00:00.000Z' }));
      await repo.put(record(org, '103:9', { version: 2, status: 'assigned', assigneeId: 'bob', updatedAt: '2026-11-23T12:01:00.000Z' }));
      expect((await repo.list({ organizationId: org, status: 'queued', offset: 0, limit: 10 })).total).toBe(3);
      expect((await repo.list({ organizationId: org, assigneeId: 'ann', offset: 0, limit: 10 })).conversations.map((c) => c.audienceExternalId)).toEqual(['102:9']);
      expect((await repo.list({ organizationId: org, status: 'queued', assigneeId: 'ann', offset: 0, limit: 10 })).total).toBe(0);
      // A transfer moves it to the other agent's list.
      await repo.put(record(org, '102:9', { version: 3, status: 'assigned', assigneeId: 'bob', updatedAt: '2026-11-23T12:02:00.000Z' }));
      expect((await repo.list({ organizationId: org, assigneeId: 'ann', offset: 0, limit: 10 })).total).toBe(0);
      expect((await repo.list({ organizationId: org, assigneeId: 'bob', offset: 0, limit: 10 })).conversations.map((c) => c.audienceExternalId)).toEqual(['102:9', '103:9']);
      // Back to the bot: out of every agent's list.
      await repo.put(record(org, '103:9', { version: 3, status: 'bot', updatedAt: '2026-11-23T12:03:00.000Z' }));
      expect((await repo.list({ organizationId: org, assigneeId: 'bob', offset: 0, limit: 10 })).total).toBe(1);
      const all = await repo.list({ organizationId: org, offset: 0, limit: 10 });
      expect(all.total).toBe(5);
      expect(all.conversations[0]!.audienceExternalId).toBe('103:9');
    });

    it('puts each conversation in one lane: views, their counts and filters by channel, assignee and contact', async () => {
      const org = randomUUID();
      const at = (m: number) => `2026-11-23T10:${String(m).padStart(2, '0')}:00.000Z`;
      await repo.put(record(org, '201:9', { status: 'bot', sessionId: 's1', sessionStatus: 'open', updatedAt: at(1) }));
      await repo.put(record(org, '202:9', { status: 'queued', queuedAt: at(2), updatedAt: at(2) }));
      await repo.put(record(org, '203:8', { status: 'assigned', assigneeId: 'ann', updatedAt: at(3) }));
      await repo.put(record(org, '204:9', { status: 'assigned', assigneeId: 'bob', updatedAt: at(4) }));
      await repo.put(record(org, '205:8', { status: 'bot', sessionId: 's5', sessionStatus: 'resolved', updatedAt: at(5) }));
      const ids = async (view: ConversationView, more: Partial<ConversationViewQuery> = {}) =>
        (await repo.listView({ organizationId: org, view, userId: 'ann', sort: 'activity', limit: 50, ...more })).conversations.map((c) => c.audienceExternalId);
      expect(await ids('all')).toEqual(['205:8', '204:9', '203:8', '202:9', '201:9']);
      expect(await ids('bot')).toEqual(['201:9']);
      expect(await ids('waiting')).toEqual(['202:9']);
      expect(await ids('mine')).toEqual(['203:8']);
      expect(await ids('others')).toEqual(['204:9']);
      expect(await ids('unassigned')).toEqual(['202:9', '201:9']);
      expect(await ids('resolved')).toEqual(['205:8']);
      expect(await ids('all', { phoneNumberId: '8' })).toEqual(['205:8', '203:8']);
      expect(await ids('all', { assigneeId: 'bob' })).toEqual(['204:9']);
      expect(await ids('all', { audienceExternalId: '202:9' })).toEqual(['202:9']);
      expect(await repo.counts({ organizationId: org, userId: 'ann' })).toEqual({ all: 5, bot: 1, waiting: 1, mine: 1, others: 1, unassigned: 2, resolved: 1 });
      expect(await repo.counts({ organizationId: org, userId: 'bob', phoneNumberId: '9' })).toEqual({ all: 3, bot: 1, waiting: 1, mine: 1, others: 0, unassigned: 2, resolved: 0 });
      // Longest waiting first: in the queue since, else the last change.
      expect(await ids('all', { sort: 'waiting' })).toEqual(['201:9', '202:9', '203:8', '204:9', '205:8']);
      const other = randomUUID();
      expect(await repo.counts({ organizationId: other, userId: 'ann' })).toEqual({ all: 0, bot: 0, waiting: 0, mine: 0, others: 0, unassigned: 0, resolved: 0 });
    });

    it('pages by key: a page starts after the last row of the one before, whatever arrived meanwhile', async () => {
      const org = randomUUID();
      for (let i = 0; i < 7; i++) await repo.put(record(org, `30${i}:9`, { updatedAt: i < 4 ? '2026-11-23T10:00:00.000Z' : `2026-11-23T10:0${i}:00.000Z` }));
      const q = { organizationId: org, view: 'all' as const, userId: 'ann', sort: 'activity' as const, limit: 3 };
      const p1 = await repo.listView(q);
      expect(p1.conversations.map((c) => c.audienceExternalId)).toEqual(['306:9', '305:9', '304:9']);
      // New conversations arrive before the next page is read: they do not shift it.
      await repo.put(record(org, '399:9', { updatedAt: '2026-11-23T11:00:00.000Z' }));
      await repo.put(record(org, '398:9', { updatedAt: '2026-11-23T11:00:00.000Z' }));
      const p2 = await repo.listView({ ...q, after: p1.next! });
      expect(p2.conversations.map((c) => c.audienceExternalId)).toEqual(['300:9', '301:9', '302:9']);
      const p3 = await repo.listView({ ...q, after: p2.next! });
      expect(p3.conversations.map((c) => c.audienceExternalId)).toEqual(['303:9']);
      expect(p3.next).toBeNull();
      const w1 = await repo.listView({ ...q, sort: 'waiting', limit: 4 });
      expect(w1.conversations.map((c) => c.audienceExternalId)).toEqual(['300:9', '301:9', '302:9', '303:9']);
      expect((await repo.listView({ ...q, sort: 'waiting', limit: 4, after: w1.next! })).conversations.map((c) => c.audienceExternalId)).toEqual(['304:9', '305:9', '306:9', '398:9']);
    });

    it("never shows one organization's conversations to another", async () => {
      const a = randomUUID();
      const b = randomUUID();
      await repo.put(record(a, '555:9', { status: 'queued', queuedAt: '2026-11-23T10:00:00.000Z' }));
      expect(await repo.get(b, '555:9')).toBeNull();
      expect((await repo.list({ organizationId: b, offset: 0, limit: 10 })).total).toBe(0);
      expect((await repo.list({ organizationId: b, status: 'queued', offset: 0, limit: 10 })).total).toBe(0);
      expect((await repo.listView({ organizationId: b, view: 'all', userId: 'u', sort: 'activity', limit: 10 })).conversations).toEqual([]);
      expect((await repo.counts({ organizationId: b, userId: 'u' })).all).toBe(0);
    });

    it("keeps each user's read markers apart, per organization, last write winning", async () => {
      const a = randomUUID();
      const b = randomUUID();
      expect((await repo.seen(a, 'usr_1', ['1:9', '2:9'])).size).toBe(0);
      expect((await repo.seen(a, 'usr_1', [])).size).toBe(0);
      await repo.markSeen(a, 'usr_1', '1:9', { sessionId: 's1', inboundSeen: 3 });
      await repo.markSeen(a, 'usr_2', '1:9', { sessionId: 's1', inboundSeen: 1 });
      await repo.markSeen(a, 'usr_1', '1:9', { sessionId: 's2', inboundSeen: 0 });
      expect([...(await repo.seen(a, 'usr_1', ['1:9', '2:9']))]).toEqual([['1:9', { sessionId: 's2', inboundSeen: 0 }]]);
      expect((await repo.seen(a, 'usr_2', ['1:9'])).get('1:9')).toEqual({ sessionId: 's1', inboundSeen: 1 });
      expect((await repo.seen(b, 'usr_1', ['1:9'])).size).toBe(0);
    });

    it('lets exactly one of many racing writers of the same version win', async () => {
      const org = randomUUID();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => repo.put(record(org, '7:9', { version: 5, assigneeId: `a${i}`, status: 'assigned' }))));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await repo.list({ organizationId: org, status: 'assigned', offset: 0, limit: 50 })).total).toBe(1);
    });
    it('finds due timers across organizations, earliest first, up to a time, and forgets a cleared one', async () => {
      const [o1, o2] = [randomUUID(), randomUUID()];
      // Far in the past, so other cases' records (none due) and other runs never interleave.
      await repo.put(record(o1, '1:9', { version: 1, dueAt: '2001-01-01T00:00:03.000Z' }));
      await repo.put(record(o2, '2:9', { version: 1, dueAt: '2001-01-01T00:00:01.000Z' }));
      await repo.put(record(o1, '3:9', { version: 1, dueAt: '2001-01-01T00:00:09.000Z' }));
      await repo.put(record(o1, '4:9', { version: 1 }));
      const due = (await repo.due('2001-01-01T00:00:05.000Z', 100)).filter((d) => d.organizationId === o1 || d.organizationId === o2);
      expect(due).toEqual([
        { organizationId: o2, audienceExternalId: '2:9', dueAt: '2001-01-01T00:00:01.000Z' },
        { organizationId: o1, audienceExternalId: '1:9', dueAt: '2001-01-01T00:00:03.000Z' },
      ]);
      await repo.put(record(o2, '2:9', { version: 2 }));
      const after = (await repo.due('2001-01-01T00:00:05.000Z', 100)).filter((d) => d.organizationId === o1 || d.organizationId === o2);
      expect(after.map((d) => d.audienceExternalId)).toEqual(['1:9']);
    });
  });
}

