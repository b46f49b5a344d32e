import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedDb, connectRedis, type RedisClient } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createEmbeddedChannelRepo } from '../../src/store/channel-embedded.js';
import { createRedisChannelRepo } from '../../src/store/channel-redis.js';
import { createEmbeddedTemplateRepo } from '../../src/store/template-embedded.js';
import { createRedisTemplateRepo } from '../../src/store/template-redis.js';
import { createEmbeddedCreditRepo } from '../../src/store/credit-embedded.js';
import { createRedisCreditRepo } from '../../src/store/credit-redis.js';
import { createMemoryRateLimiter } from '../../src/store/ratelimit-embedded.js';
import { createRedisRateLimiter } from '../../src/store/ratelimit-redis.js';
import { systemClock } from '../../src/clock.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';
import { runMessagingStoreContract, waChannel } from './store-contract.js';

runMessagingStoreContract('embedded', async () => {
  const db = await EmbeddedDb.open(null);
  const box = new SecretBox(randomBytes(32));
  const limiter = createMemoryRateLimiter(systemClock);
  return {
    channels: createEmbeddedChannelRepo(db, box),
    templates: createEmbeddedTemplateRepo(db),
    credits: createEmbeddedCreditRepo(db, systemClock),
    rateLimiter: limiter,
    // One process in embedded mode: every "node" is this one.
    otherNodeRateLimiter: () => limiter,
    rawDump: async () => JSON.stringify([...db.entries('channels')]),
    close: () => db.close(),
  };
});

let redis: ServerProcess;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

runMessagingStoreContract('redis', async () => {
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const client = await connectRedis(redis.url);
  const extra: RedisClient[] = [];
  const box = new SecretBox(randomBytes(32));
  return {
    channels: createRedisChannelRepo(client, prefix, box),
    templates: createRedisTemplateRepo(client, prefix),
    credits: createRedisCreditRepo(client, prefix),
    rateLimiter: createRedisRateLimiter(client, prefix),
    otherNodeRateLimiter: () => {
      // A second connection, as another node would have.
      const c = client.duplicate();
      extra.push(c);
      void c.connect();
      return createRedisRateLimiter(c, prefix);
    },
    rawDump: async () => {
      const keys = await client.keys(`${prefix}:*`);
      const parts: string[] = [];
      for (const k of keys) {
        const type = await client.type(k);
        if (type === 'string') parts.push(k, (await client.get(k)) ?? '');
        else if (type === 'hash') parts.push(k, JSON.stringify(await client.hGetAll(k)));
        else parts.push(k);
      }
      return parts.join('\n');
    },
    close: async () => {
      for (const c of extra) await c.quit().catch(() => {});
      await client.quit();
    },
  };
});

describe('secret box', () => {
  it('opens what it sealed, only with the same key and owner', () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.seal('EAAsecret', 'channel:a:accessToken');
    expect(box.open(sealed, 'channel:a:accessToken')).toBe('EAAsecret');
    expect(() => box.open(sealed, 'channel:b:accessToken')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'channel:a:accessToken')).toThrow();
    expect(() => box.open({ ...sealed, data: Buffer.from('x').toString('base64url') }, 'channel:a:accessToken')).toThrow();
  });

  it('a channel stored with one key does not open with another', async () => {
    const db = await EmbeddedDb.open(null);
    const c = waChannel('o1');
    await createEmbeddedChannelRepo(db, new SecretBox(randomBytes(32))).create(c);
    await expect(createEmbeddedChannelRepo(db, new SecretBox(randomBytes(32))).get('o1', c.id)).rejects.toThrow();
  });
});
