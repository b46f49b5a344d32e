import { LuaScript, type RedisClient } from '../redis/client.js';
import type { RateLimiter, RateLimitResult } from './port.js';

/*
 * One sorted set per key: the window's hits (score: the hit's time in ms on
 * Redis's clock, always positive) beside two bookkeeping members with
 * negative scores, so they sort before every hit and no trim of old hits
 * reaches them:
 *
 *   '~n'  score -1 - (hits stored)     how many hits the set holds
 *   '~e'  score -(time of the last PEXPIRE)
 *
 * With them an allowed hit is three commands in the script (TIME, one ZRANGE
 * of the set's lowest members, one ZADD of the hit and the bookkeeping),
 * where counting the set (ZCARD), reading its oldest hit, trimming it and
 * renewing its expiry were four more: the lowest members are the
 * bookkeeping and the oldest hits, so the count is the stored one, and the
 * trim runs only when the oldest hit read has left the window (it answers
 * how many hits it removed, so the count is the stored one minus those, and
 * the oldest hit left is among those read unless the trim took them all).
 * The expiry is renewed only when the last renewal has left the window, to
 * twice the window: a set renewed at `e` lives until `e + 2w`, which is at
 * least `now + w` (the hit's own window) for every hit at `now <= e + w`.
 *
 * The same algorithm as before, judged the same (an exact sliding window,
 * refused hits not counted, the same retry and reset times); the keys have a
 * new name (`rlw:`), so a node of the earlier release, which kept no
 * bookkeeping, never shares a set with this one (while both run, each counts
 * its own).
 */
const hitScript = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local low = redis.call('ZRANGE', KEYS[1], 0, 5, 'WITHSCORES')
local stored, renewed, marks, hits = 0, nil, 0, {}
for i = 1, #low, 2 do
  local m, s = low[i], tonumber(low[i + 1])
  if m == '~n' then stored = -1 - s; marks = marks + 1
  elseif m == '~e' then renewed = -s; marks = marks + 1
  else hits[#hits + 1] = s end
end
local gone, first = 0, hits[1]
if first ~= nil and first <= now - window then
  gone = redis.call('ZREMRANGEBYSCORE', KEYS[1], '(0', now - window)
  first = hits[gone + 1]
  if first == nil and gone < stored then
    local oldest = redis.call('ZRANGE', KEYS[1], marks, marks, 'WITHSCORES')
    first = tonumber(oldest[2])
  end
end
local n = stored - gone
if n >= limit then
  if gone > 0 then redis.call('ZADD', KEYS[1], -1 - n, '~n') end
  local edge = redis.call('ZRANGE', KEYS[1], marks + n - limit, marks + n - limit, 'WITHSCORES')
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return {0, 0, tonumber(edge[2]) + window - now, tonumber(last[2]) + window - now}
end
if first == nil then first = now end
if renewed == nil or renewed < now - window then
  redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3], -2 - n, '~n', -now, '~e')
  redis.call('PEXPIRE', KEYS[1], 2 * window)
else
  redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3], -2 - n, '~n')
end
return {1, limit - n - 1, 0, first + window - now}
`);

export function createRedisRateLimiter(redis: RedisClient, prefix: string): RateLimiter {
  let seq = 0;
  const node = Math.random().toString(36).slice(2, 10);
  return {
    async hit(key, limit, windowMs): Promise<RateLimitResult> {
      const r = (await hitScript.run(redis, [`${prefix}:rlw:{${key}}`], [limit, windowMs, `${node}-${++seq}`])) as number[];
      const [allowed, remaining, retry, reset] = r.map(Number) as [number, number, number, number];
      return { allowed: allowed === 1, limit, remaining, retryAfterMs: allowed === 1 ? 0 : Math.max(1, retry), resetMs: Math.max(0, reset) };
    },
  };
}
