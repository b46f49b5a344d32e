import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedActorSystem, durableActor, type ActorSystem, type DurableActorSpec } from '../../src/actors/index.js';
import type { Fence } from '../../src/domain/fence.js';
import type { AppError } from '../../src/errors.js';
import type { DomainEvent, EventPublisher } from '../../src/events/types.js';
import type { ActorStateRef } from '../../src/store/actors/port.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { openNodeDbIn } from '../../src/store/backing.js';
import { systemClock } from '../../src/clock.js';
import { silentLogger } from '../../src/log.js';
import { testSettings } from './helpers.js';

/*
 * Reports (`reportKinds`): commands that tell the actor what happened
 * elsewhere (a status from the chat network). One that changes no state
 * publishes its events without a state write, once its fence is found current.
 */

const systems: ActorSystem[] = [];
afterEach(async () => {
  await Promise.all(systems.splice(0).map((s) => s.stop()));
});

interface Seen {
  ids: string[];
}
type Cmd = { kind: 'note'; id: string } | { kind: 'report'; id: string; remember?: boolean };

const trace: string[] = [];

class TracingStore extends SqliteActorStore {
  override async save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void> {
    await super.save(ref, value, fence);
    trace.push('save');
  }
}

class TracingPublisher implements EventPublisher {
  failNext = 0;
  async publish(e: DomainEvent): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('log down');
    }
    trace.push(`publish ${e.id}`);
  }
}

const ev = (id: string): DomainEvent => ({ id, type: 'thing.reported', organizationId: 'o', createdAt: new Date().toISOString(), data: {} });

function seenSpec(): DurableActorSpec<Seen, Cmd, { note: number; report: number }> {
  return {
    type: 'seen',
    initial: () => ({ ids: [] }),
    parse: (raw) => raw as Cmd,
    handlers: {
      // Changes the state.
      note: (s, cmd) => ({ state: { ids: [...s.ids, cmd.id] }, reply: s.ids.length + 1, events: [ev(`note-${cmd.id}`)] }),
      // Changes nothing but publishes, then writes elsewhere; or, when the id was noted, changes the state too.
      report: (s, cmd) => ({
        state: s.ids.includes(cmd.id) ? { ids: s.ids.filter((i) => i !== cmd.id) } : s,
        reply: s.ids.length,
        events: [ev(`report-${cmd.id}`)],
        ...(cmd.remember ? {} : { afterCommit: async () => void trace.push(`effect ${cmd.id}`) }),
      }),
    },
    maxIdempotencyKeys: 10,
    reportKinds: ['report'],
  };
}

async function setup() {
  trace.length = 0;
  const store = new TracingStore(await openNodeDbIn(null));
  const events = new TracingPublisher();
  const system = createEmbeddedActorSystem(testSettings(), { store });
  system.register('seen', durableActor(seenSpec(), { store, events }));
  await system.start();
  systems.push(system);
  const ask = (cmd: Cmd, key?: string) => system.ask({ type: 'seen', key: 'k1' }, cmd, key === undefined ? {} : { idempotencyKey: key });
  const fail = (cmd: Cmd) => ask(cmd).then(() => null, (e: unknown) => e as AppError);
  return { events, ask, fail };
}

describe('durable actors: reports', () => {
  it('a report that changes no state publishes its events without a state write, then runs its write elsewhere', async () => {
    const t = await setup();
    await t.ask({ kind: 'note', id: 'a' });
    trace.length = 0;
    await t.ask({ kind: 'report', id: 'b' });
    expect(trace).toEqual(['publish report-b', 'effect b']);
  });

  it('a report that changes the state, or has an idempotency key to remember, goes through the state write', async () => {
    const t = await setup();
    await t.ask({ kind: 'note', id: 'a' });
    trace.length = 0;
    await t.ask({ kind: 'report', id: 'a' });
    expect(trace).toEqual(['save', 'effect a', 'publish report-a']);
    trace.length = 0;
    await t.ask({ kind: 'report', id: 'c', remember: true }, 'key-1');
    expect(trace).toEqual(['save', 'publish report-c']);
  });

  it('a report of an owner whose fence is dead is refused: nothing published, nothing written elsewhere', async () => {
    trace.length = 0;
    // One actor driven directly under a lease of its own, as its host would.
    const store = new TracingStore(await openNodeDbIn(null));
    const epoch = (await store.acquire(2, 'n1', 10_000))!;
    const actor = durableActor(seenSpec(), { store, events: new TracingPublisher() })({ address: { type: 'seen', key: 'k1' }, fence: { partition: 2, epoch }, clock: systemClock, log: silentLogger });
    await actor.onStart?.();
    await actor.onMessage({ kind: 'report', id: 'a' }, {});
    expect(trace).toEqual(['publish report-a', 'effect a']);
    // The lease moves on (the owner paused past it); the owner has not noticed.
    expect(await store.release(2, 'n1', epoch)).toBe(true);
    trace.length = 0;
    await expect(actor.onMessage({ kind: 'report', id: 'b' }, {})).rejects.toMatchObject({ code: 'ownership_lost' });
    expect(trace).toEqual([]);
  });

  it('a report whose publish fails is a retryable 503 with nothing recorded; made again, it goes through', async () => {
    const t = await setup();
    t.events.failNext = 1;
    expect((await t.fail({ kind: 'report', id: 'b' }))?.status).toBe(503);
    expect(trace).toEqual([]);
    await t.ask({ kind: 'report', id: 'b' });
    expect(trace).toEqual(['publish report-b', 'effect b']);
  });

  it('a report waits for earlier events still unpublished: the state write carries them, in order', async () => {
    const t = await setup();
    t.events.failNext = 1;
    expect((await t.fail({ kind: 'note', id: 'a' }))?.status).toBe(503);
    expect(trace).toEqual(['save']);
    trace.length = 0;
    await t.ask({ kind: 'report', id: 'b' });
    expect(trace).toEqual(['save', 'effect b', 'publish note-a', 'publish report-b']);
  });
});
