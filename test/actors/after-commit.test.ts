import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedActorSystem, durableActor, type ActorSystem, type DurableActorSpec } from '../../src/actors/index.js';
import type { Fence } from '../../src/domain/fence.js';
import type { AppError } from '../../src/errors.js';
import type { DomainEvent, EventPublisher } from '../../src/events/types.js';
import type { ActorStateRef } from '../../src/store/actors/port.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { openNodeDbIn } from '../../src/store/backing.js';
import { testSettings } from './helpers.js';

/*
 * `afterCommit`: a handler's write to another store that must only happen
 * once its state and events are durable (the messaging handlers store
 * inbound messages and statuses this way).
 */

const systems: ActorSystem[] = [];
afterEach(async () => {
  await Promise.all(systems.splice(0).map((s) => s.stop()));
});

interface Counter {
  /** Ids bumped; a re-run of the same id changes nothing here. */
  ids: string[];
}
type Cmd = { kind: 'bump'; id: string };

/** Everything that happens, in order: state writes, the other store's writes, publishes. */
const trace: string[] = [];

class TracingStore extends SqliteActorStore {
  failSaves = 0;
  override async save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void> {
    if (this.failSaves > 0) {
      this.failSaves--;
      throw new Error('store down');
    }
    await super.save(ref, value, fence);
    trace.push(`save ${(value as { state: Counter }).state.ids.join(',')}`);
  }
}

class TracingPublisher implements EventPublisher {
  readonly published: DomainEvent[] = [];
  async publish(e: DomainEvent): Promise<void> {
    trace.push(`publish ${e.id}`);
    this.published.push(e);
  }
}

async function setup() {
  trace.length = 0;
  const store = new TracingStore(await openNodeDbIn(null));
  const events = new TracingPublisher();
  /** The other store: ids written after their commit. */
  const other = new Set<string>();
  const faults = { effect: 0 };
  let runs = 0;
  const spec: DurableActorSpec<Counter, Cmd, { bump: { n: number; done: boolean } }> = {
    type: 'counter',
    initial: () => ({ ids: [] }),
    parse: (raw) => raw as Cmd,
    handlers: {
      bump: (s, cmd) => {
        runs++;
        // Like the messaging handlers: the other store says whether this already happened.
        if (other.has(cmd.id)) return { state: s, reply: { n: s.ids.length, done: true } };
        const next = s.ids.includes(cmd.id) ? s : { ids: [...s.ids, cmd.id] };
        return {
          state: next,
          reply: { n: next.ids.length, done: false },
          events: [{ id: `ev-${cmd.id}`, type: 'counter.bumped', organizationId: 'o', createdAt: new Date().toISOString(), data: {} }],
          afterCommit: async () => {
            if (faults.effect > 0) {
              faults.effect--;
              throw new Error('other store down');
            }
            other.add(cmd.id);
            trace.push(`effect ${cmd.id}`);
          },
        };
      },
    },
    maxIdempotencyKeys: 10,
  };
  const system = createEmbeddedActorSystem(testSettings(), { store });
  system.register('counter', durableActor(spec, { store, events }));
  await system.start();
  systems.push(system);
  const ask = (id: string, key?: string) => system.ask({ type: 'counter', key: 'c1' }, { kind: 'bump', id }, key === undefined ? {} : { idempotencyKey: key });
  return { store, events, other, faults, ask, runs: () => runs };
}

describe('durable actors: writes after the commit', () => {
  it('run after the fenced state write and before the events are published', async () => {
    const t = await setup();
    expect(await t.ask('a')).toEqual({ n: 1, done: false });
    expect(trace).toEqual(['save a', 'effect a', 'publish ev-a']);
  });

  it('never run when the state write fails', async () => {
    const t = await setup();
    t.store.failSaves = 1;
    expect(((await t.ask('a').catch((e: unknown) => e)) as AppError).status).toBe(503);
    expect(t.other.has('a')).toBe(false);
    expect(t.events.published).toHaveLength(0);
  });

  it('a failing one is a retryable 503 whose retry runs the handler again, even with the same idempotency key', async () => {
    const t = await setup();
    t.faults.effect = 1;
    expect(((await t.ask('a', 'key-1').catch((e: unknown) => e)) as AppError).status).toBe(503);
    // The commit stands and its event goes out; the other store does not show it yet.
    expect(t.other.has('a')).toBe(false);
    expect(t.events.published.map((e) => e.id)).toEqual(['ev-a']);
    // Not answered from the key: the handler runs, sees nothing stored, and does it (its event again, same id).
    expect(await t.ask('a', 'key-1')).toEqual({ n: 1, done: false });
    expect(t.runs()).toBe(2);
    expect(t.other.has('a')).toBe(true);
    expect(t.events.published.map((e) => e.id)).toEqual(['ev-a', 'ev-a']);
    // From now on the handler finds it done.
    expect(await t.ask('a', 'key-1')).toEqual({ n: 1, done: true });
  });
});
