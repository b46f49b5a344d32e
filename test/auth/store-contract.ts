import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuthSession } from '../../src/domain/types.js';
import type { Store } from '../../src/store/index.js';

export function session(over: Partial<AuthSession> = {}): AuthSession {
  const now = Date.now();
  return {
    idHash: randomUUID().replace(/-/g, ''),
    organizationId: 'o1',
    userId: 'u1',
    csrfToken: 'csrf',
    createdAt: new Date(now).toISOString(),
    lastSeenAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 7 * 86_400_000).toISOString(),
    ...over,
  };
}

/** Sessions, inbox tokens, failure counts and the user changes sign-in needs, against one Store adapter. */
export function runAuthStoreContract(name: string, create: () => Promise<Store>): void {
  describe(`auth store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await create();
    });
    afterEach(async () => {
      await store.close();
    });

    it('stores, touches and deletes sessions; a touch never revives a deleted one', async () => {
      const s = session();
      await store.sessions.create(s, Date.now() + 60_000);
      expect(await store.sessions.get(s.idHash)).toEqual(s);
      const later = new Date(Date.now() + 1000).toISOString();
      await store.sessions.touch(s.idHash, later, Date.now() + 120_000);
      expect((await store.sessions.get(s.idHash))?.lastSeenAt).toBe(later);
      await store.sessions.delete(s.idHash);
      expect(await store.sessions.get(s.idHash)).toBeNull();
      await store.sessions.touch(s.idHash, later, Date.now() + 120_000);
      expect(await store.sessions.get(s.idHash)).toBeNull();
      await store.sessions.delete(s.idHash);
    });

    it('forgets a session at its eviction time', async () => {
      const s = session();
      await store.sessions.create(s, Date.now() + 150);
      expect(await store.sessions.get(s.idHash)).not.toBeNull();
      await new Promise((r) => setTimeout(r, 300));
      expect(await store.sessions.get(s.idHash)).toBeNull();
    });

    it("ends all of one user's sessions but the one kept, and nobody else's", async () => {
      const a = [session(), session(), session()];
      const otherUser = session({ userId: 'u2' });
      const otherOrg = session({ organizationId: 'o2' });
      for (const s of [...a, otherUser, otherOrg]) await store.sessions.create(s, Date.now() + 60_000);
      expect(await store.sessions.deleteForUser('o1', 'u1', a[0]!.idHash)).toBe(2);
      expect(await store.sessions.get(a[0]!.idHash)).not.toBeNull();
      expect(await store.sessions.get(a[1]!.idHash)).toBeNull();
      expect(await store.sessions.get(a[2]!.idHash)).toBeNull();
      expect(await store.sessions.get(otherUser.idHash)).not.toBeNull();
      expect(await store.sessions.get(otherOrg.idHash)).not.toBeNull();
      expect(await store.sessions.deleteForUser('o1', 'u1')).toBe(1);
      expect(await store.sessions.get(a[0]!.idHash)).toBeNull();
      expect(await store.sessions.deleteForUser('o1', 'u1')).toBe(0);
    });

    it('hands an inbox token out once, and not after its time', async () => {
      const grant = { organizationId: 'o1', userId: 'u1', sessionIdHash: 'h' };
      await store.sessions.putInboxToken('t1', grant, 60_000);
      const both = await Promise.all([store.sessions.takeInboxToken('t1'), store.sessions.takeInboxToken('t1')]);
      expect(both.filter((g) => g !== null)).toEqual([grant]);
      await store.sessions.putInboxToken('t2', grant, 100);
      await new Promise((r) => setTimeout(r, 250));
      expect(await store.sessions.takeInboxToken('t2')).toBeNull();
      expect(await store.sessions.takeInboxToken('never')).toBeNull();
    });

    it('counts failures per subject in a window that starts at the first failure', async () => {
      expect(await store.authFailures.get(['a', 'b'])).toEqual([{ count: 0, resetMs: 0 }, { count: 0, resetMs: 0 }]);
      await store.authFailures.record(['a', 'b'], 60_000);
      const [a, b] = await store.authFailures.record(['a'], 60_000).then(async () => store.authFailures.get(['a', 'b']));
      expect(a!.count).toBe(2);
      expect(b!.count).toBe(1);
      expect(a!.resetMs).toBeGreaterThan(50_000);
      expect(a!.resetMs).toBeLessThanOrEqual(60_000);
      await store.authFailures.record(['short'], 150);
      await new Promise((r) => setTimeout(r, 300));
      expect(await store.authFailures.get(['short'])).toEqual([{ count: 0, resetMs: 0 }]);
      expect((await store.authFailures.record(['short'], 60_000))[0]!.count).toBe(1);
    });

    it('finds users by email across organizations and updates them without touching the email', async () => {
      const now = new Date().toISOString();
      const u = { id: randomUUID(), organizationId: 'oa', email: 'same@x.io', name: 'A', role: 'agent' as const, passwordHash: 'h', createdAt: now };
      await store.users.create(u);
      await store.users.create({ ...u, id: randomUUID(), organizationId: 'ob' });
      await store.users.create({ ...u, id: randomUUID(), email: 'else@x.io' });
      expect((await store.users.findByEmail('Same@X.io')).map((x) => x.organizationId).sort()).toEqual(['oa', 'ob']);
      expect(await store.users.findByEmail('none@x.io')).toEqual([]);
      const updated = await store.users.update('oa', u.id, (x) => ({ ...x, name: 'B', active: false, email: 'hijack@x.io' }));
      expect(updated).toMatchObject({ name: 'B', active: false, email: 'same@x.io' });
      expect(await store.users.get('oa', u.id)).toEqual(updated);
      // An agent's own capacity is kept with the user, and null is kept as null (no limit of their own).
      expect(await store.users.update('oa', u.id, (x) => ({ ...x, capacity: 2 }))).toMatchObject({ capacity: 2, name: 'B' });
      expect((await store.users.get('oa', u.id))!.capacity).toBe(2);
      expect((await store.users.list('oa')).find((x) => x.id === u.id)!.capacity).toBe(2);
      await store.users.update('oa', u.id, (x) => ({ ...x, capacity: null }));
      expect((await store.users.get('oa', u.id))!.capacity).toBeNull();
      expect(await store.users.update('oa', 'nobody', (x) => x)).toBeNull();
      expect(await store.users.update('ob', u.id, (x) => x)).toBeNull();
    });
  });
}
