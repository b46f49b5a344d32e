import type { AuthSession } from '../../domain/types.js';
import { getEach, LuaScript, orgKeys, type RedisClient } from '../redis/client.js';
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
 *
 * A session and its user's index live in different slots, so they are
 * written by separate commands: the index first (an entry whose session is
 * gone costs nothing when the user's sessions are ended), the session second.
 * Failure counters are one key each; several are counted by one script per key, and read (on
 * every API key request) together: one MGET on a single server, one plain GET per key on a cluster.
 */

// Counts one failure; the first one of a window sets the window's expiry.
const recordFailureScript = new LuaScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
`);

// A counter and its time left, read together.
const readFailureScript = new LuaScript(`
return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('PTTL', KEYS[1])}
`);

// KEYS[1]: a user's session index. Adds a session hash; the index lives as
// long as the longest session it lists can (its absolute end; NX gives a new
// set its first expiry, GT only ever moves it later). Members of sessions
// that expired on their own are dropped when the set is next read to end them.
const indexSessionScript = new LuaScript(`
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2], 'NX')
redis.call('PEXPIREAT', KEYS[1], ARGV[2], 'GT')
return 1
`);

export function createRedisAuthSessionRepo(client: RedisClient, prefix = 'sb'): AuthSessionRepo {
  const sessionKey = (idHash: string) => `${prefix}:session:${idHash}`;
  const userSet = (organizationId: string, userId: string) => orgKeys(prefix, organizationId)('user-sessions', userId);
  const tokenKey = (hash: string) => `${prefix}:inbox-token:${hash}`;
  return {
    async create(session, evictAtMs) {
      await indexSessionScript.run(client, [userSet(session.organizationId, session.userId)], [session.idHash, Date.parse(session.expiresAt)]);
      await client.set(sessionKey(session.idHash), JSON.stringify(session), { expiration: { type: 'PXAT', value: evictAtMs } });
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
      // Each session key is in a slot of its own: one DEL each, then the index.
      const deleted = await Promise.all(hashes.map((h) => client.del(sessionKey(h))));
      await client.sRem(set, hashes);
      return deleted.reduce<number>((n, r) => n + Number(r), 0);
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
      return Promise.all(
        subjects.map(async (s) => {
          const [count, ttl] = ((await readFailureScript.run(client, [key(s)], [])) as number[]).map(Number) as [number, number];
          return count > 0 && ttl > 0 ? { count, resetMs: ttl } : { count: 0, resetMs: 0 };
        }),
      );
    },
    async blockedMs(limits) {
      // The counters in one read (one MGET on a single server, a GET per subject on a cluster, where
      // they sit in different slots); the time left is asked only of a subject at its limit.
      // A counter without a time left (-1/-2: expired between the two) counts as nothing, as in `get`.
      const counts = await getEach(client, limits.map(({ subject }) => key(subject)));
      const waits = await Promise.all(limits.map(async ({ subject, limit }, i) => (Number(counts[i] ?? 0) >= limit ? Math.max(0, await client.pTTL(key(subject))) : 0)));
      return Math.max(0, ...waits);
    },
    async record(subjects, windowMs) {
      return Promise.all(
        subjects.map(async (s) => {
          const [count, resetMs] = ((await recordFailureScript.run(client, [key(s)], [windowMs])) as number[]).map(Number) as [number, number];
          return { count, resetMs };
        }),
      );
    },
  };
}
