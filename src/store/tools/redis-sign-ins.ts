import type { OAuthState } from '../../domain/tools.js';
import { LuaScript, type RedisClient } from '../redis/client.js';
import type { ToolRepo } from './port.js';

/*
 * What of the tool store expires, kept in Redis beside the records in
 * PostgreSQL:
 *   <p>:tool-state:<state>     OAuth state of a sign-in in flight, expiring (PX)
 *   <p>:tool-lock:<id>         credential refresh lock: owner, expiring (PX)
 * Each command touches one key (Redis Cluster safe).
 */

const unlockScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

export type ToolSignIns = Pick<ToolRepo, 'putState' | 'takeState' | 'tryLock' | 'unlock'>;

/** OAuth states (single use: GETDEL) and refresh locks (SET NX PX, released by their owner only). */
export function createRedisToolSignIns(redis: RedisClient, prefix: string): ToolSignIns {
  const stateKey = (s: string) => `${prefix}:tool-state:${s}`;
  const lockKey = (id: string) => `${prefix}:tool-lock:${id}`;
  return {
    async putState(state) {
      await redis.set(stateKey(state.state), JSON.stringify(state), { PX: Math.max(1, state.expiresAt - Date.now()) });
    },
    async takeState(state, now) {
      const raw = await redis.getDel(stateKey(state));
      if (raw === null) return null;
      const s = JSON.parse(raw) as OAuthState;
      return s.expiresAt > now ? s : null;
    },
    async tryLock(toolId, owner, ttlMs) {
      return (await redis.set(lockKey(toolId), owner, { NX: true, PX: ttlMs })) === 'OK';
    },
    async unlock(toolId, owner) {
      await unlockScript.run(redis, [lockKey(toolId)], [owner]);
    },
  };
}
