import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import type { RequestKeyMatch, RequestKeyRepo } from './port.js';

// SET NX with the TTL, or compare with what is there: one round trip, atomic.
const rememberScript = new LuaScript(`
local prev = redis.call('GET', KEYS[1])
if prev then
  if prev == ARGV[1] then return 1 end
  return 2
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 0
`);

/** Request keys in Redis: `<prefix>:{o:<org>}:request-key:<key>` holds the fingerprint, with a PX TTL. */
export function createRedisRequestKeyRepo(client: RedisClient, prefix: string): RequestKeyRepo {
  return {
    async remember(org, key, fingerprint, ttlMs): Promise<RequestKeyMatch> {
      const r = Number(await rememberScript.run(client, [orgKeys(prefix, org)('request-key', key)], [fingerprint, ttlMs]));
      return r === 0 ? 'new' : r === 1 ? 'same' : 'different';
    },
  };
}
