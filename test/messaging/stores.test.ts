import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openNodeDbIn, connectRedis, type RedisClient } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createSqliteChannelRepo } from '../../src/store/channels/sqlite.js';
import { createRedisChannelRepo } from '../../src/store/channels/redis.js';
import { createSqliteTemplateRepo } from '../../src/store/templates/sqlite.js';
import { createRedisTemplateRepo } from '../../src/store/templates/redis.js';
import { createSqliteCreditRepo } from '../../src/store/credits/sqlite.js';
import { createRedisCreditRepo } from '../../src/store/credits/redis.js';
import { createMemoryRateLimiter } from '../../src/store/ratelimit/memory.js';
import { createRedisRateLimiter } from '../../src/store/ratelimit/redis.js';
import { createSqliteSessionMessageRepo } from '../../src/store/session-messages/sqlite.js';
import { createRedisSessionMessageRepo } from '../../src/store/session-messages/redis.js';
import { systemClock } from '../../src/clock.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';
import { runMessagingStoreContract, waChannel } from './store-contract.js';

runMessagingStoreContract('embedded', async () => {
  const db = await openNodeDbIn(null);
  const box = new SecretBox(randomBytes(32));
  const limiter = createMemoryRateLimiter(systemClock);
  const messages = createSqliteSessionMessageRepo(db);
  return {
    channels: createSqliteChannelRepo(db, box),
    templates: createSqliteTemplateRepo(db),
    credits: createSqliteCreditRepo(db, systemClock),
    rateLimiter: limiter,
    messages,
    // One process in embedded mode: every "node" is this one.
    otherNodeRateLimiter: () => limiter,
    otherNodeMessages: () => messages,
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
    messages: createRedisSessionMessageRepo(client, prefix),
    otherNodeRateLimiter: () => {
      // A second connection, as another node would have.
      const c = client.duplicate();
      extra.push(c);
      void c.connect();
      return createRedisRateLimiter(c, prefix);
    },
    otherNodeMessages: () => {
      const c = client.duplicate();
      extra.push(c);
      void c.connect();
      return createRedisSessionMessageRepo(c, prefix);
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
      for (const c of extra) await c.close().catch(() => {});
      await client.close();
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

  it('embedded session messages keep their order across a restart', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sb-msgs-'));
    try {
      const db = await openNodeDbIn(dir);
      const repo = createSqliteSessionMessageRepo(db);
      for (let i = 0; i < 5; i++) {
        await repo.append({ _id: `m${9 - i}`, sessionId: 's', organizationId: 'o', channelId: 'c', audienceExternalId: 'a', direction: 'inbound', sender: 'contact', content: { type: 'text', text: String(i) }, sentAt: new Date().toISOString(), messageId: null });
      }
      const again = createSqliteSessionMessageRepo(await openNodeDbIn(dir));
      expect((await again.listSession('o', 's'))!.map((m) => m.content.text)).toEqual(['0', '1', '2', '3', '4']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a channel stored with one key does not open with another', async () => {
    const db = await openNodeDbIn(null);
    const c = waChannel('o1');
    await createSqliteChannelRepo(db, new SecretBox(randomBytes(32))).create(c);
    await expect(createSqliteChannelRepo(db, new SecretBox(randomBytes(32))).get('o1', c.id)).rejects.toThrow();
  });
});
