import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import { FreshCache } from '../fresh-cache.js';
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

/** How long a template read stays good for sends (a change on another node shows within it). */
const FRESH_MS = 1_000;

export function createRedisTemplateRepo(redis: RedisClient, prefix: string): TemplateRepo {
  const hash = (org: string, ch: string) => orgKeys(prefix, org)('templates', ch);
  // Every send reads its template: one read in the last FRESH_MS is taken from memory. A change
  // through this node is seen at once (forgotten after the write); one on another node within
  // FRESH_MS. A missing template is never remembered, so a new one is found at once.
  const fresh = new FreshCache<TemplateRecord | null>(FRESH_MS);
  const channelOf = (org: string, ch: string) => `${hash(org, ch)}\n`;
  const forgetChannel = (org: string, ch: string) => fresh.forget((k) => k.startsWith(channelOf(org, ch)));
  return {
    async get(org, ch, name, lang) {
      return fresh.get(
        `${channelOf(org, ch)}${templateKey(name, lang)}`,
        async () => {
          const raw = await redis.hGet(hash(org, ch), templateKey(name, lang));
          return raw == null ? null : (JSON.parse(raw) as TemplateRecord);
        },
        (t) => t !== null,
      );
    },
    async list(org, ch) {
      const all = await redis.hVals(hash(org, ch));
      return all
        .map((r) => JSON.parse(r) as TemplateRecord)
        .sort((a, b) => a.name.localeCompare(b.name) || a.language.localeCompare(b.language));
    },
    async put(t) {
      await redis.hSet(hash(t.organizationId, t.channelId), templateKey(t.name, t.language), JSON.stringify(t));
      forgetChannel(t.organizationId, t.channelId);
    },
    async delete(org, ch, name, lang) {
      const deleted = (await redis.hDel(hash(org, ch), templateKey(name, lang))) > 0;
      forgetChannel(org, ch);
      return deleted;
    },
    async replaceFromNetwork(org, ch, synced) {
      const args: (string | number)[] = [synced.length];
      for (const t of synced) args.push(templateKey(t.name, t.language), JSON.stringify({ ...t, organizationId: org, channelId: ch }));
      const removed = Number(await replaceScript.run(redis, [hash(org, ch)], args));
      forgetChannel(org, ch);
      return { removed };
    },
    async deleteChannel(org, ch) {
      await redis.del(hash(org, ch));
      forgetChannel(org, ch);
    },
  };
}
