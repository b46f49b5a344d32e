import type { Clock } from '../../clock.js';
import type { SqliteDb, WriteOp } from '../sqlite/db.js';
import type { RequestKeyMatch, RequestKeyRepo } from './port.js';

interface KeyRecord {
  fingerprint: string;
  expiresAt: number;
}

/** Request keys in the node's SQLite database; check and write run without an await in between, so first uses cannot race. */
export function createSqliteRequestKeyRepo(db: SqliteDb, clock: Clock): RequestKeyRepo {
  // By expiry: the TTL is one setting, so appending keeps the order.
  const expiry = [...db.entries<KeyRecord>('requestKeys')].map(([key, r]) => ({ key, expiresAt: r.expiresAt })).sort((a, b) => a.expiresAt - b.expiresAt);
  return {
    async remember(org, key, fingerprint, ttlMs): Promise<RequestKeyMatch> {
      const now = clock.now();
      const id = `${org}/${key}`;
      const prev = db.get<KeyRecord>('requestKeys', id);
      if (prev !== undefined && prev.expiresAt > now) return prev.fingerprint === fingerprint ? 'same' : 'different';
      const ops: WriteOp[] = [{ coll: 'requestKeys', key: id, value: { fingerprint, expiresAt: now + ttlMs } }];
      while (expiry.length > 0 && expiry[0]!.expiresAt <= now && ops.length < 100) {
        const old = expiry.shift()!;
        if ((db.get<KeyRecord>('requestKeys', old.key)?.expiresAt ?? Infinity) <= now) ops.push({ coll: 'requestKeys', key: old.key, delete: true });
      }
      expiry.push({ key: id, expiresAt: now + ttlMs });
      await db.write(ops);
      return 'new';
    },
  };
}
