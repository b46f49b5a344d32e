import { CONVERSATION_STATUSES, type ConversationRecord, type ReadMarker } from '../../domain/conversation.js';
import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import type { ConversationIndexRepo } from './port.js';

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
// KEYS: record, conv-all, conv-s:<each status in CONVERSATION_STATUSES order>,
// conv-a:<new assignee> (or the record when none), conv-a:<old assignee the
// caller expects> (or the record when none). ARGV: aeid, version, json, index
// of the new status (1-based), updated ms, status score, new assignee or '',
// old assignee the caller expects or ''. Every key is declared, so the caller
// names the old assignee's index beforehand; -1 when the record has another
// assignee (read it and retry). A record is only ever in its own status's
// index (this script keeps it so): it leaves that one when its status
// changes, and its assignee's when that changes; a ZADD to the index it stays
// in just moves its score.
const S = CONVERSATION_STATUSES.length;
const statusIndex = `{${CONVERSATION_STATUSES.map((st, i) => `['${st}'] = ${i + 1}`).join(', ')}}`;
const putScript = new LuaScript(`
local STATUS = ${statusIndex}
local cur = redis.call('GET', KEYS[1])
local oldA = ''
local oldS = nil
if cur then
  local old = cjson.decode(cur)
  if tonumber(old.version) >= tonumber(ARGV[2]) then return 0 end
  if old.assigneeId ~= cjson.null and old.assigneeId ~= nil then oldA = old.assigneeId end
  oldS = STATUS[old.status]
end
if oldA ~= ARGV[8] then return -1 end
if cur then
  if oldS == nil then
    for i = 3, ${2 + S} do redis.call('ZREM', KEYS[i], ARGV[1]) end
  elseif oldS ~= tonumber(ARGV[4]) then
    redis.call('ZREM', KEYS[2 + oldS], ARGV[1])
  end
  if oldA ~= '' and oldA ~= ARGV[7] then redis.call('ZREM', KEYS[${4 + S}], ARGV[1]) end
end
redis.call('SET', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
redis.call('ZADD', KEYS[2 + tonumber(ARGV[4])], ARGV[6], ARGV[1])
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[${3 + S}], ARGV[5], ARGV[1]) end
return 1
`);

const MAX_PUT_ATTEMPTS = 20;

export function createRedisConversationIndex(redis: RedisClient, prefix: string): ConversationIndexRepo {
  const keys = (org: string) => orgKeys(prefix, org);
  const read = async (org: string, aeids: string[]): Promise<ConversationRecord[]> => {
    if (aeids.length === 0) return [];
    const raws = await redis.mGet(aeids.map((a) => keys(org)('conv', a)));
    return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as ConversationRecord);
  };
  // The assignee each record had when this node last wrote it: the script's guess of the old
  // assignee, so a put is one script, not a read and a script. A wrong guess (another node
  // changed it) costs a read and a second try; with none the new record's assignee is guessed.
  const lastAssignee = new Map<string, string>();
  return {
    async put(r) {
      const k = keys(r.organizationId);
      const assignee = r.status === 'assigned' && r.assigneeId !== null ? r.assigneeId : '';
      const updated = Date.parse(r.updatedAt);
      const statusScore = r.status === 'queued' && r.queuedAt !== null ? Date.parse(r.queuedAt) : updated;
      const record = k('conv', r.audienceExternalId);
      let old = lastAssignee.get(record) ?? r.assigneeId ?? '';
      for (let attempt = 0; attempt < MAX_PUT_ATTEMPTS; attempt++) {
        if (attempt > 0) {
          const raw = await redis.get(record);
          old = raw === null ? '' : ((JSON.parse(raw) as ConversationRecord).assigneeId ?? '');
        }
        const written = Number(
          await putScript.run(
            redis,
            [record, k('conv-all'), ...CONVERSATION_STATUSES.map((s) => k('conv-s', s)), assignee === '' ? record : k('conv-a', assignee), old === '' ? record : k('conv-a', old)],
            [r.audienceExternalId, r.version, JSON.stringify(r), CONVERSATION_STATUSES.indexOf(r.status) + 1, updated, statusScore, assignee, old],
          ),
        );
        if (written === 1) {
          if (lastAssignee.size >= 10_000) lastAssignee.clear();
          lastAssignee.set(record, r.assigneeId ?? '');
        } else lastAssignee.delete(record);
        if (written !== -1) return written === 1;
      }
      throw new Error(`conversation ${r.audienceExternalId} keeps changing its assignee; not indexed`);
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
