import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedActorSystem, durableActor, type ActorSystem, type DurableActorSpec } from '../../src/actors/index.js';
import { EmbeddedEventLog } from '../../src/events/embedded-log.js';
import { SqliteActorStore } from '../../src/store/actors/sqlite.js';
import { openNodeDbIn } from '../../src/store/backing.js';
import type { SqliteDb } from '../../src/store/sqlite/db.js';
import { sqliteDatabase } from '../../src/store/sqlite/native.js';
import { deferred, testSettings } from './helpers.js';

/*
 * Embedded, a command's writes — the handler's own (a message, a contact),
 * the actor's state with its idempotency key, its events, the write after
 * commit and the inbox projection — are one SQLite transaction: a crash or a
 * failed commit keeps all of it or none.
 */

const dirs: string[] = [];
const systems: ActorSystem[] = [];
afterEach(async () => {
  await Promise.all(systems.splice(0).map((s) => s.stop()));
});
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface Tally {
  ids: string[];
}
type Cmd = { kind: 'add'; id: string; checkpointFirst?: boolean; breakCommit?: boolean; outsideFirst?: boolean };

async function setup(restartIn?: string) {
  const dir = restartIn ?? mkdtempSync(join(tmpdir(), 'sb-one-tx-'));
  dirs.push(dir);
  const db: SqliteDb = openNodeDbIn(dir);
  // A commit that fails for sure when a command asks for it: a deferred foreign key is checked at COMMIT.
  db.raw.pragma('foreign_keys = ON');
  db.raw.exec('CREATE TABLE IF NOT EXISTS parent (id TEXT PRIMARY KEY); CREATE TABLE IF NOT EXISTS child (parent TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)');
  const events = await EmbeddedEventLog.openSqlite(db);
  const followed: string[] = [];
  /** The projections announced, each as committed when it was announced. */
  const announced: (number | null)[] = [];
  await events.follow((e) => followed.push(e.event.id));
  /** The handler waits here after its own write, so a test can look at the file mid-command. */
  let gate = deferred();
  let atGate = deferred();
  const spec: DurableActorSpec<Tally, Cmd, { add: { n: number } }> = {
    type: 'tally',
    initial: () => ({ ids: [] }),
    parse: (raw) => raw as Cmd,
    handlers: {
      add: async (s, cmd, ctx) => {
        if (cmd.outsideFirst) {
          // An outside call (the network) before any write of the handler's own.
          atGate.resolve();
          await gate.promise;
        }
        if (cmd.checkpointFirst) await ctx.checkpoint({ ids: [...s.ids, `${cmd.id}-checkpointed`] });
        // The handler's own write, as a send stores its message before the actor's state.
        await db.put('c', `message-${cmd.id}`, cmd.id);
        if (cmd.breakCommit) await db.run(() => db.raw.prepare('INSERT INTO child (parent) VALUES (?)').run('nobody'));
        if (!cmd.outsideFirst) {
          atGate.resolve();
          await gate.promise;
        }
        const next = { ids: [...s.ids, cmd.id] };
        return {
          state: next,
          reply: { n: next.ids.length },
          events: [{ id: `ev-${cmd.id}`, type: 'tally.added', organizationId: 'o', createdAt: new Date().toISOString(), data: {} }],
          afterCommit: async () => {
            await db.put('c', `after-${cmd.id}`, cmd.id);
          },
        };
      },
    },
    maxIdempotencyKeys: 10,
    project: async (state, version) => {
      await db.put('c', 'projection', { n: state.ids.length, version });
      // Announced once committed: what another connection reads at that moment.
      return () => announced.push(committed().projection);
    },
  };
  const system = createEmbeddedActorSystem(testSettings(), { store: new SqliteActorStore(db) });
  system.register('tally', durableActor(spec, { store: new SqliteActorStore(db), events, commits: db }));
  await system.start();
  systems.push(system);
  const other = new (sqliteDatabase())(join(dir, 'switchboard.db'), { readonly: true });
  /** What is committed: seen through another connection to the file. */
  const committed = () => ({
    message: (other.prepare("SELECT key FROM records WHERE coll = 'c' AND key LIKE 'message-%' ORDER BY key").all() as { key: string }[]).map((r) => r.key),
    after: (other.prepare("SELECT key FROM records WHERE coll = 'c' AND key LIKE 'after-%' ORDER BY key").all() as { key: string }[]).map((r) => r.key),
    state: (() => {
      const row = other.prepare("SELECT value FROM records WHERE coll = 'actor_state' AND key = 'tally/t1'").get() as { value: string } | undefined;
      return row === undefined ? null : (JSON.parse(row.value) as { state: Tally }).state.ids;
    })(),
    events: (other.prepare('SELECT id FROM events ORDER BY seq').all() as { id: string }[]).map((r) => r.id),
    projection: (() => {
      const row = other.prepare("SELECT value FROM records WHERE coll = 'c' AND key = 'projection'").get() as { value: string } | undefined;
      return row === undefined ? null : (JSON.parse(row.value) as { n: number }).n;
    })(),
  });
  const ask = (cmd: Cmd) => system.ask({ type: 'tally', key: 't1' }, cmd, { idempotencyKey: cmd.id });
  const reopenGate = () => {
    gate = deferred();
    atGate = deferred();
  };
  const stop = async () => {
    other.close();
    await system.stop();
    systems.splice(systems.indexOf(system), 1);
    await db.close();
  };
  return { dir, db, ask, committed, followed, announced, gate: () => gate, atGate: () => atGate.promise, reopenGate, close: () => other.close(), stop, other };
}

