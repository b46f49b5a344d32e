import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedActorSystem, durableActor, type ActorSystem, type DurableActorSpec } from '../../src/actors/index.js';
import type { Fence } from '../../src/domain/fence.js';
import type { DomainEvent, EventPublisher } from '../../src/events/types.js';
import { PostgresActorReplyStore } from '../../src/store/actors/postgres.js';
import type { ActorStateRef } from '../../src/store/actors/port.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { openNodeDbIn } from '../../src/store/backing.js';
import type { PgDb } from '../../src/store/index.js';
import { usePostgres } from '../harness/use-postgres.js';
import { testSettings } from './helpers.js';

/*
 * Clustered, a command's PostgreSQL writes run in PgDb's unit of work while
 * the actor state is stored elsewhere (Redis; here another database): what
 * the handler wrote is committed before the state write, and the reply, the
 * write after commit and the projection are committed before the events
 * are published.
 */

const postgres = usePostgres();
const systems: ActorSystem[] = [];
afterEach(async () => {
  await Promise.all(systems.splice(0).map((s) => s.stop()));
});

type Cmd = { kind: 'add'; id: string };

/** What a connection outside the command's unit sees in PostgreSQL. */
const seen = async (db: PgDb) => db.apart(async () => (await db.rows<{ key: string }>('SELECT key FROM records WHERE coll = $1 ORDER BY key', ['t'])).map((r) => r.key));
const replies = async (db: PgDb) => db.apart(async () => Number((await db.rows<{ n: string }>('SELECT count(*) AS n FROM actor_replies', []))[0]!.n));

async function setup() {
  const db = await postgres.open();
  const trace: string[] = [];
  class TracingStore extends SqliteActorStore {
    override async save(ref: ActorStateRef, value: unknown, fence: Fence): Promise<void> {
      trace.push(`save; stored then: ${(await seen(db)).join(',')}; replies ${await replies(db)}`);
      await super.save(ref, value, fence);
    }
  }
  class TracingPublisher implements EventPublisher {
    async publish(e: DomainEvent): Promise<void> {
      trace.push(`publish ${e.id}; stored then: ${(await seen(db)).join(',')}; replies ${await replies(db)}`);
    }
  }
  const store = new TracingStore(await openNodeDbIn(null));
  const spec: DurableActorSpec<{ ids: string[] }, Cmd, { add: { n: number } }> = {
    type: 'tally',
    initial: () => ({ ids: [] }),
    parse: (raw) => raw as Cmd,
    handlers: {
      add: async (s, cmd) => {
        // The handler's own writes before the state write (a contact and a sent message).
        await Promise.all([db.put('t', `contact-${cmd.id}`, 1), db.put('t', `message-${cmd.id}`, 1)]);
        return {
          state: { ids: [...s.ids, cmd.id] },
          reply: { n: s.ids.length + 1 },
          events: [{ id: `ev-${cmd.id}`, type: 'tally.added', organizationId: 'o', createdAt: new Date().toISOString(), data: {} }],
        };
      },
    },
    project: async (s) => {
      await db.put('t', `row-${s.ids.length}`, 1);
    },
    maxIdempotencyKeys: 10,
  };
  const system = createEmbeddedActorSystem(testSettings(), { store });
  system.register('tally', durableActor(spec, { store, events: new TracingPublisher(), commits: db, replies: new PostgresActorReplyStore(db, 60_000) }));
  await system.start();
  systems.push(system);
  return { db, trace, ask: (id: string, key: string) => system.ask({ type: 'tally', key: 'k1' }, { kind: 'add', id }, { idempotencyKey: key }) };
}

describe('clustered unit of work (PgDb, the state stored elsewhere)', () => {
  it("commits the handler's writes and the reply before the state write, and the projection before the events are published", async () => {
    const t = await setup();
    expect(await t.ask('a', 'key-a')).toEqual({ n: 1 });
    expect(t.trace).toEqual(['save; stored then: contact-a,message-a; replies 1', 'publish ev-a; stored then: contact-a,message-a,row-1; replies 1']);
    // The remembered reply answers a repeat of the key.
    expect(await t.ask('a', 'key-a')).toEqual({ n: 1 });
    expect(await seen(t.db)).toEqual(['contact-a', 'message-a', 'row-1']);
  });

  it('counts two transactions for a command (before and after its state write)', async () => {
    const t = await setup();
    await t.ask('a', 'key-a');
    const before = t.db.stats.transactions;
    await t.ask('b', 'key-b');
    expect(t.db.stats.transactions - before).toBe(2);
  });
});
