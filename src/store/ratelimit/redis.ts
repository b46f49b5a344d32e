import { LuaScript, type RedisClient } from '../redis/client.js';
import { TurnBatches } from '../turn-batches.js';
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
local asked = #ARGV - 2
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
local allowed = math.max(0, math.min(asked, limit - n))
if allowed > 0 then
  local add = {}
  for i = 1, allowed do
    add[#add + 1] = now
    add[#add + 1] = now .. '-' .. ARGV[2 + i]
  end
  add[#add + 1] = -1 - n - allowed
  add[#add + 1] = '~n'
  local renew = renewed == nil or renewed < now - window
  if renew then
    add[#add + 1] = -now
    add[#add + 1] = '~e'
  end
  redis.call('ZADD', KEYS[1], unpack(add))
  if renew then redis.call('PEXPIRE', KEYS[1], 2 * window) end
  if first == nil then first = now end
elseif gone > 0 then
  redis.call('ZADD', KEYS[1], -1 - n, '~n')
end
if allowed == asked then return {allowed, n, first + window - now, 0, 0} end
local count = n + allowed
local edge = redis.call('ZRANGE', KEYS[1], marks + count - limit, marks + count - limit, 'WITHSCORES')
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
return {allowed, n, (first or now) + window - now, tonumber(edge[2]) + window - now, tonumber(last[2]) + window - now}
`);

/** At most this many hits of one key go in one script (its arguments stay few). */
const MAX_HITS_PER_SCRIPT = 100;

interface Window {
  key: string;
  limit: number;
  windowMs: number;
}

/**
 * The hits this node makes on one key in one turn of its event loop go in one script (a client
 * sending in parallel with one API key hits together), judged in the order made, as if made one
 * after the other: the first ones allowed while the window has room, the rest refused and not
 * counted.
 */
export function createRedisRateLimiter(redis: RedisClient, prefix: string): RateLimiter {
  let seq = 0;
  const node = Math.random().toString(36).slice(2, 10);
  const batches = new TurnBatches<Window, string, RateLimitResult>({
    key: (w) => `${w.key}\n${w.limit}\n${w.windowMs}`,
    maxSize: MAX_HITS_PER_SCRIPT,
    send: async (w, ids) => {
      const r = await hitScript.run(redis, [`${prefix}:rlw:{${w.key}}`], [w.limit, w.windowMs, ...ids]);
      const [allowed, counted, reset, retry, refusedReset] = (r as number[]).map(Number) as [number, number, number, number, number];
      return ids.map((_, i) =>
        i < allowed
          ? { allowed: true, limit: w.limit, remaining: w.limit - counted - i - 1, retryAfterMs: 0, resetMs: Math.max(0, reset) }
          : { allowed: false, limit: w.limit, remaining: 0, retryAfterMs: Math.max(1, retry), resetMs: Math.max(0, refusedReset) },
      );
    },
  });

  return {
    hit(key, limit, windowMs): Promise<RateLimitResult> {
      return batches.add({ key, limit, windowMs }, `${node}-${++seq}`);
    },
  };
}
