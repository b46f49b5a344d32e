import { describe, expect, it } from 'vitest';
import { FencedWriteError, type ActorStateStore, type PartitionLeaseStore } from '../../src/store/actors/port.js';

export type ActorStore = ActorStateStore & PartitionLeaseStore;

/**
 * The contract every actor store adapter keeps: fenced state writes, leases
 * with growing epochs, membership. Run once per adapter.
 */
export function runActorStoreContract(name: string, create: () => Promise<ActorStore>) {
  describe(`actor store contract: ${name}`, () => {
    const ref = (key: string, partition = 3) => ({ type: 'log', key, partition });
    let seq = 0;
    const fresh = () => 100 + ++seq; // a partition no other test touched

    it('loads nothing for an actor never written', async () => {
      const s = await create();
      expect(await s.load(ref('nobody'))).toBeUndefined();
    });

    it('writes under the current epoch and reads back', async () => {
      const s = await create();
      const p = fresh();
      const epoch = (await s.acquire(p, 'n1', 10_000))!;
      expect(epoch).toBeGreaterThan(0);
      await s.save(ref('a', p), { log: [1, 2] }, { partition: p, epoch });
      expect(await s.load(ref('a', p))).toEqual({ log: [1, 2] });
    });

    it('refuses a write under an old epoch and leaves the value untouched', async () => {
      const s = await create();
      const p = fresh();
      const old = (await s.acquire(p, 'n1', 10_000))!;
      await s.save(ref('a', p), { v: 'old owner' }, { partition: p, epoch: old });
      expect(await s.release(p, 'n1', old)).toBe(true);
      const next = (await s.acquire(p, 'n2', 10_000))!;
      expect(next).toBeGreaterThan(old);
      await s.save(ref('a', p), { v: 'new owner' }, { partition: p, epoch: next });
      await expect(s.save(ref('a', p), { v: 'late write' }, { partition: p, epoch: old })).rejects.toBeInstanceOf(FencedWriteError);
      expect(await s.load(ref('a', p))).toEqual({ v: 'new owner' });
    });

    it('refuses a write whose fence names another partition', async () => {
      const s = await create();
      const p = fresh();
      const epoch = (await s.acquire(p, 'n1', 10_000))!;
      await expect(s.save(ref('a', p + 1), { v: 1 }, { partition: p, epoch })).rejects.toBeInstanceOf(FencedWriteError);
    });

    it('refuses every write before any lease was ever taken', async () => {
      const s = await create();
      const p = fresh();
      await expect(s.save(ref('a', p), { v: 1 }, { partition: p, epoch: 1 })).rejects.toBeInstanceOf(FencedWriteError);
    });

    it('checks a fence without writing: current passes, an old epoch, another partition or no lease at all is refused', async () => {
      const s = await create();
      const p = fresh();
      await expect(s.checkFence(ref('a', p), { partition: p, epoch: 1 })).rejects.toBeInstanceOf(FencedWriteError);
      const old = (await s.acquire(p, 'n1', 10_000))!;
      await s.checkFence(ref('a', p), { partition: p, epoch: old });
      await expect(s.checkFence(ref('a', p + 1), { partition: p, epoch: old })).rejects.toBeInstanceOf(FencedWriteError);
      expect(await s.release(p, 'n1', old)).toBe(true);
      const next = (await s.acquire(p, 'n2', 10_000))!;
      await expect(s.checkFence(ref('a', p), { partition: p, epoch: old })).rejects.toBeInstanceOf(FencedWriteError);
      await s.checkFence(ref('a', p), { partition: p, epoch: next });
      expect(await s.load(ref('a', p))).toBeUndefined();
    });

    it('grants a lease to one node at a time', async () => {
      const s = await create();
      const p = fresh();
      const results = await Promise.all(['n1', 'n2', 'n3', 'n4'].map((n) => s.acquire(p, n, 10_000)));
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      const holder = await s.holder(p);
      expect(holder?.epoch).toBe(results.find((r) => r !== null));
    });

    it('renews only for the holder of that epoch', async () => {
      const s = await create();
      const p = fresh();
      const e = (await s.acquire(p, 'n1', 10_000))!;
      expect(await s.renew(p, 'n1', e, 10_000)).toBe(true);
      expect(await s.renew(p, 'n2', e, 10_000)).toBe(false);
      expect(await s.renew(p, 'n1', e + 1, 10_000)).toBe(false);
      expect(await s.release(p, 'n2', e)).toBe(false);
      expect((await s.holder(p))?.nodeId).toBe('n1');
    });

    it('lets another node take over after the lease expires, fencing the old holder', async () => {
      const s = await create();
      const p = fresh();
      const e1 = (await s.acquire(p, 'n1', 150))!;
      expect(await s.acquire(p, 'n2', 150)).toBeNull();
      await new Promise((r) => setTimeout(r, 300));
      expect(await s.holder(p)).toBeNull();
      expect(await s.renew(p, 'n1', e1, 150)).toBe(false);
      const e2 = (await s.acquire(p, 'n2', 10_000))!;
      expect(e2).toBe(e1 + 1);
      await expect(s.save(ref('x', p), 1, { partition: p, epoch: e1 })).rejects.toBeInstanceOf(FencedWriteError);
      await s.save(ref('x', p), 2, { partition: p, epoch: e2 });
    });

    it('release ends the lease at once and kills the releaser\'s fence', async () => {
      const s = await create();
      const p = fresh();
      const e = (await s.acquire(p, 'n1', 60_000))!;
      expect(await s.release(p, 'n1', e)).toBe(true);
      await expect(s.save(ref('x', p), 1, { partition: p, epoch: e })).rejects.toBeInstanceOf(FencedWriteError);
      expect(await s.acquire(p, 'n2', 60_000)).toBeGreaterThan(e);
    });

    it('tracks live members and forgets silent ones', async () => {
      const s = await create();
      const a = `m-${fresh()}`;
      const b = `m-${fresh()}`;
      await s.heartbeat(a, 150);
      const both = await s.heartbeat(b, 10_000);
      expect(both).toEqual(expect.arrayContaining([a, b]));
      await new Promise((r) => setTimeout(r, 300));
      const later = await s.heartbeat(b, 10_000);
      expect(later).toContain(b);
      expect(later).not.toContain(a);
      await s.leave(b);
      expect(await s.heartbeat(a, 10_000)).not.toContain(b);
    });

    it('evicts a node found dead: out of the membership, its leases freed with their epochs bumped, nobody else touched', async () => {
      const s = await create();
      const dead = `d-${fresh()}`;
      const other = `o-${fresh()}`;
      const [p1, p2, p3] = [fresh(), fresh(), fresh()];
      await s.heartbeat(dead, 60_000);
      const e1 = (await s.acquire(p1, dead, 60_000))!;
      await s.acquire(p2, dead, 60_000);
      const e3 = (await s.acquire(p3, other, 60_000))!;
      expect(await s.evict(dead, [p1, p2, p3])).toEqual([p1, p2]);
      expect(await s.heartbeat(other, 60_000)).not.toContain(dead);
      expect(await s.holder(p1)).toBeNull();
      await expect(s.save(ref('x', p1), 1, { partition: p1, epoch: e1 })).rejects.toBeInstanceOf(FencedWriteError);
      expect(await s.acquire(p1, other, 60_000)).toBeGreaterThan(e1 + 1);
      expect(await s.holder(p3)).toEqual({ nodeId: other, epoch: e3 });
      expect(await s.evict(dead, [p1, p2, p3])).toEqual([]);
    });
  });
}
