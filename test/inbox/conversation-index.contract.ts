import { randomUUID } from 'node:crypto';
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import type { ConversationIndexRepo } from '../../src/store/index.js';
import type { ConversationRecord } from '../../src/domain/conversation.js';

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

    it("never shows one organization's conversations to another", async () => {
      const a = randomUUID();
      const b = randomUUID();
      await repo.put(record(a, '555:9', { status: 'queued', queuedAt: '2026-11-23T10:00:00.000Z' }));
      expect(await repo.get(b, '555:9')).toBeNull();
      expect((await repo.list({ organizationId: b, offset: 0, limit: 10 })).total).toBe(0);
      expect((await repo.list({ organizationId: b, status: 'queued', offset: 0, limit: 10 })).total).toBe(0);
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
  });
}

