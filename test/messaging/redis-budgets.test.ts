import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../src/store/ratelimit/memory.js';
import type { RateLimiter } from '../../src/store/ratelimit/port.js';
import { createRedisRateLimiter } from '../../src/store/ratelimit/redis.js';
import { createRedisSendPacer } from '../../src/store/send-pacing/redis.js';
import { createRedisFailureCounter } from '../../src/store/auth/redis.js';
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
  it('keeps only the window\'s hits and expires with them, in five commands per allowed hit', async () => {
    const client = await redis.client();
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const limiter = createRedisRateLimiter(client, prefix);
    const key = `k-${randomUUID()}`;
    const stored = `${prefix}:rlw:{${key}}`;
    await limiter.hit(key, 1000, 400); // loads the script and starts the window (its expiry set)
    const steady = await commandsOf(client, () => limiter.hit(key, 1000, 400));
    // EVALSHA, TIME, the trim, one ZRANGE (the bookkeeping and the oldest hit), one ZADD: no ZCARD,
    // no second ZRANGE, no PEXPIRE while the last renewal is within the window.
    expect(steady).toEqual({ evalsha: 1, time: 1, zremrangebyscore: 1, zrange: 1, zadd: 1 });
    for (let i = 0; i < 30; i++) await limiter.hit(key, 1000, 400);
    // The set expires at most two windows after its last renewal: bounded whatever happens next.
    const ttl = await client.pTTL(stored);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(800);
    await sleep(450);
    const renewing = await commandsOf(client, () => limiter.hit(key, 1000, 400));
    expect(renewing.pexpire).toBe(1);
    // Every earlier hit left the window and was trimmed: the one hit and the two bookkeeping members remain.
    expect(await client.zCard(stored)).toBe(3);
    await sleep(850);
    expect(await client.exists(stored)).toBe(0);
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
