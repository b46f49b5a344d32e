import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PresenceStore } from '../../src/store/presence/port.js';
import { eventually } from '../harness/eventually.js';

/** One suite, run against every presence store adapter. */
export function runPresenceContract(name: string, open: () => Promise<{ store: PresenceStore; close(): Promise<void> }>): void {
  describe(`presence store contract: ${name}`, () => {
    let store: PresenceStore;
    let close: () => Promise<void>;
    beforeEach(async () => {
      ({ store, close } = await open());
    });
    afterEach(() => close());

    it('lists a user while any node holds a lease, with their choice, only in their organization', async () => {
      const org = randomUUID();
      await store.attach(org, 'ann', 'n1', 60_000);
      await store.attach(org, 'ann', 'n2', 60_000);
      await store.attach(org, 'bob', 'n1', 60_000);
      await store.attach('other-org', 'eve', 'n1', 60_000);
      expect(await store.list(org)).toEqual([
        { userId: 'ann', status: 'online' },
        { userId: 'bob', status: 'online' },
      ]);
      await store.choose(org, 'ann', 'away');
      expect(await store.choiceOf(org, 'ann')).toBe('away');
      expect(await store.choiceOf(org, 'bob')).toBe('online');
      await store.detach(org, 'ann', 'n1');
      expect(await store.list(org)).toEqual([
        { userId: 'ann', status: 'away' },
        { userId: 'bob', status: 'online' },
      ]);
      await store.detach(org, 'ann', 'n2');
      expect(await store.list(org)).toEqual([{ userId: 'bob', status: 'online' }]);
      // The choice outlives the sockets: a new one shows what the user chose.
      await store.attach(org, 'ann', 'n3', 60_000);
      expect(await store.list(org)).toContainEqual({ userId: 'ann', status: 'away' });
      expect(await store.list('other-org')).toEqual([{ userId: 'eve', status: 'online' }]);
      expect(await store.list(randomUUID())).toEqual([]);
    });

    it("forgets a node's lease that is not renewed, and everything of a forgotten user", async () => {
      const org = randomUUID();
      await store.attach(org, 'ann', 'dead', 100);
      await store.attach(org, 'bob', 'live', 60_000);
      await store.choose(org, 'bob', 'away');
      await eventually(async () => (await store.list(org)).every((p) => p.userId !== 'ann'), { what: "ann's lease expiring" });
      expect(await store.list(org)).toEqual([{ userId: 'bob', status: 'away' }]);
      await store.forget(org, 'bob');
      expect(await store.list(org)).toEqual([]);
      expect(await store.choiceOf(org, 'bob')).toBe('online');
    });
  });
}
