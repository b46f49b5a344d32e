import type { MessageStatus } from '../../messaging/rules.js';
import type { SessionMessage } from '../../messaging/types.js';
import { LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
import type { MessageLocation, SessionMessageRepo, SessionRef } from './port.js';

/*
 * Key layout (organization hash tag):
 *   <p>:{o:<org>}:smsg:<_id>            message JSON
 *   <p>:{o:<org>}:smsg-net:<wamid>      `<_id>\n<audienceExternalId>` of the message with that network id
 *                                       (only `<_id>` when written by an older version)
 *   <p>:{o:<org>}:session:<sid>         session JSON (SessionRef)
 *   <p>:{o:<org>}:session-msgs:<sid>    list of _id, in recorded order
 *   <p>:{o:<org>}:contact-sessions:<aeid> zset of the contact's session ids, score = opened at (ms)
 */

// KEYS: msg, net (or msg again when none), session, session list, contact's sessions.
// ARGV: json, _id, session json, session id, opened at (ms), the network id's location.
const appendScript = new LuaScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
if KEYS[2] ~= KEYS[1] then redis.call('SET', KEYS[2], ARGV[6]) end
if redis.call('SET', KEYS[3], ARGV[3], 'NX') then redis.call('ZADD', KEYS[5], ARGV[5], ARGV[4]) end
redis.call('RPUSH', KEYS[4], ARGV[2])
return 1
`);

// KEYS: session, contact's sessions. ARGV: session json, session id, opened at (ms).
const registerScript = new LuaScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2]) end
return 1
`);

// KEYS: msg. ARGV: reported status, the message JSON with it. The rules of
// messaging/rules.ts nextStatus, checked against the stored status and
// applied in one step. The stored JSON is only decoded to read its status;
// what is written is the caller's JSON as given (cjson would re-encode empty
// arrays as objects).
const advanceStatusScript = new LuaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return {0, ''} end
local ok, m = pcall(cjson.decode, raw)
local cur = 'accepted'
if ok and type(m) == 'table' and type(m.status) == 'string' then cur = m.status end
local to = ARGV[1]
local rank = {accepted = 0, sent = 1, delivered = 2, read = 3}
local apply
if cur == 'failed' or to == 'accepted' then apply = false
elseif to == 'failed' then apply = (cur == 'accepted' or cur == 'sent')
else apply = rank[to] ~= nil and rank[cur] ~= nil and rank[to] > rank[cur] end
if not apply then return {0, cur} end
redis.call('SET', KEYS[1], ARGV[2])
return {1, to}
`);

/** A network id's entry (see the key layout): the message's `_id`, and its contact unless an older version wrote it. */
const parseLocation = (loc: string): { _id: string; audienceExternalId: string | null } => {
  const nl = loc.indexOf('\n');
  return nl < 0 ? { _id: loc, audienceExternalId: null } : { _id: loc.slice(0, nl), audienceExternalId: loc.slice(nl + 1) };
};

/** Network ids this node remembers where to find (see `located`). */
const MAX_LOCATED = 50_000;

export function createRedisSessionMessageRepo(redis: RedisClient, prefix: string): SessionMessageRepo {
  const k = (org: string) => orgKeys(prefix, org);
  // Where a network id's message lives never changes once written (its entry is written once,
  // with the message, and neither is ever rewritten or deleted): the node remembers it for the
  // messages it appended or located, so the three status webhooks of a send it made need no read.
  const located = new Map<string, MessageLocation>();
  const remember = (org: string, netId: string, loc: MessageLocation) => {
    if (located.size >= MAX_LOCATED) located.clear();
    located.set(`${org}\n${netId}`, loc);
  };
  return {
    async registerSession(ref) {
      const ok = k(ref.organizationId);
      await registerScript.run(redis, [ok('session', ref.sessionId), ok('contact-sessions', ref.audienceExternalId)], [JSON.stringify(ref), ref.sessionId, Date.parse(ref.openedAt)]);
    },
    async append(m) {
      const ok = k(m.organizationId);
      const ref: SessionRef = { sessionId: m.sessionId, organizationId: m.organizationId, audienceExternalId: m.audienceExternalId, openedAt: m.sentAt };
      const r = await appendScript.run(
        redis,
        [ok('smsg', m._id), m.messageId === null ? ok('smsg', m._id) : ok('smsg-net', m.messageId), ok('session', m.sessionId), ok('session-msgs', m.sessionId), ok('contact-sessions', m.audienceExternalId)],
        [JSON.stringify(m), m._id, JSON.stringify(ref), m.sessionId, Date.parse(m.sentAt), `${m._id}\n${m.audienceExternalId}`],
      );
      // Only what this append stored (a message already stored under this _id keeps its own entry).
      const stored = Number(r) === 1;
      if (stored && m.messageId !== null) remember(m.organizationId, m.messageId, { _id: m._id, audienceExternalId: m.audienceExternalId });
      return stored;
    },
    async advanceStatus(m) {
      const [applied, status] = (await advanceStatusScript.run(redis, [k(m.organizationId)('smsg', m._id)], [m.status, JSON.stringify(m)])) as [number, string];
      return { applied: Number(applied) === 1, status: status === '' ? null : (status as MessageStatus) };
    },
    async get(org, id) {
      const raw = await redis.get(k(org)('smsg', id));
      return raw === null ? null : (JSON.parse(raw) as SessionMessage);
    },
    async getByNetworkId(org, netId) {
      // Two reads: a script may only touch the keys it is given, and the message's key comes from the first.
      const loc = await redis.get(k(org)('smsg-net', netId));
      const raw = loc === null ? null : await redis.get(k(org)('smsg', parseLocation(loc)._id));
      return raw === null ? null : (JSON.parse(raw) as SessionMessage);
    },
    async locateByNetworkId(org, netId) {
      const known = located.get(`${org}\n${netId}`);
      if (known !== undefined) return known;
      const loc = await redis.get(k(org)('smsg-net', netId));
      if (loc === null) return null;
      const parsed = parseLocation(loc);
      let found: MessageLocation;
      if (parsed.audienceExternalId !== null) found = { _id: parsed._id, audienceExternalId: parsed.audienceExternalId };
      else {
        // Written before the contact was kept beside the id: read the message.
        const raw = await redis.get(k(org)('smsg', parsed._id));
        if (raw === null) return null;
        const m = JSON.parse(raw) as SessionMessage;
        found = { _id: m._id, audienceExternalId: m.audienceExternalId };
      }
      remember(org, netId, found);
      return found;
    },
    async contactSessions(org, aeid) {
      const ids = await redis.zRange(k(org)('contact-sessions', aeid), 0, -1, { REV: true });
      if (ids.length === 0) return [];
      const raws = await redis.mGet(ids.map((id) => k(org)('session', id)));
      return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as SessionRef);
    },
    async getSession(org, sid) {
      const raw = await redis.get(k(org)('session', sid));
      return raw === null ? null : (JSON.parse(raw) as SessionRef);
    },
    async listSession(org, sid) {
      const [ref, ids] = await Promise.all([redis.get(k(org)('session', sid)), redis.lRange(k(org)('session-msgs', sid), 0, -1)]);
      if (ref === null) return null;
      if (ids.length === 0) return [];
      const raws = await redis.mGet(ids.map((id) => k(org)('smsg', id)));
      return raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as SessionMessage);
    },
  };
}
