import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openNodeDbIn, connectRedis, PgDb, NODE_PG_MIGRATIONS } from '../../src/store/index.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { createSqliteChannelRepo } from '../../src/store/channels/sqlite.js';
import { createPostgresChannelRepo } from '../../src/store/channels/postgres.js';
import { createSqliteTemplateRepo } from '../../src/store/templates/sqlite.js';
import { createPostgresTemplateRepo } from '../../src/store/templates/postgres.js';
import { createSqliteCreditRepo } from '../../src/store/credits/sqlite.js';
import { createPostgresCreditRepo } from '../../src/store/credits/postgres.js';
import { createMemoryRateLimiter } from '../../src/store/ratelimit/memory.js';
import { createRedisRateLimiter } from '../../src/store/ratelimit/redis.js';
import { createSqliteSessionMessageRepo } from '../../src/store/session-messages/sqlite.js';
import { createPostgresSessionMessageRepo } from '../../src/store/session-messages/postgres.js';
import { systemClock } from '../../src/clock.js';
import { startRedis, type ServerProcess } from '../harness/servers.js';
import { usePostgres } from '../harness/use-postgres.js';
import { runMessagingStoreContract, template, waChannel } from './store-contract.js';
import { eventually } from '../harness/eventually.js';

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

const postgres = usePostgres();

/** Two nodes' pools on one fresh schema of the test server. */
async function pgNodes(): Promise<[PgDb, PgDb]> {
  const schema = `t_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const open = () => PgDb.open(postgres.server.url, { migrations: NODE_PG_MIGRATIONS, schema, poolSize: 4 });
  const a = await open();
  return [a, await open()];
}

// Clustered: the records on PostgreSQL, the rate limiter on Redis.
runMessagingStoreContract('postgres', async () => {
  const [db, other] = await pgNodes();
  const client = await connectRedis(redis.url);
  const otherClient = await connectRedis(redis.url);
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const box = new SecretBox(randomBytes(32));
  return {
    channels: createPostgresChannelRepo(db, box),
    templates: createPostgresTemplateRepo(db),
    credits: createPostgresCreditRepo(db, systemClock),
    rateLimiter: createRedisRateLimiter(client, prefix),
    messages: createPostgresSessionMessageRepo(db),
    otherNodeRateLimiter: () => createRedisRateLimiter(otherClient, prefix),
    otherNodeMessages: () => createPostgresSessionMessageRepo(other),
    rawDump: async () => JSON.stringify(await db.rows('SELECT * FROM channels')),
    close: async () => {
      await Promise.all([db.close(), other.close(), client.close(), otherClient.close()]);
    },
  };
});

/*
 * Every send reads its channel and template: each clustered node remembers
 * a read for about a second. Two repos on one database stand for two nodes:
 * a change is seen at once through the one that made it, by the other once
 * its memory has lapsed (waited for, not timed).
 */
describe('remembered reads on clustered nodes', () => {
  it('templates: a change is seen at once on its node, by another node within the bound; a new one at once everywhere', async () => {
    const [da, dbb] = await pgNodes();
    const [a, b] = [createPostgresTemplateRepo(da), createPostgresTemplateRepo(dbb)];
    const t = (over = {}) => template('o1', 'ch1', 'welcome', 'en', over);
    expect(await b.get('o1', 'ch1', 'welcome', 'en')).toBeNull();
    await a.put(t());
    // Not found is never remembered.
    expect((await b.get('o1', 'ch1', 'welcome', 'en'))?.status).toBe('APPROVED');
    expect((await a.get('o1', 'ch1', 'welcome', 'en'))?.status).toBe('APPROVED');
    await a.put(t({ status: 'PAUSED' }));
    expect((await a.get('o1', 'ch1', 'welcome', 'en'))?.status).toBe('PAUSED');
    await eventually(async () => (await b.get('o1', 'ch1', 'welcome', 'en'))?.status === 'PAUSED');
    await a.replaceFromNetwork('o1', 'ch1', []);
    expect(await a.get('o1', 'ch1', 'welcome', 'en')).toBeNull();
    await eventually(async () => (await b.get('o1', 'ch1', 'welcome', 'en')) === null);
    await b.put(t());
    await b.delete('o1', 'ch1', 'welcome', 'en');
    expect(await b.get('o1', 'ch1', 'welcome', 'en')).toBeNull();
    await Promise.all([da.close(), dbb.close()]);
  });

  it('channels: an update or a delete is seen at once on its node, by another within the bound, by id and by number', async () => {
    const [da, dbb] = await pgNodes();
    const box = new SecretBox(randomBytes(32));
    const [a, b] = [createPostgresChannelRepo(da, box), createPostgresChannelRepo(dbb, box)];
    const c = waChannel('o1');
    expect(await b.getByPhoneNumberId(c.phoneNumberId)).toBeNull();
    await a.create(c);
    expect(await b.getByPhoneNumberId(c.phoneNumberId)).toEqual(c);
    expect(await b.get('o1', c.id)).toEqual(c);
    const renamed = { ...c, name: 'Renamed' };
    await a.update(renamed);
    expect(await a.getByPhoneNumberId(c.phoneNumberId)).toEqual(renamed);
    await eventually(async () => (await b.get('o1', c.id))?.name === 'Renamed' && (await b.getByPhoneNumberId(c.phoneNumberId))?.name === 'Renamed');
    expect(await b.delete('o1', c.id)).toBe(true);
    expect(await b.getGlobal(c.id)).toBeNull();
    expect(await b.getByPhoneNumberId(c.phoneNumberId)).toBeNull();
    await eventually(async () => (await a.getGlobal(c.id)) === null && (await a.getByPhoneNumberId(c.phoneNumberId)) === null);
    // The number is free again.
    await a.create(waChannel('o2', { phoneNumberId: c.phoneNumberId }));
    await Promise.all([da.close(), dbb.close()]);
  });
});

describe('message search, PostgreSQL (tsvector)', () => {
  it('finds messages by their text, accents and case folded, and media by its caption', async () => {
    const [db, other] = await pgNodes();
    await other.close();
    const repo = createPostgresSessionMessageRepo(db);
    const base = { sessionId: 's', organizationId: 'o', channelId: 'c', audienceExternalId: 'a', direction: 'inbound' as const, sender: 'contact' as const, sentAt: new Date().toISOString(), messageId: null };
    await repo.append({ ...base, _id: 'm1', content: { type: 'text', text: 'Mi pedido no llegó, ¿dónde está?' } });
    await repo.append({ ...base, _id: 'm2', content: { type: 'image', mediaId: 'x', caption: 'Broken Printer' } });
    await repo.append({ ...base, _id: 'm3', content: { type: 'text', text: 'thanks' } });
    const search = async (q: string) =>
      (await db.rows<{ id: string }>("SELECT id FROM session_messages WHERE org = $1 AND search @@ plainto_tsquery('simple', sb_fold($2)) ORDER BY seq", ['o', q])).map((r) => r.id);
    expect(await search('llego DONDE')).toEqual(['m1']);
    expect(await search('printer')).toEqual(['m2']);
    expect(await search('pedido printer')).toEqual([]);
    await db.close();
  });
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
