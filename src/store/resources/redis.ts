import { conflict } from '../../errors.js';
import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import { nameKey, type Resource, type ResourceStore } from './port.js';

/*
 *   sb:{o:<org>}:res:<id>      resource JSON
 *   sb:{o:<org>}:res:names     hash lower-cased name -> id
 *   sb:{o:<org>}:res:ids       zset id, score = createdAt ms
 */

const createScript = new LuaScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
return 1
`);

// KEYS: res, names. ARGV: expected version, json, old name, new name, id. -1 = changed meanwhile, -2 = name taken.
const replaceScript = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return -1 end
if tostring(cjson.decode(cur).version) ~= ARGV[1] then return -1 end
if ARGV[3] ~= ARGV[4] then
  if redis.call('HSETNX', KEYS[2], ARGV[4], ARGV[5]) == 0 then return -2 end
  redis.call('HDEL', KEYS[2], ARGV[3])
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`);

const deleteScript = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('DEL', KEYS[1])
return 1
`);

export function createRedisResourceStore(client: RedisClient, prefix: string): ResourceStore {
  const k = (org: string) => orgKeys(prefix, org);
  const taken = (name: string) => conflict('resource_name_taken', 'a resource with this name exists in the organization', { name });
  return {
    async create(r) {
      const kk = k(r.organizationId);
      const ok = await createScript.run(client, [kk('res', 'names'), kk('res', r.id), kk('res', 'ids')], [nameKey(r.name), r.id, JSON.stringify(r), Date.parse(r.createdAt)]);
      if (ok === 0) throw taken(r.name);
    },
    async get(org, id) {
      const raw = await client.get(k(org)('res', id));
      return raw === null ? null : (JSON.parse(raw) as Resource);
    },
    async list(org, page) {
      const kk = k(org);
      const [total, ids] = await Promise.all([client.zCard(kk('res', 'ids')), client.zRange(kk('res', 'ids'), page.offset, page.offset + page.limit - 1)]);
      if (ids.length === 0) return { resources: [], total };
      const raw = await client.mGet(ids.map((id) => kk('res', id)));
      return { resources: raw.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as Resource), total };
    },
    async replace(expected, next) {
      const kk = k(expected.organizationId);
      const r = await replaceScript.run(client, [kk('res', expected.id), kk('res', 'names')], [expected.version, JSON.stringify(next), nameKey(expected.name), nameKey(next.name), expected.id]);
      if (r === -2) throw taken(next.name);
      return r === 1;
    },
    async delete(org, id) {
      const kk = k(org);
      const cur = await this.get(org, id);
      if (cur === null) return false;
      return (await deleteScript.run(client, [kk('res', id), kk('res', 'names'), kk('res', 'ids')], [nameKey(cur.name), id])) === 1;
    },
  };
}
