import type { SqliteDb } from '../../src/store/sqlite/db.js';
import type { DomainEvent, EventPublisher } from '../../src/events/types.js';
import { createEmbeddedActorSystem, type ActorSystem, type ActorSystemSettings, type Clock } from '../../src/actors/index.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { openNodeDbIn } from '../../src/store/backing.js';

/** Records what was published; can be told to fail the next N publishes. */
export class RecordingPublisher implements EventPublisher {
  readonly events: DomainEvent[] = [];
  failNext = 0;
  publish(event: DomainEvent): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      return Promise.reject(new Error('event log down'));
    }
    this.events.push(event);
    return Promise.resolve();
  }
}

export { ManualClock } from '../../src/clock.js';

export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const testSettings = (over: Partial<ActorSystemSettings> = {}): ActorSystemSettings => ({
  nodeId: 'test-node',
  partitions: 8,
  leaseMs: 5_000,
  mailboxSize: 100,
  idleMs: 60_000,
  askTimeoutMs: 5_000,
  attemptTimeoutMs: 2_000,
  ...over,
});

export async function embeddedSystem(over: Partial<ActorSystemSettings> = {}, clock?: Clock): Promise<{ system: ActorSystem; store: SqliteActorStore; db: SqliteDb }> {
  const db = await openNodeDbIn(null);
  const store = new SqliteActorStore(db);
  const system = createEmbeddedActorSystem(testSettings(over), { store, clock });
  return { system, store, db };
}
