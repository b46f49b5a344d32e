import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import { templateKey, type TemplateRecord, type TemplateRepo } from './port.js';

/*
 * Key layout: <p>:{o:<org>}:templates:<channelId> is a hash, field
 * `<name>\0<language>` → template JSON. One hash per channel keeps a sync a
 * single atomic script.
 */

// ARGV: n, then n (field, json) pairs. Removes network-sourced fields not in the new set.
const replaceScript = new LuaScript(`
local n = tonumber(ARGV[1])
local keep = {}
for i = 0, n - 1 do keep[ARGV[2 + i * 2]] = true end
local removed = 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local f = all[i]
  if not keep[f] then
    local t = cjson.decode(all[i + 1])
    if t.source == 'network' then
      redis.call('HDEL', KEYS[1], f)
      removed = removed + 1
    end
  end
end
for i = 0, n - 1 do redis.call('HSET', KEYS[1], ARGV[2 + i * 2], ARGV[3 + i * 2]) end
return removed
`);

export function createRedisTemplateRepo(redis: RedisClient, prefix: string): TemplateRepo {
  const hash = (org: string, ch: string) => orgKeys(prefix, org)('templates', ch);
  return {
    async get(org, ch, name, lang) {
      const raw = await redis.hGet(hash(org, ch), templateKey(name, lang));
      return raw == null ? null : (JSON.parse(raw) as TemplateRecord);
    },
    async list(org, ch) {
      const all = await redis.hVals(hash(org, ch));
      return all
        .map((r) => JSON.parse(r) as TemplateRecord)
        .sort((a, b) => a.name.localeCompare(b.name) || a.language.localeCompare(b.language));
    },
    async put(t) {
      await redis.hSet(hash(t.organizationId, t.channelId), templateKey(t.name, t.language), JSON.stringify(t));
    },
    async delete(org, ch, name, lang) {
      return (await redis.hDel(hash(org, ch), templateKey(name, lang))) > 0;
    },
    async replaceFromNetwork(org, ch, synced) {
      const args: (string | number)[] = [synced.length];
      for (const t of synced) args.push(templateKey(t.name, t.language), JSON.stringify({ ...t, organizationId: org, channelId: ch }));
      const removed = Number(await replaceScript.run(redis, [hash(org, ch)], args));
      return { removed };
    },
    async deleteChannel(org, ch) {
      await redis.del(hash(org, ch));
    },
  };
}