describe('one transaction per command (embedded)', () => {
  it('commits the handler\'s write, the state, the event, the write after commit and the projection together', async () => {
    const t = await setup();
    const before = t.db.stats.commits;
    const reply = t.ask({ kind: 'add', id: 'a' });
    await t.atGate();
    // Mid-command, after the handler's own write: nothing of it is committed, and no consumer saw the event.
    expect(t.committed()).toEqual({ message: [], after: [], state: null, events: [], projection: null });
    t.gate().resolve();
    expect(await reply).toEqual({ n: 1 });
    expect(t.committed()).toEqual({ message: ['message-a'], after: ['after-a'], state: ['a'], events: ['ev-a'], projection: 1 });
    expect(t.db.stats.commits).toBe(before + 1);
    expect(t.followed).toEqual(['ev-a']);
    // The projection's announcement came after its commit.
    expect(t.announced).toEqual([1]);
    t.close();
  });

  it('makes a checkpoint durable before the handler goes on, and the rest one commit after it', async () => {
    const t = await setup();
    const before = t.db.stats.commits;
    const reply = t.ask({ kind: 'add', id: 'b', checkpointFirst: true });
    await t.atGate();
    expect(t.committed().state).toEqual(['b-checkpointed']);
    expect(t.committed().message).toEqual([]);
    t.gate().resolve();
    await reply;
    expect(t.committed()).toMatchObject({ message: ['message-b'], after: ['after-b'], state: ['b'], events: ['ev-b'] });
    expect(t.db.stats.commits).toBe(before + 2);
    t.close();
  });

  it('keeps none of a command whose commit failed: 503, no event seen, and the next command starts from the stored state', async () => {
    const t = await setup();
    t.gate().resolve();
    await t.ask({ kind: 'add', id: 'first' });
    t.reopenGate();
    t.gate().resolve();
    const failed = await t.ask({ kind: 'add', id: 'broken', breakCommit: true }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ status: 503, code: 'storage_unavailable' });
    expect(t.committed()).toEqual({ message: ['message-first'], after: ['after-first'], state: ['first'], events: ['ev-first'], projection: 1 });
    expect(t.followed).toEqual(['ev-first']);
    // The lost command's projection is not announced.
    expect(t.announced).toEqual([1]);
    t.reopenGate();
    t.gate().resolve();
    // Not answered from the lost run's idempotency key: the state was reloaded.
    expect(await t.ask({ kind: 'add', id: 'second' })).toEqual({ n: 2 });
    expect(t.committed().state).toEqual(['first', 'second']);
    t.close();
  });

  it('does not hold other writes while a handler waits on an outside call, also when the actor caught up first (a restarted actor re-projects)', async () => {
    const first = await setup();
    first.gate().resolve();
    await first.ask({ kind: 'add', id: 'a' });
    await first.stop();
    // Restarted: the actor loads its state and writes its projection again before the command.
    const t = await setup(first.dir);
    const reply = t.ask({ kind: 'add', id: 'b', outsideFirst: true });
    await t.atGate();
    const probe = t.db.put('c', 'probe', 1);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    const probeCommitted = t.other.prepare("SELECT 1 FROM records WHERE coll = 'c' AND key = 'probe'").get() !== undefined;
    t.gate().resolve();
    await Promise.all([reply, probe]);
    expect(probeCommitted).toBe(true);
    expect(t.committed().state).toEqual(['a', 'b']);
    expect(t.db.stats.unitsCutShort).toBe(0);
    t.close();
  });
});
