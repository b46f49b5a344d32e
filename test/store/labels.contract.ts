import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationIndexRepo, LabelRepo } from '../../src/store/index.js';
import type { Label } from '../../src/domain/labels.js';
import { record } from '../inbox/conversation-index.contract.js';

const label = (org: string, name: string, over: Partial<Label> = {}): Label => ({ id: `lbl_${randomUUID()}`, organizationId: org, name, color: '#112233', createdAt: '2026-11-26T10:00:00.000Z', ...over });

/** One suite for every adapter of the label store, with the conversation index's label filter on the same database. */
export function runLabelContract(name: string, open: () => Promise<{ labels: LabelRepo; conversations: ConversationIndexRepo; close(): Promise<void> }>) {
  describe(`label store contract: ${name}`, () => {
    let labels: LabelRepo;
    let conversations: ConversationIndexRepo;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ labels, conversations, close } = await open());
    });
    afterAll(async () => close());

    it('keeps names unique per organization whatever their case, lists by name, renames and recolours', async () => {
      const org = randomUUID();
      const other = randomUUID();
      const refund = label(org, 'Refund');
      expect(await labels.create(refund, 10)).toEqual(refund);
      expect(await labels.create(label(org, 'refund'), 10)).toBe('name_taken');
      expect(await labels.create(label(org, ' REFUND '), 10)).toBe('name_taken');
      // Another organization may use the name.
      expect(await labels.create(label(other, 'refund'), 10)).toMatchObject({ name: 'refund' });
      const bug = label(org, 'bug');
      await labels.create(bug, 10);
      expect((await labels.list(org)).map((l) => l.name)).toEqual(['bug', 'Refund']);
      expect(await labels.get(other, refund.id)).toBeNull();
      expect(await labels.update(org, bug.id, { name: 'REFUND' })).toBe('name_taken');
      expect(await labels.update(org, bug.id, { name: 'Bug', color: '#abcdef' })).toMatchObject({ id: bug.id, name: 'Bug', color: '#abcdef' });
      expect(await labels.update(org, refund.id, { name: 'refund' })).toMatchObject({ name: 'refund' });
      expect(await labels.update(other, bug.id, { name: 'x' })).toBeNull();
    });

    it('refuses a label past the organization\'s limit', async () => {
      const org = randomUUID();
      for (const n of ['a', 'b']) expect(await labels.create(label(org, n), 2)).toMatchObject({ name: n });
      expect(await labels.create(label(org, 'c'), 2)).toBe('too_many');
      expect(await labels.list(org)).toHaveLength(2);
    });

    it('puts labels on conversations and contacts apart, once each, in order, up to the limit; a deleted label comes off everything', async () => {
      const org = randomUUID();
      const [vip, bug, late] = [label(org, 'vip'), label(org, 'bug'), label(org, 'late')];
      for (const l of [vip, bug, late]) await labels.create(l, 10);
      expect(await labels.attach(org, 'conversation', '1:9', [bug.id, vip.id, bug.id], 3)).toBe('ok');
      expect(await labels.attach(org, 'conversation', '1:9', [vip.id], 3)).toBe('ok');
      expect(await labels.attach(org, 'contact', 'c1', [vip.id], 3)).toBe('ok');
      const on = await labels.labelsOf(org, 'conversation', ['1:9', '2:9']);
      expect([...on.get('1:9')!].sort()).toEqual([bug.id, vip.id].sort());
      expect(on.has('2:9')).toBe(false);
      expect((await labels.labelsOf(org, 'contact', ['c1'])).get('c1')).toEqual([vip.id]);
      expect(await labels.labelsOf(randomUUID(), 'conversation', ['1:9'])).toEqual(new Map());
      expect(await labels.attach(org, 'conversation', '1:9', [late.id, label(org, 'x').id], 3)).toBe('too_many');
      expect((await labels.labelsOf(org, 'conversation', ['1:9'])).get('1:9')).toHaveLength(2);
      expect(await labels.detach(org, 'conversation', '1:9', bug.id)).toBe(true);
      expect(await labels.detach(org, 'conversation', '1:9', bug.id)).toBe(false);
      expect(await labels.delete(org, vip.id)).toBe(true);
      expect(await labels.delete(org, vip.id)).toBe(false);
      expect(await labels.labelsOf(org, 'conversation', ['1:9'])).toEqual(new Map());
      expect(await labels.labelsOf(org, 'contact', ['c1'])).toEqual(new Map());
    });

    it('filters every view and its counts by label, with keyset pages; another organization\'s label or conversations never match', async () => {
      const org = randomUUID();
      const other = randomUUID();
      const refund = label(org, 'refund');
      await labels.create(refund, 10);
      for (let i = 0; i < 5; i++) await conversations.put(record(org, `20${i}:9`, { status: i < 3 ? 'queued' : 'bot', queuedAt: i < 3 ? `2026-11-23T10:0${i}:00.000Z` : null, updatedAt: `2026-11-23T11:0${i}:00.000Z` }));
      await conversations.put(record(other, '200:9'));
      await labels.attach(org, 'conversation', '200:9', [refund.id], 20);
      await labels.attach(org, 'conversation', '201:9', [refund.id], 20);
      await labels.attach(org, 'conversation', '203:9', [refund.id], 20);
      // The same conversation id in another organization, labelled there: each organization sees its own rows only.
      await labels.attach(other, 'conversation', '200:9', [refund.id], 20);
      const base = { organizationId: org, userId: 'u1', labelId: refund.id } as const;
      const first = await conversations.listView({ ...base, view: 'all', sort: 'activity', limit: 2 });
      expect(first.conversations.map((c) => c.audienceExternalId)).toEqual(['203:9', '201:9']);
      const second = await conversations.listView({ ...base, view: 'all', sort: 'activity', limit: 2, after: first.next! });
      expect(second.conversations.map((c) => c.audienceExternalId)).toEqual(['200:9']);
      expect(second.next).toBeNull();
      expect((await conversations.listView({ ...base, view: 'waiting', sort: 'waiting', limit: 10 })).conversations.map((c) => c.audienceExternalId)).toEqual(['200:9', '201:9']);
      expect(await conversations.counts(base)).toEqual({ all: 3, bot: 1, waiting: 2, mine: 0, others: 0, unassigned: 3, resolved: 0 });
      expect((await conversations.counts({ organizationId: other, userId: 'u1', labelId: refund.id })).all).toBe(1);
      expect((await conversations.listView({ organizationId: other, userId: 'u1', labelId: refund.id, view: 'all', sort: 'activity', limit: 10 })).conversations.map((c) => c.organizationId)).toEqual([other]);
      expect((await conversations.counts({ ...base, labelId: 'lbl_none' })).all).toBe(0);
    });
  });
}
