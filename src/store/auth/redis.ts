import type { AuthSession } from '../../domain/types.js';
import { LuaScript, orgKeys, type RedisClient } from '../redis-client.js';
import type { AuthSessionRepo, FailureCounter, InboxTokenGrant } from './port.js';

/*
 * Key layout (prefix `sb` by default):
 *
 *   sb:session:<sha256>                      session JSON, expires at its eviction time (global:
 *                                            a cookie carries no organization, so it is found by hash,
 *                                            like an API key)
 *   sb:{o:<org>}:user-sessions:<userId>      set of the user's session hashes, to end them all
 *   sb:inbox-token:<sha256>                  single-use inbox token grant, PX 60 s
 *   sb:authfail:<subject>                    failure counter, expires when its window ends
 */

// Counts one failure; the first one of a window sets the window's expiry.
const recordFailureScript = new LuaScript(`
local out = {}
for i = 1, #KEYS do
  local n = redis.call('INCR', KEYS[i])
  if n == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
    ttl = tonumber(ARGV[1])
  end
  out[#out + 1] = n
  out[#out + 1] = ttl
end
return out
`);

export function createRedisAuthSessionRepo(client: RedisClient, prefix = 'sb'): AuthSessionRepo {
  const sessionKey = (idHash: string) => `${prefix}:session:${idHash}`;
  const userSet = (organizationId: string, userId: string) => orgKeys(prefix, organizationId)('user-sessions', userId);
  const tokenKey = (hash: string) => `${prefix}:inbox-token:${hash}`;
  return {
    async create(session, evictAtMs) {
      const set = userSet(session.organizationId, session.userId);
      await client
        .multi()
        .set(sessionKey(session.idHash), JSON.stringify(session), { expiration: { type: 'PXAT', value: evictAtMs } })
        .sAdd(set, session.idHash)
        // The index lives as long as the longest session it lists can (its absolute
        // end; NX gives a new set its first expiry, GT only ever moves it later).
        // Members of sessions that expired on their own are dropped when the set
        // is next read to end them.
        .pExpireAt(set, Date.parse(session.expiresAt), 'NX')
        .pExpireAt(set, Date.parse(session.expiresAt), 'GT')
        .exec();
    },
    async get(idHash) {
      const raw = await client.get(sessionKey(idHash));
      return raw === null ? null : (JSON.parse(raw) as AuthSession);
    },
    async touch(idHash, lastSeenAt, evictAtMs) {
      const raw = await client.get(sessionKey(idHash));
      if (raw === null) return;
      const s = JSON.parse(raw) as AuthSession;
      // XX: a session deleted since the read (logout on another node) stays deleted.
      await client.set(sessionKey(idHash), JSON.stringify({ ...s, lastSeenAt }), { condition: 'XX', expiration: { type: 'PXAT', value: evictAtMs } });
    },
    async delete(idHash) {
      const raw = await client.getDel(sessionKey(idHash));
      if (raw === null) return;
      const s = JSON.parse(raw) as AuthSession;
      await client.sRem(userSet(s.organizationId, s.userId), idHash);
    },
    async deleteForUser(organizationId, userId, keep) {
      const set = userSet(organizationId, userId);
      const hashes = (await client.sMembers(set)).filter((h) => h !== keep);
      if (hashes.length === 0) return 0;
      const multi = client.multi();
      for (const h of hashes) multi.del(sessionKey(h));
      multi.sRem(set, hashes);
      const replies = await multi.exec();
      return replies.slice(0, hashes.length).reduce<number>((n, r) => n + Number(r), 0);
    },
    async putInboxToken(tokenHash, grant, ttlMs) {
      await client.set(tokenKey(tokenHash), JSON.stringify(grant), { expiration: { type: 'PX', value: ttlMs } });
    },
    async takeInboxToken(tokenHash) {
      const raw = await client.getDel(tokenKey(tokenHash));
      return raw === null ? null : (JSON.parse(raw) as InboxTokenGrant);
    },
  };
}

export function createRedisFailureCounter(client: RedisClient, prefix = 'sb'): FailureCounter {
  const key = (subject: string) => `${prefix}:authfail:${subject}`;
  return {
    async get(subjects) {
      if (subjects.length === 0) return [];
      const multi = client.multi();
      for (const s of subjects) multi.get(key(s)).pTTL(key(s));
      const r = (await multi.exec()) as unknown as (string | number | null)[];
      return subjects.map((_, i) => {
        const count = Number(r[i * 2] ?? 0);
        const ttl = Number(r[i * 2 + 1]);
        return count > 0 && ttl > 0 ? { count, resetMs: ttl } : { count: 0, resetMs: 0 };
      });
    },
    async record(subjects, windowMs) {
      if (subjects.length === 0) return [];
      const r = ((await recordFailureScript.run(client, subjects.map(key), [windowMs])) as number[]).map(Number);
      return subjects.map((_, i) => ({ count: r[i * 2]!, resetMs: r[i * 2 + 1]! }));
    },
  };
}
