import { LuaScript, type RedisClient } from './client.js';

const claimLeaseScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`);

const releaseLeaseScript = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`);

/**
 * A lease in one Redis key: `claim` takes it (or extends it, when `owner`
 * holds it) for `ttlMs` and answers whether `owner` holds it now; it expires
 * on its own when its holder stops renewing it. `release` gives it up only
 * when `owner` still holds it.
 */
export const redisLease = {
  async claim(client: RedisClient, key: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await claimLeaseScript.run(client, [key], [owner, ttlMs])) === 1;
  },
  async release(client: RedisClient, key: string, owner: string): Promise<void> {
    await releaseLeaseScript.run(client, [key], [owner]);
  },
};
