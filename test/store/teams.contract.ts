import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Team } from '../../src/domain/teams.js';
import type { TeamStore } from '../../src/store/index.js';

const team = (org: string, name: string, memberIds: string[] = []): Team => {
  const at = new Date().toISOString();
  return { id: randomUUID(), organizationId: org, name, memberIds, autoAssign: { enabled: false, capacity: null }, createdAt: at, updatedAt: at };
};

/** One suite, run against every team store adapter. */
export function runTeamStoreContract(name: string, open: () => Promise<{ store: TeamStore; close(): Promise<void> }>): void {
  describe(`team store contract: ${name}`, () => {
    let store: TeamStore;
    let close: () => Promise<void>;
    beforeEach(async () => {
      ({ store, close } = await open());
    });
    afterEach(() => close());

    it('creates, gets, lists by name, updates and deletes, only in its organization', async () => {
      const org = randomUUID();
      const other = randomUUID();
      const s = team(org, 'Sales', ['u1']);
      const b = team(org, 'billing', ['u2', 'u1']);
      await store.create(s, 10);
      await store.create(b, 10);
      await store.create(team(other, 'Sales'), 10);
      expect(await store.get(org, s.id)).toEqual(s);
      expect(await store.get(other, s.id)).toBeNull();
      expect((await store.list(org)).map((t) => t.name)).toEqual(['billing', 'Sales']);
      const changed = await store.update(org, b.id, (cur) => ({ ...cur, name: 'Billing', memberIds: ['u3'], autoAssign: { enabled: true, capacity: 2 } }));
      expect(changed).toMatchObject({ id: b.id, organizationId: org, name: 'Billing', memberIds: ['u3'], autoAssign: { enabled: true, capacity: 2 } });
      expect(await store.get(org, b.id)).toEqual(changed);
      expect(await store.update(other, b.id, (cur) => ({ ...cur, name: 'Stolen' }))).toBeNull();
      expect(await store.delete(other, b.id)).toBe(false);
      expect(await store.delete(org, b.id)).toBe(true);
      expect(await store.delete(org, b.id)).toBe(false);
      expect((await store.list(org)).map((t) => t.id)).toEqual([s.id]);
      expect((await store.list(other)).length).toBe(1);
    });

    it('keeps a name once per organization in any case, on create and on rename', async () => {
      const org = randomUUID();
      const s = team(org, 'Support');
      await store.create(s, 10);
      await expect(store.create(team(org, ' SUPPORT '), 10)).rejects.toMatchObject({ status: 409, code: 'team_name_taken' });
      const o = team(org, 'Other');
      await store.create(o, 10);
      await expect(store.update(org, o.id, (cur) => ({ ...cur, name: 'support' }))).rejects.toMatchObject({ status: 409, code: 'team_name_taken' });
      expect((await store.get(org, o.id))?.name).toBe('Other');
      // Renaming a team to its own name in another case is fine.
      expect((await store.update(org, s.id, (cur) => ({ ...cur, name: 'SUPPORT' })))?.name).toBe('SUPPORT');
    });

    it('refuses more than max teams, also when creates race', async () => {
      const org = randomUUID();
      const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => store.create(team(org, `t${i}`), 4)));
      expect(results.filter((r) => r.status === 'fulfilled').length).toBe(4);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 422, code: 'too_many_teams' });
      expect((await store.list(org)).length).toBe(4);
    });
  });
}
