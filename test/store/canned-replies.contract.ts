import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CannedReply } from '../../src/domain/canned-replies.js';
import type { CannedReplyStore } from '../../src/store/index.js';

const reply = (org: string, shortCode: string, text = `text of ${shortCode}`): CannedReply => {
  const at = new Date().toISOString();
  return { id: randomUUID(), organizationId: org, shortCode, text, createdAt: at, updatedAt: at };
};

/** One suite, run against every canned reply store adapter. */
export function runCannedReplyContract(name: string, open: () => Promise<{ store: CannedReplyStore; close(): Promise<void> }>): void {
  describe(`canned reply store contract: ${name}`, () => {
    let store: CannedReplyStore;
    let close: () => Promise<void>;
    beforeEach(async () => {
      ({ store, close } = await open());
    });
    afterEach(() => close());

    it('creates, gets, lists by short code, updates and deletes, only in its organization', async () => {
      const org = randomUUID();
      const other = randomUUID();
      const b = reply(org, 'bye');
      const a = reply(org, 'address');
      await store.create(b, 10);
      await store.create(a, 10);
      await store.create(reply(other, 'bye'), 10);
      expect(await store.get(org, b.id)).toEqual(b);
      expect(await store.get(other, b.id)).toBeNull();
      expect((await store.list(org)).map((r) => r.shortCode)).toEqual(['address', 'bye']);

      const changed = await store.update(org, b.id, (cur) => ({ ...cur, shortCode: 'goodbye', text: 'Bye {{contact.name}}' }));
      expect(changed).toMatchObject({ id: b.id, organizationId: org, shortCode: 'goodbye', text: 'Bye {{contact.name}}' });
      expect(await store.get(org, b.id)).toEqual(changed);
      expect(await store.update(other, a.id, (cur) => ({ ...cur, text: 'hijacked' }))).toBeNull();
      expect((await store.get(org, a.id))?.text).toBe(a.text);
      // The old code is free again once renamed.
      await store.create(reply(org, 'bye'), 10);

      expect(await store.delete(other, a.id)).toBe(false);
      expect(await store.delete(org, a.id)).toBe(true);
      expect(await store.delete(org, a.id)).toBe(false);
      expect((await store.list(org)).map((r) => r.shortCode)).toEqual(['bye', 'goodbye']);
      expect((await store.list(other)).map((r) => r.shortCode)).toEqual(['bye']);
    });

    it('refuses a short code the organization has, on create and on rename, even when creates race', async () => {
      const org = randomUUID();
      const first = reply(org, 'hello');
      await store.create(first, 10);
      await expect(store.create(reply(org, 'hello'), 10)).rejects.toMatchObject({ status: 409, code: 'short_code_taken' });
      const second = reply(org, 'hi');
      await store.create(second, 10);
      await expect(store.update(org, second.id, (cur) => ({ ...cur, shortCode: 'hello' }))).rejects.toMatchObject({ status: 409, code: 'short_code_taken' });
      expect((await store.get(org, second.id))?.shortCode).toBe('hi');

      const racing = await Promise.allSettled(Array.from({ length: 6 }, () => store.create(reply(org, 'same'), 10)));
      expect(racing.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await store.list(org)).filter((r) => r.shortCode === 'same')).toHaveLength(1);
    });

    it('keeps at most the given number of replies per organization, even when creates race', async () => {
      const org = randomUUID();
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.create(reply(org, `c${i}`), 5)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 422, code: 'too_many_canned_replies' });
      expect(await store.list(org)).toHaveLength(5);
      await store.create(reply(randomUUID(), 'c0'), 5);
    });
  });
}
