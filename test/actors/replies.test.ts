import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedActorSystem, durableActor, type ActorSystem, type DurableActorSpec } from '../../src/actors/index.js';
import type { AppError } from '../../src/errors.js';
import { RedisActorStore } from '../../src/store/actors/redis.js';
import { FencedWriteError, type ActorStateRef } from '../../src/store/actors/port.js';
import type { Fence } from '../../src/domain/fence.js';
import { PostgresActorReplyStore } from '../../src/store/actors/postgres.js';
import { silentLogger } from '../../src/log.js';
import { useRedisClients } from '../harness/use-servers.js';
import { usePostgres } from '../harness/use-postgres.js';
import { RecordingPublisher, testSettings } from './helpers.js';

/*
 * Clustered, the replies of applied commands live in PostgreSQL and the
 * actor's state in Redis keeps only a digest per key: the state stays small
 * whatever the contact's traffic, and a repeated key is still never applied
 * twice.
 */

type Cmd = { kind: 'send'; n: number };
interface Sent {
  count: number;
}
// A reply the size of a real send's (ids, a network message id, a time).
const reply = (n: number) => ({ outcome: 'sent', messageId: `wamid.HBgNNDkxNTEyMzQ1Njc4OBUCABEYEjQ${String(n).padStart(8, '0')}AA==`, sessionId: '6f1c8f0e-6a43-4b43-9d55-3b0e1f6a9a11', contactId: 'c0c2f4f6-2b1e-4d8a-9a51-8f0f3b6c2d11', sentAt: new Date().toISOString(), _id: `m_${n}_6f1c8f0e6a434b439d553b0e1f6a9a11` });

const runs: number[] = [];
const spec = (): DurableActorSpec<Sent, Cmd, { send: ReturnType<typeof reply> }> => ({
  type: 'sender',
  initial: () => ({ count: 0 }),
  parse: (raw) => raw as Cmd,
  handlers: {
    send: (s, cmd) => {
      runs.push(cmd.n);
      return { state: { count: s.count + 1 }, reply: reply(cmd.n) };
    },
  },
  maxIdempotencyKeys: 100,
});

const redis = useRedisClients();
const postgres = usePostgres();
const systems: ActorSystem[] = [];
afterEach(async () => {
  await Promise.all(systems.splice(0).map((s) => s.stop()));
  runs.length = 0;
});

/** A store whose writes can be refused as a stale owner's are, or lost on the way back as a crashed node's. */
class FencingStore extends RedisActorStore {
  stale = false;
  /** The next write is stored, then reported failed (the node died before hearing the answer). */
  dropNextAnswer = false;
  override async save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void> {
    if (this.stale) throw new FencedWriteError(fence);
    await super.save(ref, value, fence);
    if (this.dropNextAnswer) {
      this.dropNextAnswer = false;
      throw new Error('connection lost after the write');
    }
  }
}

async function start(opts: { replies: boolean; now?: () => number; prefix: string }) {
  const store = new FencingStore(await redis.client(), opts.prefix);
  const db = await postgres.open();
  const replies = new PostgresActorReplyStore(db, 60_000, opts.now);
  const system = createEmbeddedActorSystem(testSettings(), { store, log: silentLogger });
  system.register('sender', durableActor(spec(), { store, events: new RecordingPublisher(), replies: opts.replies ? replies : undefined }));
  await system.start();
  systems.push(system);
  const ask = (n: number, key: string) => system.ask({ type: 'sender', key: 'c1' }, { kind: 'send', n }, { idempotencyKey: key });
  return { ask, replies, store };
}

describe('remembered replies in PostgreSQL', () => {
  it('keeps a contact\'s state under 4 KB after 300 keyed commands (the replies in the state take 30 KB)', async () => {
    const apart = await start({ replies: true, prefix: 'ra' });
    for (let i = 0; i < 300; i++) await apart.ask(i, `key-${i}`);
    const inline = await start({ replies: false, prefix: 'rb' });
    for (let i = 0; i < 300; i++) await inline.ask(i, `key-${i}`);
    // The largest value under the prefix: the contact's state (the rest are the partition's epoch and lease).
    const raw = async (prefix: string) => {
      const c = (await redis.client()) as unknown as { keys(p: string): Promise<string[]>; memoryUsage(k: string): Promise<number | null> };
      const sizes = await Promise.all((await c.keys(`${prefix}:*`)).map((k) => c.memoryUsage(k)));
      return Math.max(...sizes.map((s) => s ?? 0));
    };
    expect(await raw('ra')).toBeLessThan(4096);
    expect(await raw('rb')).toBeGreaterThan(20_000);
  });

  it('answers a repeated key with the first reply, without running the command again', async () => {
    const a = await start({ replies: true, prefix: 'rc' });
    const first = await a.ask(1, 'k1');
    await a.ask(2, 'k2');
    expect(await a.ask(99, 'k1')).toEqual(first);
    expect(runs).toEqual([1, 2]);
  });

  it('refuses a repeat whose reply expired with 409, and applies nothing twice', async () => {
    let now = Date.now();
    const a = await start({ replies: true, prefix: 'rd', now: () => now });
    await a.ask(1, 'k1');
    now += 61_000;
    const err = (await a.ask(1, 'k1').catch((e: unknown) => e)) as AppError;
    expect(err.status).toBe(409);
    expect(err.code).toBe('idempotency_reply_expired');
    expect(runs).toEqual([1]);
    expect(await a.replies.prune()).toBe(1);
  });

  it('answers the first reply when the state write was stored but its answer lost (a node killed between the two)', async () => {
    const a = await start({ replies: true, prefix: 're' });
    a.store.dropNextAnswer = true;
    const err = (await a.ask(1, 'k1').catch((e: unknown) => e)) as AppError;
    expect(err.status).toBe(503);
    // The state names the key's digest, and its reply was committed before it.
    expect(await a.ask(1, 'k1')).toEqual(expect.objectContaining({ outcome: 'sent' }));
    expect(runs).toEqual([1]);
  });

  it("keeps the newest owner's reply: a stale owner's put (a lower epoch) never replaces it", async () => {
    const a = await start({ replies: true, prefix: 'rf' });
    const ref = { type: 'sender', key: 'c1', partition: 0 };
    await a.replies.put(ref, 'd1', { by: 'owner' }, 7);
    await a.replies.put(ref, 'd1', { by: 'stale owner' }, 6);
    expect(await a.replies.get(ref, 'd1')).toEqual({ reply: { by: 'owner' } });
    // The same owner (a rerun whose state write was not stored) replaces its own.
    await a.replies.put(ref, 'd1', { by: 'owner, again' }, 7);
    expect(await a.replies.get(ref, 'd1')).toEqual({ reply: { by: 'owner, again' } });
  });

  it('applies nothing when the state write is refused (a stale owner), and the current owner applies the key once', async () => {
    const a = await start({ replies: true, prefix: 'rg' });
    a.store.stale = true;
    const err = (await a.ask(1, 'k1').catch((e: unknown) => e)) as AppError;
    expect(err.status).toBe(503); // ownership lost, retried by the caller until it gives up
    a.store.stale = false;
    expect(await a.ask(2, 'k1')).toEqual(expect.objectContaining({ messageId: reply(2).messageId }));
    expect(await a.ask(3, 'k1')).toEqual(expect.objectContaining({ messageId: reply(2).messageId }));
  });
});
