import { LuaScript, type RedisClient } from '../redis/client.js';
import type { RateLimiter, RateLimitResult } from './port.js';

// A sorted set of hit times per key, trimmed to the window; time from Redis itself.
const hitScript = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then
  local edge = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return {0, 0, tonumber(edge[2]) + window - now, tonumber(last[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {1, limit - n - 1, 0, tonumber(first[2]) + window - now}
`);

export function createRedisRateLimiter(redis: RedisClient, prefix: string): RateLimiter {
  let seq = 0;
  const node = Math.random().toString(36).slice(2, 10);
  return {
    async hit(key, limit, windowMs): Promise<RateLimitResult> {
      const r = (await hitScript.run(redis, [`${prefix}:rl:{${key}}`], [limit, windowMs, `${node}-${++seq}`])) as number[];
      const [allowed, remaining, retry, reset] = r.map(Number) as [number, number, number, number];
      return { allowed: allowed === 1, limit, remaining, retryAfterMs: allowed === 1 ? 0 : Math.max(1, retry), resetMs: Math.max(0, reset) };
    },
  };
}
