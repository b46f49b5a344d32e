import { orgKeys, type RedisClient } from '../redis/client.js';
import type { RequestKeyMatch, RequestKeyRepo } from './port.js';

/**
 * Request keys in Redis: `<prefix>:{o:<org>}:request-key:<key>` holds the
 * fingerprint, with a PX TTL. One command per use: `SET … NX PX … GET`
 * (Redis 7) writes the fingerprint only where the key is absent and answers
 * what was there, atomically, so of racing first uses exactly one finds
 * nothing (`new`) and the others compare with it.
 */
export function createRedisRequestKeyRepo(client: RedisClient, prefix: string): RequestKeyRepo {
  return {
    async remember(org, key, fingerprint, ttlMs): Promise<RequestKeyMatch> {
      const prev = await client.set(orgKeys(prefix, org)('request-key', key), fingerprint, { condition: 'NX', expiration: { type: 'PX', value: ttlMs }, GET: true });
      if (prev === null) return 'new';
      return prev === fingerprint ? 'same' : 'different';
    },
  };
}
