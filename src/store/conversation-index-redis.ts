import type { ConversationRecord, ReadMarker } from '../domain/conversation.js';
import { LuaScript, orgKeys, type RedisClient } from './redis-client.js';
import type { ConversationIndexRepo } from './conversation-index-types.js';

/*
 * Key layout (all under the organization's hash tag):
 *   <p>:{o:<org>}:conv:<aeid>         record JSON
 *   <p>:{o:<org>}:conv-all            zset, score = updatedAt (ms)
 *   <p>:{o:<org>}:conv-s:<status>     zset per status, score = queuedAt (queued) or updatedAt (ms)
 *   <p>:{o:<org>}:conv-a:<agentId>    zset of an agent's assigned conversations, score = updatedAt (ms)
 *   <p>:{o:<org>}:conv-seen:<userId>  hash aeid → read marker JSON (what the user has opened)
 */

// Version check, record and every index move in one step: a stale writer
// changes nothing, and the indexes never disagree with the record.
const putScript = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
local base = ARGV[1]
if cur then
  local old = cjson.decode(cur)
  if tonumber(old.version) >= tonumber(ARGV[3]) then return 0 end
  redis.call('ZREM', base .. 'conv-s:' .. old.status, ARGV[2])
  if old.assigneeId ~= cjson.null and old.assigneeId ~= nil then redis.call('ZREM', base .. 'conv-a:' .. old.assigneeId, ARGV[2]) end
end
redis.call('SET', KEYS[1], ARGV[4])
redis.call('ZADD', base .. 'conv-all', ARGV[6], ARGV[2])
redis.call('ZADD', base .. 'conv-s:' .. ARGV[5], ARGV[7], ARGV[2])
if ARGV[8] ~= '' then redis.call('ZADD', base .. 'conv-a:' .. ARGV[8], ARGV[6], ARGV[2]) end
return 1
`);

export function createRedisConversationIndex(redis: RedisClient, prefix: string): ConversationIndexRepo {
  const keys = (org: string) => orgKeys(prefix, org);
  const read = async (org: string, aeids: string[]): Promise<ConversationRecord[]> => {
    if (aeids.length === 0) return [];
    const raws = await redis.mGet(aeids.map((a) => keys(org)('conv', a)));
    return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as ConversationRecord);
  };
  return {
    async put(r) {
      const k = keys(r.organizationId);
      const assignee = r.status === 'assigned' && r.assigneeId !== null ? r.assigneeId : '';
      const updated = Date.parse(r.updatedAt);
      const statusScore = r.status === 'queued' && r.queuedAt !== null ? Date.parse(r.queuedAt) : updated;
      // The key builder's base (`<p>:{o:<org>}:`) lets the script name the index keys it moves a record between;
      // they share the record's hash tag, so the script stays within one slot.
      const base = k('');
      const written = await putScript.run(redis, [k('conv', r.audienceExternalId)], [base, r.audienceExternalId, r.version, JSON.stringify(r), r.status, updated, statusScore, assignee]);
      return Number(written) === 1;
    },
    async markSeen(org, userId, aeid, marker) {
      await redis.hSet(keys(org)('conv-seen', userId), aeid, JSON.stringify(marker));
    },
    async seen(org, userId, aeids) {
      const out = new Map<string, ReadMarker>();
      if (aeids.length === 0) return out;
      const raws = await redis.hmGet(keys(org)('conv-seen', userId), aeids);
      raws.forEach((raw, i) => {
        if (typeof raw === 'string') out.set(aeids[i]!, JSON.parse(raw) as ReadMarker);
      });
      return out;
    },
    async get(org, aeid) {
      const raw = await redis.get(keys(org)('conv', aeid));
      return raw === null ? null : (JSON.parse(raw) as ConversationRecord);
    },
    async list(q) {
      const k = keys(q.organizationId);
      let key: string;
      if (q.assigneeId !== undefined) {
        if (q.status !== undefined && q.status !== 'assigned') return { conversations: [], total: 0 };
        key = k('conv-a', q.assigneeId);
      } else key = q.status === undefined ? k('conv-all') : k('conv-s', q.status);
      const oldestFirst = q.status === 'queued';
      const [total, aeids] = await Promise.all([
        redis.zCard(key),
        redis.zRange(key, q.offset, q.offset + q.limit - 1, oldestFirst ? undefined : { REV: true }),
      ]);
      return { conversations: await read(q.organizationId, aeids), total };
    },
  };
}
