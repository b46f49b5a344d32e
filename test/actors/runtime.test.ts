import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedActorSystem, durableActor, type Actor, type ActorSystem } from '../../src/actors/index.js';
import type { Fence } from '../../src/domain/fence.js';
import type { ActorStateRef } from '../../src/store/actors/port.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { openNodeDbIn } from '../../src/store/backing.js';
import { AppError } from '../../src/errors.js';
import { deferred, embeddedSystem, ManualClock, RecordingPublisher, testSettings } from './helpers.js';
import { logActorSpec, type LogCommand, type LogReplies } from './log-actor.js';

const systems: ActorSystem[] = [];
afterEach(async () => {
  await Promise.all(systems.splice(0).map((s) => s.stop()));
});

async function logSystem(over: Parameters<typeof embeddedSystem>[0] = {}, clock?: ManualClock) {
  const env = await embeddedSystem(over, clock);
  env.system.register('log', durableActor(logActorSpec(), { store: env.store, events: new RecordingPublisher() }));
  await env.system.start();
  systems.push(env.system);
  return { ...env, logs: env.system.client<LogCommand, LogReplies>('log') };
}

describe('actor runtime (embedded)', () => {
  it('processes one key in arrival order, one command at a time', async () => {
    const { logs } = await logSystem({ mailboxSize: 500 });
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => logs.ask('a', { kind: 'append', seq: i })));
    expect(replies.map((r) => r.length)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect((await logs.ask('a', { kind: 'get' })).log).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it('runs different keys concurrently: a 2 s command does not delay other keys', async () => {
    const { logs } = await logSystem();
    let slowDone = false;
    const slow = logs.ask('slow', { kind: 'append', seq: 1, delayMs: 2_000 }).then((r) => {
      slowDone = true;
      return r;
    });
    const fast = await Promise.all(Array.from({ length: 50 }, (_, i) => logs.ask(`fast-${i}`, { kind: 'append', seq: i })));
    expect(fast).toHaveLength(50);
    // Every other key finished while the slow command was still running.
    expect(slowDone).toBe(false);
    // Commands for the slow key itself wait behind it, in order.
    const after = logs.ask('slow', { kind: 'append', seq: 2 });
    expect((await slow).length).toBe(1);
    expect((await after).length).toBe(2);
  });

  it('starts an actor once when many commands race its start', async () => {
    const { system } = await embeddedSystem();
    systems.push(system);
    const gate = deferred();
    let starts = 0;
    const seen: number[] = [];
    system.register('gated', (): Actor => ({
      async onStart() {
        starts++;
        await gate.promise;
      },
      async onMessage(cmd) {
        seen.push((cmd as { n: number }).n);
        return seen.length;
      },
    }));
    await system.start();
    const replies = Array.from({ length: 20 }, (_, n) => system.ask({ type: 'gated', key: 'k' }, { n }));
    await new Promise((r) => setTimeout(r, 20));
    expect(starts).toBe(1);
    gate.resolve();
    expect(await Promise.all(replies)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(starts).toBe(1);
  });

  it('fails the commands waiting on a failed start, and retries the start with the next command', async () => {
    const { system } = await embeddedSystem();
    systems.push(system);
    let attempt = 0;
    const gate = deferred();
    system.register('flaky', (): Actor => ({
      async onStart() {
        attempt++;
        if (attempt === 1) {
          await gate.promise;
          throw new AppError(503, 'store_down', 'store unavailable');
        }
      },
      async onMessage() {
        return attempt;
      },
    }));
    await system.start();
    const first = Array.from({ length: 3 }, () => system.ask({ type: 'flaky', key: 'k' }, {}).catch((e: unknown) => e));
    gate.resolve();
    for (const r of await Promise.all(first)) expect((r as AppError).code).toBe('store_down');
    expect(await system.ask({ type: 'flaky', key: 'k' }, {})).toBe(2);
    expect(attempt).toBe(2);
  });

  it('refuses commands beyond the mailbox bound with a retryable 503, and drops none it accepted', async () => {
    const { system } = await embeddedSystem({ mailboxSize: 3 });
    systems.push(system);
    const gate = deferred();
    const done: number[] = [];
    system.register('blocked', (): Actor => ({
      async onMessage(cmd) {
        await gate.promise;
        done.push((cmd as { n: number }).n);
        return (cmd as { n: number }).n;
      },
    }));
    await system.start();
    const accepted = [0, 1, 2].map((n) => system.ask({ type: 'blocked', key: 'k' }, { n }));
    // Three unfinished commands (one running, two waiting): the fourth is refused.
    const refused = await system.ask({ type: 'blocked', key: 'k' }, { n: 3 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).status).toBe(503);
    expect((refused as AppError).code).toBe('mailbox_full');
    expect((refused as AppError).retryAfterSeconds).toBeGreaterThan(0);
    expect(system.host.stats().maxMailboxDepth).toBe(3);
    // Other keys are unaffected.
    const other = system.ask({ type: 'blocked', key: 'other' }, { n: 9 });
    gate.resolve();
    expect(await Promise.all(accepted)).toEqual([0, 1, 2]);
    expect(await other).toBe(9);
    // Once there is room again, it is accepted.
    expect(await system.ask({ type: 'blocked', key: 'k' }, { n: 3 })).toBe(3);
    expect(done.filter((n) => n !== 9)).toEqual([0, 1, 2, 3]);
    expect(done).toContain(9);
  });

  it('passivates idle actors (onIdle, onStop) and reloads their state on the next command', async () => {
    const clock = new ManualClock();
    const { logs, system } = await logSystem({ idleMs: 1_000 }, clock);
    await logs.ask('a', { kind: 'append', seq: 1 });
    await logs.ask('b', { kind: 'append', seq: 1 });
    expect(system.host.stats().actors).toBe(2);
    clock.advance(500);
    await logs.ask('b', { kind: 'append', seq: 2 });
    clock.advance(600);
    await system.host.passivateIdle();
    // a was idle 1.1 s, b only 0.6 s.
    expect(system.host.stats().actors).toBe(1);
    await logs.ask('a', { kind: 'append', seq: 2 });
    expect((await logs.ask('a', { kind: 'get' })).log).toEqual([1, 2]);
  });

  it('keeps an actor whose onIdle returns false, and calls onStop on passivation', async () => {
    const clock = new ManualClock();
    const { system } = await embeddedSystem({ idleMs: 100 }, clock);
    systems.push(system);
    const calls: string[] = [];
    let keep = true;
    system.register('sticky', (): Actor => ({
      async onStart() {
        calls.push('start');
      },
      async onMessage() {
        calls.push('message');
        return null;
      },
      onIdle() {
        calls.push('idle');
        return keep ? false : undefined;
      },
      async onStop() {
        calls.push('stop');
      },
    }));
    await system.start();
    await system.ask({ type: 'sticky', key: 'k' }, {});
    clock.advance(200);
    await system.host.passivateIdle();
    expect(system.host.stats().actors).toBe(1);
    keep = false;
    clock.advance(200);
    await system.host.passivateIdle();
    expect(system.host.stats().actors).toBe(0);
    expect(calls).toEqual(['start', 'message', 'idle', 'idle', 'stop']);
  });

  it('answers a retried command with the same idempotency key with the first result, applying it once', async () => {
    const { logs } = await logSystem();
    const r1 = await logs.ask('a', { kind: 'append', seq: 7 }, { idempotencyKey: 'cmd-1' });
    const r2 = await logs.ask('a', { kind: 'append', seq: 7 }, { idempotencyKey: 'cmd-1' });
    expect(r2).toEqual(r1);
    // Concurrent duplicates too.
    const dup = await Promise.all(Array.from({ length: 5 }, () => logs.ask('a', { kind: 'append', seq: 8 }, { idempotencyKey: 'cmd-2' })));
    expect(new Set(dup.map((d) => JSON.stringify(d))).size).toBe(1);
    expect((await logs.ask('a', { kind: 'get' })).log).toEqual([7, 8]);
    // Idempotency keys are per actor: the same key for another contact is another command.
    await logs.ask('b', { kind: 'append', seq: 7 }, { idempotencyKey: 'cmd-1' });
    expect((await logs.ask('b', { kind: 'get' })).log).toEqual([7]);
  });

  it('remembers idempotency keys across passivation, up to the configured number per actor', async () => {
    const clock = new ManualClock();
    const env = await embeddedSystem({ idleMs: 10 }, clock);
    systems.push(env.system);
    env.system.register('log', durableActor(logActorSpec('local', 3), { store: env.store, events: new RecordingPublisher() }));
    await env.system.start();
    const logs = env.system.client<LogCommand, LogReplies>('log');
    for (let i = 1; i <= 4; i++) await logs.ask('a', { kind: 'append', seq: i }, { idempotencyKey: `k${i}` });
    clock.advance(100);
    await env.system.host.passivateIdle();
    expect(env.system.host.stats().actors).toBe(0);
    // k2..k4 are remembered (after a reload from the store); k1 was the oldest of four and is forgotten.
    expect((await logs.ask('a', { kind: 'append', seq: 4 }, { idempotencyKey: 'k4' })).length).toBe(4);
    expect((await logs.ask('a', { kind: 'append', seq: 2 }, { idempotencyKey: 'k2' })).length).toBe(2);
    expect((await logs.ask('a', { kind: 'append', seq: 1 }, { idempotencyKey: 'k1' })).length).toBe(5);
  });

  it('drains a partition: accepted commands finish, new ones are refused as moved', async () => {
    const { system } = await embeddedSystem();
    systems.push(system);
    const gate = deferred();
    system.register('blocked', (): Actor => ({
      async onMessage(cmd) {
        await gate.promise;
        return cmd;
      },
    }));
    await system.start();
    const addr = { type: 'blocked', key: 'k' };
    const p = system.host.partitionOf(addr);
    const accepted = [1, 2, 3].map((n) => system.ask(addr, n));
    const drained = system.host.drainPartition(p);
    // The host refuses at once (the router would retry until the partition's next owner answers).
    const refused = await system.host.deliver({ ...addr, command: 4 }).catch((e: unknown) => e);
    gate.resolve();
    expect((refused as AppError).code).toBe('partition_moved');
    await drained;
    expect(await Promise.all(accepted)).toEqual([1, 2, 3]);
    expect(system.host.actorsIn(p)).toBe(0);
  });

  it('delivers `tell` without waiting for the result', async () => {
    const { system } = await embeddedSystem();
    systems.push(system);
    const gate = deferred();
    const done: number[] = [];
    system.register('blocked', (): Actor => ({
      async onMessage(cmd) {
        await gate.promise;
        done.push(cmd as number);
        return null;
      },
    }));
    await system.start();
    await system.tell({ type: 'blocked', key: 'k' }, 1);
    expect(done).toEqual([]);
    gate.resolve();
    await system.ask({ type: 'blocked', key: 'k' }, 2);
    expect(done).toEqual([1, 2]);
  });
});

/** Writes, then reports a failure: a store whose connection dropped before the reply came back. */
class LostReplyStore extends SqliteActorStore {
  loseNextReply = false;
  override async save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void> {
    await super.save(ref, value, fence);
    if (this.loseNextReply) {
      this.loseNextReply = false;
      throw new Error('connection lost');
    }
  }
}

describe('durable actors when the store fails', () => {
  it('answers a retry after a write of unknown outcome from the store, applying the command once', async () => {
    const store = new LostReplyStore(await openNodeDbIn(null));
    const system = createEmbeddedActorSystem(testSettings(), { store });
    systems.push(system);
    system.register('log', durableActor(logActorSpec(), { store, events: new RecordingPublisher() }));
    await system.start();
    const logs = system.client<LogCommand, LogReplies>('log');
    await logs.ask('a', { kind: 'append', seq: 1 }, { idempotencyKey: 'k1' });
    store.loseNextReply = true;
    const err = await logs.ask('a', { kind: 'append', seq: 2 }, { idempotencyKey: 'k2' }).catch((e: unknown) => e);
    expect((err as AppError).status).toBe(503);
    // The write did land; the actor reloads before the next command instead of trusting its cache.
    expect(await logs.ask('a', { kind: 'append', seq: 2 }, { idempotencyKey: 'k2' })).toMatchObject({ length: 2 });
    expect(await logs.ask('a', { kind: 'append', seq: 3 }, { idempotencyKey: 'k3' })).toMatchObject({ length: 3 });
    expect((await logs.ask('a', { kind: 'get' })).log).toEqual([1, 2, 3]);
  });
});
