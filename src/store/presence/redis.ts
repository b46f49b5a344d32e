import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import type { AgentPresence, PresenceChoice, PresenceStore } from './port.js';

/*
 * One hash per organization: `l:<node>:<user>` → lease expiry (ms, Redis's clock), `c:<user>` → the
 * choice. Every write keeps the hash a week past the last one, so an organization nobody uses leaves.
 */
const KEEP_MS = 7 * 86_400_000;

const attachScript = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'l:' .. ARGV[2] .. ':' .. ARGV[1], now + tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`);

const chooseScript = new LuaScript(`
redis.call('HSET', KEYS[1], 'c:' .. ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

// Connected users (a lease not yet expired) with their choice; expired leases are removed on the way.
const listScript = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local choices = {}
local live = {}
for i = 1, #all, 2 do
  local f, v = all[i], all[i + 1]
  if string.sub(f, 1, 2) == 'c:' then
    choices[string.sub(f, 3)] = v
  elseif string.sub(f, 1, 2) == 'l:' then
    local user = string.match(f, '^l:[^:]*:(.*)$')
    if tonumber(v) > now then live[user] = true else redis.call('HDEL', KEYS[1], f) end
  end
end
local out = {}
for user in pairs(live) do
  table.insert(out, user)
  table.insert(out, choices[user] or 'online')
end
return out
`);

const forgetScript = new LuaScript(`
local all = redis.call('HKEYS', KEYS[1])
for _, f in ipairs(all) do
  if f == 'c:' .. ARGV[1] or string.match(f, '^l:[^:]*:(.*)$') == ARGV[1] then redis.call('HDEL', KEYS[1], f) end
end
return 1
`);

/** Presence shared by every node of a clustered deployment (node ids must hold no `:`). */
export function createRedisPresenceStore(redis: RedisClient, prefix: string): PresenceStore {
  const key = (org: string) => orgKeys(prefix, org)('presence');
  return {
    async attach(org, userId, node, ttlMs) {
      await attachScript.run(redis, [key(org)], [userId, node, ttlMs, KEEP_MS]);
    },
    async detach(org, userId, node) {
      await redis.hDel(key(org), `l:${node}:${userId}`);
    },
    async choose(org, userId, status) {
      await chooseScript.run(redis, [key(org)], [userId, status, KEEP_MS]);
    },
    async choiceOf(org, userId) {
      return ((await redis.hGet(key(org), `c:${userId}`)) as PresenceChoice | null) ?? 'online';
    },
    async list(org) {
      const flat = (await listScript.run(redis, [key(org)], [])) as string[];
      const out: AgentPresence[] = [];
      for (let i = 0; i < flat.length; i += 2) out.push({ userId: flat[i]!, status: flat[i + 1] as PresenceChoice });
      return out.sort((a, b) => a.userId.localeCompare(b.userId));
    },
    async forget(org, userId) {
      await forgetScript.run(redis, [key(org)], [userId]);
    },
  };
}
