import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../src/store/ratelimit/memory.js';
import type { RateLimiter } from '../../src/store/ratelimit/port.js';
import { createRedisRateLimiter } from '../../src/store/ratelimit/redis.js';
import { createRedisSendPacer } from '../../src/store/send-pacing/redis.js';
import { createRedisFailureCounter } from '../../src/store/auth/redis.js';
import { createRedisRequestKeyRepo } from '../../src/store/request-keys/redis.js';
import { FencedWriteError } from '../../src/store/actors/port.js';
import { RedisActorStore } from '../../src/store/actors/redis.js';
import { CoalescedReads } from '../../src/store/redis/coalesced-reads.js';
import { systemClock } from '../../src/clock.js';
import type { RedisClient } from '../../src/store/index.js';
import { useRedisClients } from '../harness/use-servers.js';

/*
 * The per-send budgets kept in Redis, each one script: the template rate
 * limit (an exact sliding window), a number's pacing turn, and the failed
 * authentication counters read on every request. Each keeps its guarantees
 * in as few Redis commands as the script can (counted here from INFO
 * commandstats, every command inside a script included, which is how the
 * messaging benchmark counts them): the redis-server is this file's own, and
 * nothing else talks to it while a count runs.
 */

const redis = useRedisClients();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The commands Redis ran while `fn` ran, by name (INFO and CONFIG of the count itself left out). */
async function commandsOf(client: RedisClient, fn: () => Promise<unknown>): Promise<Record<string, number>> {
  const raw = client as unknown as { sendCommand(args: string[]): Promise<unknown> };
  await raw.sendCommand(['CONFIG', 'RESETSTAT']);
  await fn();
  const info = String(await raw.sendCommand(['INFO', 'commandstats']));
  const by: Record<string, number> = {};
  for (const m of info.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)) if (!['info', 'config|resetstat'].includes(m[1]!)) by[m[1]!] = Number(m[2]);
  return by;
}

