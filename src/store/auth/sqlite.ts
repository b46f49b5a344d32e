import type { Clock } from '../../clock.js';
import type { AuthSession } from '../../domain/types.js';
import type { SqliteDb } from '../sqlite/db.js';
import type { AuthSessionRepo, FailureCount, FailureCounter, InboxTokenGrant } from './port.js';

type StoredSession = AuthSession & { evictAtMs: number };
const COLL = 'authSessions';

/**
 * Sessions in the node's SQLite database (durable: a restart keeps people
 * signed in); inbox tokens in memory only, since they live for a minute. One
 * process, and each check-then-write runs in one synchronous `db.run`.
 */
export function createSqliteAuthSessionRepo(db: SqliteDb, clock: Clock): AuthSessionRepo {
  const tokens = new Map<string, { grant: InboxTokenGrant; expiresAt: number }>();
  let creates = 0;
  const sweep = async () => {
    const now = clock.now();
    const ops = db.entries<StoredSession>(COLL).filter(([, s]) => s.evictAtMs <= now).map(([key]) => ({ coll: COLL, key, delete: true as const }));
    for (const [k, t] of tokens) if (t.expiresAt <= now) tokens.delete(k);
    if (ops.length > 0) await db.write(ops);
  };
  const live = (s: StoredSession | undefined) => (s !== undefined && s.evictAtMs > clock.now() ? s : undefined);
  const strip = ({ evictAtMs: _e, ...s }: StoredSession): AuthSession => s;

  return {
    async create(session, evictAtMs) {
      if (++creates % 100 === 1) await sweep();
      await db.put(COLL, session.idHash, { ...session, evictAtMs });
    },
    async get(idHash) {
      const s = live(db.get<StoredSession>(COLL, idHash));
      return s ? strip(s) : null;
    },
    async touch(idHash, lastSeenAt, evictAtMs) {
      await db.run(() => {
        const s = live(db.get<StoredSession>(COLL, idHash));
        if (s) db.apply([{ coll: COLL, key: idHash, value: { ...s, lastSeenAt, evictAtMs } }]);
      });
    },
    async delete(idHash) {
      if (db.has(COLL, idHash)) await db.delete(COLL, idHash);
    },
    async deleteForUser(organizationId, userId, keep) {
      return db.run(() => {
        const ops = db
          .entries<StoredSession>(COLL)
          .filter(([key, s]) => s.organizationId === organizationId && s.userId === userId && key !== keep)
          .map(([key]) => ({ coll: COLL, key, delete: true as const }));
        db.apply(ops);
        return ops.length;
      });
    },
    async putInboxToken(tokenHash, grant, ttlMs) {
      tokens.set(tokenHash, { grant, expiresAt: clock.now() + ttlMs });
    },
    async takeInboxToken(tokenHash) {
      const t = tokens.get(tokenHash);
      tokens.delete(tokenHash);
      return t !== undefined && t.expiresAt > clock.now() ? t.grant : null;
    },
  };
}

/** In-process failure counts (embedded mode: one node). A restart forgets them. */
export function createMemoryFailureCounter(clock: Clock): FailureCounter {
  const counts = new Map<string, { count: number; resetAt: number }>();
  let records = 0;
  const read = (subject: string, now: number): FailureCount => {
    const c = counts.get(subject);
    if (c === undefined || c.resetAt <= now) return { count: 0, resetMs: 0 };
    return { count: c.count, resetMs: c.resetAt - now };
  };
  return {
    async get(subjects) {
      const now = clock.now();
      return subjects.map((s) => read(s, now));
    },
    async blockedMs(limits) {
      const now = clock.now();
      let wait = 0;
      for (const { subject, limit } of limits) {
        const c = read(subject, now);
        if (c.count >= limit) wait = Math.max(wait, c.resetMs);
      }
      return wait;
    },
    async record(subjects, windowMs) {
      const now = clock.now();
      if (++records % 1000 === 0) for (const [k, c] of counts) if (c.resetAt <= now) counts.delete(k);
      return subjects.map((s) => {
        const c = counts.get(s);
        const next = c === undefined || c.resetAt <= now ? { count: 1, resetAt: now + windowMs } : { count: c.count + 1, resetAt: c.resetAt };
        counts.set(s, next);
        return { count: next.count, resetMs: next.resetAt - now };
      });
    },
  };
}
