import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Resource, ResourceStore } from '../../src/store/resources/port.js';

let n = 0;
export function makeResource(org: string, over: Partial<Resource> = {}): Resource {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, n++)).toISOString();
  return { id: randomUUID(), organizationId: org, name: `res-${randomUUID().slice(0, 8)}`, type: 'crm', config: { a: 1 }, createdAt: at, updatedAt: at, version: 1, ...over };
}

/** The resource store's guarantees (see `ResourceStore`), for every adapter. */
export function runResourceStoreContract(name: string, create: () => Promise<ResourceStore>): void {
  describe(`resource store contract: ${name}`, () => {
    it('creates, reads and lists oldest first in pages, per organization', async () => {
      const s = await create();
      const [a, b, c] = [makeResource('o1'), makeResource('o1'), makeResource('o1')];
      for (const r of [a, b, c]) await s.create(r);
      await s.create(makeResource('o2'));
      expect(await s.get('o1', a.id)).toEqual(a);
      expect(await s.get('o2', a.id)).toBeNull();
      const first = await s.list('o1', { offset: 0, limit: 2 });
      expect(first).toEqual({ resources: [a, b], total: 3 });
      expect((await s.list('o1', { offset: 2, limit: 2 })).resources.map((r) => r.id)).toEqual([c.id]);
      expect((await s.list('o3', { offset: 0, limit: 2 })).total).toBe(0);
    });

    it('names are unique per organization, compared trimmed and case-insensitively', async () => {
      const s = await create();
      const a = makeResource('o1', { name: 'CRM' });
      await s.create(a);
      await expect(s.create(makeResource('o1', { name: ' crm ' }))).rejects.toMatchObject({ status: 409, code: 'resource_name_taken' });
      await s.create(makeResource('o2', { name: 'crm' }));
      expect((await s.list('o1', { offset: 0, limit: 10 })).total).toBe(1);
    });

    it('replaces only the version it read; a rename frees the old name and refuses a taken one', async () => {
      const s = await create();
      const a = makeResource('o1', { name: 'A' });
      const b = makeResource('o1', { name: 'B' });
      await s.create(a);
      await s.create(b);
      const a2 = { ...a, name: 'A2', version: 2 };
      expect(await s.replace(a, a2)).toBe(true);
      expect(await s.get('o1', a.id)).toEqual(a2);
      // A writer that read version 1 lost the race.
      expect(await s.replace(a, { ...a, name: 'late', version: 2 })).toBe(false);
      await expect(s.replace(a2, { ...a2, name: 'b', version: 3 })).rejects.toMatchObject({ code: 'resource_name_taken' });
      expect((await s.get('o1', a.id))?.name).toBe('A2');
      // The old name is free again; renaming to the same name differently cased is fine.
      await s.create(makeResource('o1', { name: 'a' }));
      expect(await s.replace(a2, { ...a2, name: 'a2 ', version: 3 })).toBe(true);
      expect(await s.replace(makeResource('o1'), makeResource('o1'))).toBe(false);
    });

    it('concurrent creates with one name: exactly one wins', async () => {
      const s = await create();
      const results = await Promise.allSettled([0, 1, 2, 3].map(() => s.create(makeResource('o1', { name: 'race' }))));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await s.list('o1', { offset: 0, limit: 10 })).total).toBe(1);
    });

    it('deletes within the organization only, freeing the name', async () => {
      const s = await create();
      const a = makeResource('o1', { name: 'gone' });
      await s.create(a);
      expect(await s.delete('o2', a.id)).toBe(false);
      expect(await s.delete('o1', a.id)).toBe(true);
      expect(await s.delete('o1', a.id)).toBe(false);
      expect(await s.get('o1', a.id)).toBeNull();
      await s.create(makeResource('o1', { name: 'GONE' }));
    });
  });
}