/** Limiter guarantees both adapters keep (the memory one is the embedded node's). */
function limiterCases(name: string, make: () => Promise<{ a: RateLimiter; b: RateLimiter }>) {
  describe(`rate limiter (${name}): an exact sliding window`, () => {
    it('allows exactly the limit, refused hits take nothing, and a refusal names when the oldest counted hit leaves', async () => {
      const { a } = await make();
      const key = `k-${randomUUID()}`;
      const allowed = [];
      for (let i = 0; i < 3; i++) allowed.push(await a.hit(key, 3, 60_000));
      expect(allowed.map((r) => [r.allowed, r.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
      ]);
      // The reset of an allowed hit is when the window's oldest hit leaves it: within the window.
      for (const r of allowed) expect(r.resetMs).toBeGreaterThan(0);
      for (const r of allowed) expect(r.resetMs).toBeLessThanOrEqual(60_000);
      const refused = [];
      for (let i = 0; i < 5; i++) refused.push(await a.hit(key, 3, 60_000));
      for (const r of refused) {
        expect(r).toMatchObject({ allowed: false, remaining: 0 });
        expect(r.retryAfterMs).toBeGreaterThan(0);
        expect(r.retryAfterMs).toBeLessThanOrEqual(60_000);
        // The window drains after the newest counted hit, never before the oldest leaves.
        expect(r.resetMs).toBeGreaterThanOrEqual(r.retryAfterMs);
      }
      // The oldest counted hit only comes closer: refusals were not counted (had they been, the third
      // hit's slot would not be the edge, and a larger limit would now be reached sooner).
      for (let i = 1; i < refused.length; i++) expect(refused[i]!.retryAfterMs).toBeLessThanOrEqual(refused[i - 1]!.retryAfterMs);
      const wider = await a.hit(key, 4, 60_000);
      expect(wider).toMatchObject({ allowed: true, remaining: 0 });
    });

    it('slides: once the oldest hit has left the window, one more is allowed, not a whole window', async () => {
      const { a } = await make();
      const key = `k-${randomUUID()}`;
      expect((await a.hit(key, 2, 1_500)).allowed).toBe(true);
      await sleep(700);
      expect((await a.hit(key, 2, 1_500)).allowed).toBe(true);
      const refused = await a.hit(key, 2, 1_500);
      if (refused.allowed) return; // the machine stalled past the whole window: nothing left to check
      // Wait until the first hit has left; the second may or may not have (a slow machine), so at most
      // the limit minus what is still counted is allowed.
      await sleep(refused.retryAfterMs + 50);
      const after = [await a.hit(key, 2, 1_500), await a.hit(key, 2, 1_500), await a.hit(key, 2, 1_500)];
      expect(after[0]!.allowed).toBe(true);
      expect(after.filter((r) => r.allowed).length).toBeLessThanOrEqual(2);
    });

    it('counts every node\'s hits exactly, whatever the concurrency', async () => {
      const { a, b } = await make();
      const key = `k-${randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).hit(key, 25, 60_000)));
      const ok = results.filter((r) => r.allowed);
      expect(ok).toHaveLength(25);
      expect(ok.map((r) => r.remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    });
  });
}

limiterCases('embedded', async () => {
  const l = createMemoryRateLimiter(systemClock);
  return { a: l, b: l };
});

limiterCases('redis', async () => {
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const [c1, c2] = [await redis.client(), await redis.client()];
  return { a: createRedisRateLimiter(c1, prefix), b: createRedisRateLimiter(c2, prefix) };
});

describe('rate limiter (redis): what the window costs', () => {
  it('keeps only the window\'s hits and expires with them, in four commands per allowed hit while none left the window', async () => {
    const client = await redis.client();
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const limiter = createRedisRateLimiter(client, prefix);
    const key = `k-${randomUUID()}`;
    const stored = `${prefix}:rlw:{${key}}`;
    await limiter.hit(key, 1000, 400); // loads the script and starts the window (its expiry set)
    const steady = await commandsOf(client, () => limiter.hit(key, 1000, 400));
    // EVALSHA, TIME, one ZRANGE (the bookkeeping and the oldest hits), one ZADD: no ZCARD, no trim
    // while the oldest hit is in the window, no PEXPIRE while the last renewal is.
    expect(steady).toEqual({ evalsha: 1, time: 1, zrange: 1, zadd: 1 });
    for (let i = 0; i < 30; i++) await limiter.hit(key, 1000, 400);
    // The set expires at most two windows after its last renewal: bounded whatever happens next.
    const ttl = await client.pTTL(stored);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(800);
    await sleep(450);
    const renewing = await commandsOf(client, () => limiter.hit(key, 1000, 400));
    // The oldest hit read has left: the trim runs (and takes every hit, so no second read), and the expiry is renewed.
    expect(renewing).toEqual({ evalsha: 1, time: 1, zrange: 1, zremrangebyscore: 1, zadd: 1, pexpire: 1 });
    // Every earlier hit left the window and was trimmed: the one hit and the two bookkeeping members remain.
    expect(await client.zCard(stored)).toBe(3);
    await sleep(850);
    expect(await client.exists(stored)).toBe(0);
  });

  it('after a trim, counts the hits left and resets when the oldest of them leaves, however many left before it', async () => {
    const client = await redis.client();
    const limiter = createRedisRateLimiter(client, `t${randomUUID().slice(0, 8)}`);
    const window = 3_000;
    // Two keys: one whose leaving hits are fewer than the script reads with the bookkeeping (two), one with more (six).
    const [few, many] = [`k-${randomUUID()}`, `k-${randomUUID()}`];
    for (let i = 0; i < 2; i++) await limiter.hit(few, 10, window);
    for (let i = 0; i < 6; i++) await limiter.hit(many, 10, window);
    await sleep(1_500);
    for (const key of [few, many]) for (let i = 0; i < 2; i++) await limiter.hit(key, 10, window);
    // The later hits were counted by Redis before this moment: each leaves the window at most `window` after it.
    const laterCounted = Date.now();
    await sleep(1_600);
    const byKey: Record<string, number>[] = [];
    const results = [];
    for (const key of [few, many]) {
      const started = Date.now();
      let r: Awaited<ReturnType<RateLimiter['hit']>> | undefined;
      byKey.push(await commandsOf(client, async () => (r = await limiter.hit(key, 10, window))));
      results.push({ r: r!, left: window - (started - laterCounted) });
    }
    // A machine stalled past the later hits' window too: nothing left to check.
    if (results.some(({ left }) => left <= 0)) return;
    for (const { r, left } of results) {
      // The earlier hits were trimmed, the two later ones and this one counted: 10 - 3 remain.
      expect(r).toMatchObject({ allowed: true, remaining: 7 });
      // The reset is the oldest later hit's exit (not this hit's, a whole window away); Redis counts whole ms.
      expect(r.resetMs).toBeLessThanOrEqual(left + 1);
    }
    // Two left: the oldest left is among the hits read with the bookkeeping. Six: read once more.
    // (The expiry is renewed too: the last renewal, at the first hit, has left the window.)
    expect(byKey[0]).toEqual({ evalsha: 1, time: 1, zrange: 1, zremrangebyscore: 1, zadd: 1, pexpire: 1 });
    expect(byKey[1]).toEqual({ evalsha: 1, time: 1, zrange: 2, zremrangebyscore: 1, zadd: 1, pexpire: 1 });
  });

  it('hits made together are one script, judged in the order made: the first ones allowed, the rest refused and not counted', async () => {
    const client = await redis.client();
    const limiter = createRedisRateLimiter(client, `t${randomUUID().slice(0, 8)}`);
    await limiter.hit(`k-${randomUUID()}`, 10, 60_000); // loads the script
    const key = `k-${randomUUID()}`;
    let results: Awaited<ReturnType<RateLimiter['hit']>>[] = [];
    const allowed = await commandsOf(client, async () => (results = await Promise.all(Array.from({ length: 4 }, () => limiter.hit(key, 6, 60_000)))));
    // One ZADD of the four hits with the bookkeeping (a new set: its expiry set too).
    expect(allowed).toEqual({ evalsha: 1, time: 1, zrange: 1, zadd: 1, pexpire: 1 });
    expect(results.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 5],
      [true, 4],
      [true, 3],
      [true, 2],
    ]);
    const mixed = await commandsOf(client, async () => (results = await Promise.all(Array.from({ length: 5 }, () => limiter.hit(key, 6, 60_000)))));
    // Two more fit; the refusal reads the edge and the newest hit.
    expect(mixed).toEqual({ evalsha: 1, time: 1, zrange: 3, zadd: 1 });
    expect(results.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
      [false, 0],
    ]);
    for (const r of results.slice(2)) {
      expect(r.retryAfterMs).toBeGreaterThan(0);
      expect(r.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(r.resetMs).toBeGreaterThanOrEqual(r.retryAfterMs);
    }
    // The refused were not counted: a wider limit has room for exactly one more.
    const wider = await Promise.all([limiter.hit(key, 7, 60_000), limiter.hit(key, 7, 60_000)]);
    expect(wider.map((r) => r.allowed)).toEqual([true, false]);
  });

  it('more hits in one turn than one script takes go in scripts of a hundred, still judged in the order made', async () => {
    const client = await redis.client();
    const limiter = createRedisRateLimiter(client, `t${randomUUID().slice(0, 8)}`);
    await limiter.hit(`k-${randomUUID()}`, 10, 60_000); // loads the script
    const key = `k-${randomUUID()}`;
    let results: Awaited<ReturnType<RateLimiter['hit']>>[] = [];
    const cost = await commandsOf(client, async () => (results = await Promise.all(Array.from({ length: 250 }, () => limiter.hit(key, 150, 60_000)))));
    expect(cost.evalsha).toBe(3);
    expect(results.map((r) => r.allowed)).toEqual(Array.from({ length: 250 }, (_, i) => i < 150));
    expect(results.slice(0, 150).map((r) => r.remaining)).toEqual(Array.from({ length: 150 }, (_, i) => 149 - i));
  });

  it('refuses at the limit after trimming, and the next hits still count right', async () => {
    const client = await redis.client();
    const limiter = createRedisRateLimiter(client, `t${randomUUID().slice(0, 8)}`);
    const key = `k-${randomUUID()}`;
    for (let i = 0; i < 3; i++) expect((await limiter.hit(key, 3, 600)).allowed).toBe(true);
    await sleep(650);
    // The three left: trimmed by this hit, whose count starts again at one.
    const fresh = await limiter.hit(key, 3, 600);
    expect(fresh).toMatchObject({ allowed: true, remaining: 2 });
  });
});

describe('send pacer (redis): what a turn costs', () => {
  it('a number with no backlog costs one write, a backlog two, and a refusal puts the turn it replaced back', async () => {
    const client = await redis.client();
    const pacer = createRedisSendPacer(client, `t${randomUUID().slice(0, 8)}`);
    await pacer.reserve(`ch_${randomUUID()}`, 1000, 0); // loads the script
    const ch = `ch_${randomUUID()}`;
    // One turn every 10 s, at most 15 s of waiting: turns at 0 and 10 s, then refused until one is in reach.
    let first: unknown;
    const idle = await commandsOf(client, async () => (first = await pacer.reserve(ch, 0.1, 15_000)));
    expect(first).toEqual({ ok: true, waitMs: 0 });
    expect(idle).toEqual({ evalsha: 1, time: 1, set: 1 });
    let second: unknown;
    const backlog = await commandsOf(client, async () => (second = await pacer.reserve(ch, 0.1, 15_000)));
    expect(backlog).toEqual({ evalsha: 1, time: 1, set: 2 });
    expect(second).toMatchObject({ ok: true });
    const third = await pacer.reserve(ch, 0.1, 15_000);
    expect(third.ok).toBe(false);
    if (!third.ok) expect(third.retryAfterMs).toBeGreaterThan(0);
    // The refusal took nothing: the next turn is still the third (about 20 s away), not a fourth (30 s).
    const fourth = await pacer.reserve(ch, 0.1, 60_000);
    expect(fourth.ok).toBe(true);
    if (fourth.ok) {
      expect(fourth.waitMs).toBeGreaterThan(15_000);
      expect(fourth.waitMs).toBeLessThan(25_000);
    }
  });

  it('turns asked together are one script, granted in the order asked, and those past the bound refused without taking any', async () => {
    const client = await redis.client();
    const pacer = createRedisSendPacer(client, `t${randomUUID().slice(0, 8)}`);
    await pacer.reserve(`ch_${randomUUID()}`, 1000, 0); // loads the script
    const ch = `ch_${randomUUID()}`;
    // One turn every 10 s, at most 25 s of waiting: of five asked at once, turns at 0, 10 and 20 s.
    let grants: Awaited<ReturnType<typeof pacer.reserve>>[] = [];
    const idle = await commandsOf(client, async () => (grants = await Promise.all(Array.from({ length: 5 }, () => pacer.reserve(ch, 0.1, 25_000)))));
    expect(idle).toEqual({ evalsha: 1, time: 1, set: 1 });
    expect(grants.slice(0, 3)).toEqual([
      { ok: true, waitMs: 0 },
      { ok: true, waitMs: 10_000 },
      { ok: true, waitMs: 20_000 },
    ]);
    for (const g of grants.slice(3)) {
      expect(g.ok).toBe(false);
      // The next turn is 30 s away: within reach of a 25 s wait in about 5 s.
      if (!g.ok) expect(g.retryAfterMs).toBeGreaterThan(4_000);
      if (!g.ok) expect(g.retryAfterMs).toBeLessThanOrEqual(5_000);
    }
    // A backlog: two asked at once with 45 s allowed go at about 30 and 40 s, in two writes; the refused took nothing.
    const backlog = await commandsOf(client, async () => (grants = await Promise.all([pacer.reserve(ch, 0.1, 45_000), pacer.reserve(ch, 0.1, 45_000)])));
    expect(backlog).toEqual({ evalsha: 1, time: 1, set: 2 });
    const waits = grants.map((g) => (g.ok ? g.waitMs : -1));
    expect(waits[0]).toBeGreaterThan(25_000);
    expect(waits[0]).toBeLessThanOrEqual(30_000);
    expect(waits[1]! - waits[0]!).toBeCloseTo(10_000, 6);
    // All refused: nothing taken, the turn it replaced put back (the next one still about 50 s away).
    const refused = await Promise.all([pacer.reserve(ch, 0.1, 1_000), pacer.reserve(ch, 0.1, 1_000)]);
    expect(refused.every((g) => !g.ok)).toBe(true);
    const after = await pacer.reserve(ch, 0.1, 60_000);
    expect(after.ok && after.waitMs > 45_000 && after.waitMs <= 50_000).toBe(true);
  });

  it('grants a burst from two nodes one turn each, spaced by the tier', async () => {
    const [c1, c2] = [await redis.client(), await redis.client()];
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const [a, b] = [createRedisSendPacer(c1, prefix), createRedisSendPacer(c2, prefix)];
    const ch = `ch_${randomUUID()}`;
    // 0.5 per second: 2 s apart. The burst lands within far less than that, so the waits are the turns.
    const grants = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).reserve(ch, 0.5, 60_000)));
    const waits = grants.map((g) => (g.ok ? g.waitMs : -1)).sort((x, y) => x - y);
    expect(waits[0]).toBeGreaterThanOrEqual(0);
    // Without pacing every wait would be 0; with a double grant two waits would be about equal.
    for (let i = 1; i < waits.length; i++) expect(waits[i]! - waits[i - 1]!).toBeGreaterThan(1_000);
  });
});

describe('failed-authentication counters (redis): the read every request makes', () => {
  it('reads the address and the key prefix in one command on a single server', async () => {
    const client = await redis.client();
    const failures = createRedisFailureCounter(client, `t${randomUUID().slice(0, 8)}`);
    const subjects = [`addr:${randomUUID()}`, `key:${randomUUID()}`];
    const limits = subjects.map((subject) => ({ subject, limit: 3 }));
    let blocked = -1;
    const read = await commandsOf(client, async () => (blocked = await failures.blockedMs(limits)));
    expect(blocked).toBe(0);
    expect(read).toEqual({ mget: 1 });
    // At its limit, a subject blocks, and the time left is asked of it alone.
    await failures.record([subjects[1]!], 60_000);
    await failures.record([subjects[1]!], 60_000);
    await failures.record([subjects[1]!], 60_000);
    const atLimit = await commandsOf(client, async () => (blocked = await failures.blockedMs(limits)));
    expect(blocked).toBeGreaterThan(0);
    expect(blocked).toBeLessThanOrEqual(60_000);
    expect(atLimit).toEqual({ mget: 1, pttl: 1 });
  });
});

describe('request keys (redis): what a keyed request costs', () => {
  it('remembers a key in one command, of racing first uses exactly one is new, and the key expires', async () => {
    const client = await redis.client();
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const keys = createRedisRequestKeyRepo(client, prefix);
    const key = `key-${randomUUID()}`;
    let first: unknown;
    const cost = await commandsOf(client, async () => (first = await keys.remember('org_a', key, 'f1', 60_000)));
    expect(first).toBe('new');
    expect(cost).toEqual({ set: 1 });
    expect(await keys.remember('org_a', key, 'f1', 60_000)).toBe('same');
    expect(await keys.remember('org_a', key, 'f2', 60_000)).toBe('different');
    // A repeat does not replace the first fingerprint, nor lengthen its life.
    expect(await keys.remember('org_a', key, 'f1', 60_000)).toBe('same');
    expect(await client.pTTL(`${prefix}:{o:org_a}:request-key:${key}`)).toBeLessThanOrEqual(60_000);
    // Keys are per organization.
    expect(await keys.remember('org_b', key, 'f2', 60_000)).toBe('new');

    const other = createRedisRequestKeyRepo(await redis.client(), prefix);
    const raced = `key-${randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? keys : other).remember('org_a', raced, i < 10 ? 'f1' : 'f2', 60_000)));
    expect(answers.filter((a) => a === 'new')).toHaveLength(1);

    const short = `key-${randomUUID()}`;
    expect(await keys.remember('org_a', short, 'f1', 300)).toBe('new');
    await sleep(400);
    expect(await keys.remember('org_a', short, 'f2', 300)).toBe('new');
  });
});

