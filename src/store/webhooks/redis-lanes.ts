import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import type { LaneRef } from './port.js';

/*
 * Which registration has deliveries due when, and who works it: bounded (one
 * entry per registration) and expiring (leases), so it lives in Redis while
 * the deliveries themselves are in PostgreSQL.
 *
 *   sb:wh:lanes                   zset "<org>/<reg>", score = when to look at the lane
 *   sb:{o:<org>}:wh:lane:<reg>    lease: owner token, PX lease
 *
 * The schedule is a hint kept conservative: a producer lowers a lane's score
 * (ZADD LT) after scheduling a delivery, and a releasing owner checks the due
 * deliveries again after dropping its lease, so no wake-up is ever lost; a
 * lease key is the truth about who works a lane. Each command touches one
 * key, so this holds on Redis Cluster too.
 */

/** Score of an idle lane (far future, still a valid double for ZADD LT). */
const IDLE = 8.64e15;

const renewScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);

const releaseScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

export interface RedisLaneSchedule {
  /** Lowers the lane's score to `at` (adds it when absent): look at it by then. */
  wake(lane: LaneRef, at: number): Promise<void>;
  /** Drops the lane and its lease (its registration is gone). */
  forget(lane: LaneRef): Promise<void>;
  claim(now: number, max: number, owner: string, leaseMs: number): Promise<LaneRef[]>;
  renew(lane: LaneRef, owner: string, leaseMs: number): Promise<boolean>;
  /** Drops `owner`'s lease, rescheduling the lane at what `firstDue` says (read before and after the lease goes). */
  release(lane: LaneRef, owner: string, firstDue: () => Promise<number | undefined>): Promise<void>;
}

export function createRedisLaneSchedule(client: RedisClient, prefix: string): RedisLaneSchedule {
  const lanesKey = `${prefix}:wh:lanes`;
  const member = (l: LaneRef) => `${l.organizationId}/${l.registrationId}`;
  const parseMember = (m: string): LaneRef => {
    const slash = m.indexOf('/');
    return { organizationId: m.slice(0, slash), registrationId: m.slice(slash + 1) };
  };
  const lockKey = (l: LaneRef) => orgKeys(prefix, l.organizationId)('wh', 'lane', l.registrationId);
  const wake = async (l: LaneRef, at: number) => {
    await client.zAdd(lanesKey, { score: at, value: member(l) }, { comparison: 'LT' });
  };

  return {
    wake,
    async forget(lane) {
      await Promise.all([client.zRem(lanesKey, member(lane)), client.del(lockKey(lane))]);
    },
    async claim(now, max, owner, leaseMs) {
      const candidates = await client.zRangeByScore(lanesKey, '-inf', now, { LIMIT: { offset: 0, count: max * 2 } });
      const out: LaneRef[] = [];
      for (const m of candidates) {
        if (out.length >= max) break;
        const lane = parseMember(m);
        const got = await client.set(lockKey(lane), owner, { NX: true, PX: leaseMs });
        if (got === 'OK') {
          await client.zAdd(lanesKey, { score: now + leaseMs, value: m }, { condition: 'XX' });
          out.push(lane);
        } else {
          // Someone works it: look again when their lease would lapse.
          const ttl = await client.pTTL(lockKey(lane));
          if (ttl > 0) await client.zAdd(lanesKey, { score: now + ttl, value: m }, { condition: 'XX', comparison: 'GT' });
        }
      }
      return out;
    },
    async renew(lane, owner, leaseMs) {
      return (await renewScript.run(client, [lockKey(lane)], [owner, leaseMs])) === 1;
    },
    async release(lane, owner, firstDue) {
      const next = (await firstDue()) ?? IDLE;
      await client.zAdd(lanesKey, { score: next, value: member(lane) }, { condition: 'XX' });
      await releaseScript.run(client, [lockKey(lane)], [owner]);
      // Whatever is due now must stand as the lane's score: a delivery
      // scheduled meanwhile, or a claimer that saw our lease and pushed the
      // lane back to its expiry (ZADD GT) just before we dropped it.
      const again = await firstDue();
      if (again !== undefined) await wake(lane, again);
    },
  };
}
