import { randomUUID } from 'node:crypto';
import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import type { AssignmentStore } from './port.js';

/** How long the lock lasts unless renewed: a holder renews it before each pick. */
const LOCK_MS = 15_000;
/** The round-robin order is kept a week past its last change. */
const KEEP_MS = 7 * 86_400_000;

// Renews the lock only while it is still the caller's (its token).
const renewScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);
const releaseScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);
const noteScript = new LuaScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

/** Auto-assignment's lock and order shared by every node (`<prefix>:{o:<org>}:assign:lock` and `…:assign:order`). */
export function createRedisAssignmentStore(redis: RedisClient, prefix: string): AssignmentStore {
  const key = (org: string, part: string) => orgKeys(prefix, org)('assign', part);
  return {
    async withLock(org, fn) {
      const token = randomUUID();
      const lock = key(org, 'lock');
      if ((await redis.set(lock, token, { NX: true, PX: LOCK_MS })) !== 'OK') return 'busy';
      try {
        return await fn(async () => Number(await renewScript.run(redis, [lock], [token, LOCK_MS])) === 1);
      } finally {
        await releaseScript.run(redis, [lock], [token]).catch(() => undefined);
      }
    },
    async lastAssigned(org) {
      const all = await redis.hGetAll(key(org, 'order'));
      return new Map(Object.entries(all).map(([u, at]) => [u, Number(at)]));
    },
    async noteAssigned(org, userId, at) {
      await noteScript.run(redis, [key(org, 'order')], [userId, at, KEEP_MS]);
    },
  };
}