describe('actor reads (redis): fences and states read together', () => {
  it('reads of one turn are one command: fences of several partitions and states, a stale fence still refused', async () => {
    const client = await redis.client();
    const store = new RedisActorStore(client, `t${randomUUID().slice(0, 8)}`);
    const [e1, e2] = [(await store.acquire(1, 'n1', 60_000))!, (await store.acquire(2, 'n1', 60_000))!];
    const a = { type: 'conversation', key: 'a', partition: 1 };
    const b = { type: 'conversation', key: 'b', partition: 1 };
    const c = { type: 'conversation', key: 'c', partition: 2 };
    await store.save(a, { v: 'a' }, { partition: 1, epoch: e1 });
    await store.save(c, { v: 'c' }, { partition: 2, epoch: e2 });
    let results: PromiseSettledResult<unknown>[] = [];
    const cost = await commandsOf(client, async () => {
      results = await Promise.allSettled([
        store.checkFence(a, { partition: 1, epoch: e1 }),
        store.checkFence(b, { partition: 1, epoch: e1 }),
        store.checkFence(c, { partition: 2, epoch: e2 }),
        store.checkFence(c, { partition: 2, epoch: e2 - 1 }),
        store.load(a),
        store.load(b),
        store.load(c),
      ]);
    });
    expect(cost).toEqual({ mget: 1 });
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect((results[3] as PromiseRejectedResult).reason).toBeInstanceOf(FencedWriteError);
    expect(results.slice(4).map((r) => (r as PromiseFulfilledResult<unknown>).value)).toEqual([{ v: 'a' }, undefined, { v: 'c' }]);
    // A read asked once the partition moved on sees it: the releaser's fence is refused, the successor's passes.
    expect(await store.release(1, 'n1', e1)).toBe(true);
    const next = (await store.acquire(1, 'n2', 60_000))!;
    const [old, current] = await Promise.allSettled([store.checkFence(a, { partition: 1, epoch: e1 }), store.checkFence(a, { partition: 1, epoch: next })]);
    expect(old.status === 'rejected' && old.reason instanceof FencedWriteError).toBe(true);
    expect(current.status).toBe('fulfilled');
    // A lone read is a plain GET.
    expect(await commandsOf(client, () => store.checkFence(c, { partition: 2, epoch: e2 }))).toEqual({ get: 1 });
  });

  it('a failed command fails every read it carried, and the next turn reads afresh', async () => {
    const client = await redis.client();
    const raw = client as unknown as { sendCommand(args: string[]): Promise<unknown> };
    const prefix = `t${randomUUID().slice(0, 8)}`;
    await client.set(`${prefix}:x`, '1');
    // A connection allowed GET but not MGET: the batch of two is refused by Redis, a lone read is not.
    const user = `reader-${randomUUID().slice(0, 8)}`;
    await raw.sendCommand(['ACL', 'SETUSER', user, 'on', 'nopass', '~*', '+get', '+@connection']);
    await raw.sendCommand(['AUTH', user, 'any']);
    const reads = new CoalescedReads(client);
    const both = await Promise.allSettled([reads.get(`${prefix}:x`), reads.get(`${prefix}:y`)]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((both[0] as PromiseRejectedResult).reason)).toBe(String((both[1] as PromiseRejectedResult).reason));
    expect(await reads.get(`${prefix}:x`)).toBe('1');
  });
});
