import { LuaScript, type RedisClient } from '../redis/client.js';
import { TurnBatches } from '../turn-batches.js';
import type { PaceGrant, SendPacer } from './port.js';

// KEYS[1]: the channel's next free turn (ms, Redis clock). ARGV: interval ms, max wait ms, how many
// turns are asked (calls made together, in their order). Returns {granted, first wait, retry}: the
// first `granted` calls go after `first wait` + i × interval; the others are refused, and a turn
// is within reach again after `retry` ms.
// A number with no backlog (its next turn already past: the common case below its tier) costs one
// write: SET ... GET stores the turn after the granted ones and answers the turn it replaces in the
// same command. Only a number with a backlog writes again (its turn is later than now), and when
// every turn asked is refused it puts back what it replaced, so a refusal takes nothing from the budget.
const reserveScript = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local maxWait = tonumber(ARGV[2])
local asked = tonumber(ARGV[3])
local function grants(turn)
  local wait = turn - now
  if wait > maxWait then return 0 end
  return math.min(asked, math.floor((maxWait - wait) / interval) + 1)
end
local g = grants(now)
local old = redis.call('SET', KEYS[1], string.format('%.3f', now + g * interval), 'PX', math.ceil(g * interval) + 1000, 'GET')
local turn = tonumber(old or '0')
if turn <= now then return {g, '0', tostring(g * interval - maxWait)} end
g = grants(turn)
if g == 0 then
  redis.call('SET', KEYS[1], old, 'PX', math.ceil(turn - now) + 1000)
  return {0, '0', tostring(turn - now - maxWait)}
end
local nxt = turn + g * interval
redis.call('SET', KEYS[1], string.format('%.3f', nxt), 'PX', math.ceil(nxt - now) + 1000)
return {g, tostring(turn - now), tostring(nxt - now - maxWait)}
`);

interface Channel {
  id: string;
  intervalMs: number;
  maxWaitMs: number;
}

/**
 * The budget of a channel shared by every node, the turn judged by Redis' clock: one script
 * call per channel for the turns this node asks for in one turn of its event loop (a busy
 * number's sends ask together), granted in the order asked, as if asked one after the other.
 */
export function createRedisSendPacer(redis: RedisClient, prefix: string): SendPacer {
  const batches = new TurnBatches<Channel, null, PaceGrant>({
    key: (c) => `${c.id}\n${c.intervalMs}\n${c.maxWaitMs}`,
    send: async (c, asked) => {
      const r = await reserveScript.run(redis, [`${prefix}:{c:${c.id}}:pace`], [c.intervalMs, c.maxWaitMs, asked.length]);
      const [granted, first, retry] = r as [number, string, string];
      const g = Number(granted);
      const firstWait = Math.max(0, Number(first));
      const retryAfterMs = Math.max(0, Number(retry));
      return asked.map((_, i): PaceGrant => (i < g ? { ok: true, waitMs: firstWait + i * c.intervalMs } : { ok: false, retryAfterMs }));
    },
  });

  return {
    reserve(channelId, perSecond, maxWaitMs): Promise<PaceGrant> {
      return batches.add({ id: channelId, intervalMs: 1000 / perSecond, maxWaitMs }, null);
    },
  };
}
