import { LuaScript, type RedisClient } from '../redis/client.js';
import type { PaceGrant, SendPacer } from './port.js';

// KEYS[1]: the channel's next free turn (ms, Redis clock). ARGV: interval ms, max wait ms.
// Returns {granted, ms}: the wait before the turn, or (refused) how long until one is within reach.
// A number with no backlog (its next turn already past: the common case below its tier) costs one
// write: SET ... GET stores the turn after now and answers the turn it replaces in the same command.
// Only a number with a backlog writes again (its turn is later than now), and a refused turn puts
// back what it replaced, so a refusal takes nothing from the budget.
const reserveScript = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local old = redis.call('SET', KEYS[1], string.format('%.3f', now + interval), 'PX', math.ceil(interval) + 1000, 'GET')
local turn = tonumber(old or '0')
if turn <= now then return {1, '0'} end
local wait = turn - now
if wait > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[1], old, 'PX', math.ceil(wait) + 1000)
  return {0, tostring(wait - tonumber(ARGV[2]))}
end
local nxt = turn + interval
redis.call('SET', KEYS[1], string.format('%.3f', nxt), 'PX', math.ceil(nxt - now) + 1000)
return {1, tostring(wait)}
`);

/** The budget of a channel shared by every node: one script call per send, the turn judged by Redis' clock. */
export function createRedisSendPacer(redis: RedisClient, prefix: string): SendPacer {
  return {
    async reserve(channelId, perSecond, maxWaitMs): Promise<PaceGrant> {
      const [granted, ms] = (await reserveScript.run(redis, [`${prefix}:{c:${channelId}}:pace`], [1000 / perSecond, maxWaitMs])) as [number, string];
      const n = Math.max(0, Number(ms));
      return Number(granted) === 1 ? { ok: true, waitMs: n } : { ok: false, retryAfterMs: n };
    },
  };
}
