import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore, NODE_MIGRATIONS, openNodeDbIn, SqliteDb, StorageOpenError, type Migration } from '../../src/store/index.js';
import { sqliteDatabase } from '../../src/store/sqlite/native.js';

/** The guarantees of SqliteDb (src/store/sqlite/db.ts), one test each. */

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'sb-sqlite-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('SqliteDb', () => {
  it('runs a write at once, visible to readers before it commits, and resolves after the commit', async () => {
    const db = openNodeDbIn(null);
    const done = db.put('c', 'k', { v: 1 });
    expect(db.get('c', 'k')).toEqual({ v: 1 });
    const commits = db.stats.commits;
    await done;
    expect(db.stats.commits).toBe(commits + 1);
    await db.close();
  });

  it('keeps nothing of a write whose function threw, and the rest of its batch commits', async () => {
    const db = openNodeDbIn(null);
    const ok = db.put('c', 'a', 1);
    const failed = db.run(() => {
      db.apply([{ coll: 'c', key: 'b', value: 2 }]);
      throw new Error('changed my mind');
    });
    await expect(failed).rejects.toThrow('changed my mind');
    await ok;
    expect(db.get('c', 'a')).toBe(1);
    expect(db.has('c', 'b')).toBe(false);
    await db.close();
  });

  it('runs a commit hook in every batch: its writes commit with the batch, a failing one is undone and the batch commits', async () => {
    const dir = tempDir();
    const db = SqliteDb.open(join(dir, 'hooks.db'), { migrations: NODE_MIGRATIONS });
    let fail = false;
    db.beforeCommit(() => {
      db.apply([{ coll: 'hook', key: String(db.stats.commits), value: true }]);
      if (fail) throw new Error('hook failed');
    });
    const writes = db.stats.writes;
    await db.put('c', 'a', 1);
    // The hook's work is no write of its own: the figures count what callers wrote.
    expect(db.stats.writes).toBe(writes + 1);
    fail = true;
    await db.put('c', 'b', 2);
    await db.close();
    const again = SqliteDb.open(join(dir, 'hooks.db'), { migrations: NODE_MIGRATIONS });
    expect(again.get('c', 'a')).toBe(1);
    expect(again.get('c', 'b')).toBe(2);
    expect(again.entries('hook')).toHaveLength(1);
    await again.close();
  });

  it('group-commits the writes of one turn into one commit, at most maxBatch writes per commit', async () => {
    const db = SqliteDb.open(null, { migrations: NODE_MIGRATIONS, maxBatch: 100 });
    const before = db.stats.commits;
    await Promise.all(Array.from({ length: 50 }, (_, i) => db.put('c', `k${i}`, i)));
    expect(db.stats.commits).toBe(before + 1);
    await Promise.all(Array.from({ length: 250 }, (_, i) => db.put('c', `m${i}`, i)));
    expect(db.stats.commits).toBe(before + 4);
    await db.close();
  });

  it('survives a reopen without close: every acknowledged write is in the file', async () => {
    const dir = tempDir();
    const db = openNodeDbIn(dir);
    for (let i = 0; i < 20; i++) await db.put('c', `k${i}`, i);
    const again = openNodeDbIn(dir);
    expect(again.values('c')).toHaveLength(20);
    await again.close();
    await db.close();
  });

  it('creates the database 0600 in a 0700 directory', async () => {
    const dir = join(tempDir(), 'data');
    const db = openNodeDbIn(dir);
    await db.put('c', 'k', 1);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'switchboard.db')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'switchboard.db-wal')).mode & 0o777).toBe(0o600);
    await db.close();
  });

  it('tightens an older, wider database file to 0600', async () => {
    const dir = tempDir();
    await openNodeDbIn(dir).close();
    chmodSync(join(dir, 'switchboard.db'), 0o644);
    const db = openNodeDbIn(dir);
    expect(statSync(join(dir, 'switchboard.db')).mode & 0o777).toBe(0o600);
    await db.close();
  });

  it('refuses a file that is not a database, naming it and saying what to do', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'switchboard.db'), 'this is not a database, it is a shopping list'.repeat(10));
    expect(() => openNodeDbIn(dir)).toThrow(StorageOpenError);
    expect(() => openNodeDbIn(dir)).toThrow(new RegExp(`${join(dir, 'switchboard.db')} is not a SQLite database.*restore the latest backup`));
  });

  it('refuses a truncated database', async () => {
    const dir = tempDir();
    const db = openNodeDbIn(dir);
    for (let i = 0; i < 200; i++) await db.put('c', `k${i}`, 'x'.repeat(1000));
    await db.close();
    const file = join(dir, 'switchboard.db');
    truncateSync(file, Math.floor(statSync(file).size / 2));
    expect(() => openNodeDbIn(dir)).toThrow(/is truncated.*restore the latest backup/);
  });

  it('refuses a database written by a newer schema', async () => {
    const dir = tempDir();
    const future: Migration[] = [...NODE_MIGRATIONS, { version: NODE_MIGRATIONS.length + 1, up: (raw) => raw.exec('CREATE TABLE future (x)') }];
    await SqliteDb.open(join(dir, 'switchboard.db'), { migrations: future }).close();
    const latest = NODE_MIGRATIONS.at(-1)!.version;
    expect(() => openNodeDbIn(dir)).toThrow(new RegExp(`written by a newer version of Switchboard \\(schema ${latest + 1}; this version knows up to ${latest}\\)`));
  });

  it('refuses a database it cannot open, naming the file', () => {
    const dir = tempDir();
    // A directory where the file should be: unreadable as a file (permission bits would not stop root).
    mkdirSync(join(dir, 'switchboard.db'));
    expect(() => openNodeDbIn(dir)).toThrow(new RegExp(`cannot open the database ${join(dir, 'switchboard.db')}.*access`));
  });

  it('takes an online backup that opens as a database with the same content', async () => {
    const dir = tempDir();
    const db = openNodeDbIn(dir);
    for (let i = 0; i < 10; i++) await db.put('c', `k${i}`, i);
    const pending = db.put('c', 'late', 'x');
    await db.backup(join(dir, 'backup.db'));
    await pending;
    expect(readFileSync(join(dir, 'backup.db')).subarray(0, 15).toString()).toBe('SQLite format 3');
    const copy = SqliteDb.open(join(dir, 'backup.db'), { migrations: NODE_MIGRATIONS });
    expect(copy.values('c')).toHaveLength(11);
    await copy.close();
    await db.close();
  });
});

/** What another connection to the same file sees: only what was committed. */
function committedView(dir: string) {
  const other = new (sqliteDatabase())(join(dir, 'switchboard.db'), { readonly: true });
  return {
    has: (key: string) => other.prepare("SELECT 1 FROM records WHERE coll = 'c' AND key = ?").get(key) !== undefined,
    close: () => other.close(),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SqliteDb units of work (together)', () => {
  it('commits every write of a unit, across its awaits, as one: another connection sees none of them, then all', async () => {
    const dir = tempDir();
    const db = openNodeDbIn(dir);
    const view = committedView(dir);
    const before = db.stats.commits;
    let seenMidway: boolean[] = [];
    const result = await db.together(async () => {
      await db.put('c', 'a', 1);
      await sleep(30);
      await db.put('c', 'b', 2);
      await sleep(30);
      seenMidway = [view.has('a'), view.has('b')];
      await db.put('c', 'c', 3);
      return 'done';
    });
    expect(result).toBe('done');
    expect(seenMidway).toEqual([false, false]);
    expect([view.has('a'), view.has('b'), view.has('c')]).toEqual([true, true, true]);
    expect(db.stats.commits).toBe(before + 1);
    view.close();
    await db.close();
  });

  it('settle() commits the unit\'s writes so far before it goes on', async () => {
    const dir = tempDir();
    const db = openNodeDbIn(dir);
    const view = committedView(dir);
    let afterSettle = false;
    let laterSeen = true;
    await db.together(async () => {
      await db.put('c', 'before', 1);
      await db.settle();
      afterSettle = view.has('before');
      await db.put('c', 'after', 2);
      await sleep(20);
      laterSeen = view.has('after');
    });
    expect(afterSettle).toBe(true);
    expect(laterSeen).toBe(false);
    expect(view.has('after')).toBe(true);
    view.close();
    await db.close();
  });

  it('keeps nothing of a unit whose commit failed, and rejects it with a 503', async () => {
    const db = openNodeDbIn(null);
    // A commit that fails for sure: a deferred foreign key is checked at COMMIT.
    db.raw.pragma('foreign_keys = ON');
    db.raw.exec('CREATE TABLE parent (id TEXT PRIMARY KEY); CREATE TABLE child (parent TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)');
    const unit = db.together(async () => {
      await db.put('c', 'kept-not', 1);
      await sleep(10);
      await db.run(() => db.raw.prepare('INSERT INTO child (parent) VALUES (?)').run('nobody'));
      await db.put('c', 'also-not', 2);
    });
    await expect(unit).rejects.toMatchObject({ status: 503, code: 'storage_unavailable' });
    expect(db.has('c', 'kept-not')).toBe(false);
    expect(db.has('c', 'also-not')).toBe(false);
    // The next write commits as usual.
    await db.put('c', 'next', 3);
    expect(db.get('c', 'next')).toBe(3);
    await db.close();
  });

  it('keeps the writes a unit made before it threw: a unit is one commit, not a rollback', async () => {
    const db = openNodeDbIn(null);
    const unit = db.together(async () => {
      await db.put('c', 'made', 1);
      throw new Error('handler failed');
    });
    await expect(unit).rejects.toThrow('handler failed');
    expect(db.get('c', 'made')).toBe(1);
    await db.close();
  });

  it('lets a plain write and a unit started later commit while an earlier unit is still running, without putting the commit off', async () => {
    const dir = tempDir();
    const db = openNodeDbIn(dir);
    const view = committedView(dir);
    const slow = db.together(async () => {
      await db.put('c', 'slow-1', 1);
      await sleep(60);
      await db.put('c', 'slow-2', 2);
    });
    // The commit comes due while `slow` holds the batch (its first write scheduled it for the next
    // check phase; waiting for a setImmediate queued after it, not for a timer, is what makes it due
    // first on a loaded machine); a unit starting now waits for that commit and writes into the next
    // batch, so `slow` ending is all the first commit waits for.
    await new Promise<void>((resolve) => setImmediate(resolve));
    let firstBatchCommittedBeforeB = false;
    const later = db.together(async () => {
      await db.put('c', 'later', 3);
      firstBatchCommittedBeforeB = view.has('slow-2');
    });
    await Promise.all([slow, later]);
    expect(firstBatchCommittedBeforeB).toBe(true);
    expect(view.has('later')).toBe(true);
    expect(db.stats.unitsCutShort).toBe(0);
    view.close();
    await db.close();
  });

  it('commits a unit that holds the batch past maxHoldMs in pieces, and counts it', async () => {
    const dir = tempDir();
    const db = SqliteDb.open(join(dir, 'switchboard.db'), { migrations: NODE_MIGRATIONS, maxHoldMs: 40 });
    const view = committedView(dir);
    let firstSeen = false;
    await db.together(async () => {
      await db.put('c', 'first', 1);
      await sleep(150);
      firstSeen = view.has('first');
      await db.put('c', 'second', 2);
    });
    expect(firstSeen).toBe(true);
    expect(view.has('second')).toBe(true);
    expect(db.stats.unitsCutShort).toBe(1);
    view.close();
    await db.close();
  });

  it('fails only the write whose onCommit callback threw; the rest of its batch settles', async () => {
    const db = openNodeDbIn(null);
    const before = db.put('c', 'before', 1);
    const throwing = db.run(
      () => 'x',
      () => {
        throw new Error('callback failed');
      },
    );
    const after = db.put('c', 'after', 2);
    await expect(throwing).rejects.toThrow('callback failed');
    await Promise.all([before, after]);
    expect([db.get('c', 'before'), db.get('c', 'after')]).toEqual([1, 2]);
    await db.close();
  });

  it('reports a commit that failed while its unit was still running (cut short) when the unit ends, refuses the unit\'s later writes, and leaves nothing unhandled', async () => {
    const db = SqliteDb.open(null, { migrations: NODE_MIGRATIONS, maxHoldMs: 30 });
    db.raw.pragma('foreign_keys = ON');
    db.raw.exec('CREATE TABLE parent (id TEXT PRIMARY KEY); CREATE TABLE child (parent TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)');
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const unit = db.together(async () => {
        await db.run(() => db.raw.prepare('INSERT INTO child (parent) VALUES (?)').run('nobody'));
        // Held past maxHoldMs: the batch commits early, and that commit fails, while this unit sleeps.
        await sleep(150);
        await db.put('c', 'later', 1);
      });
      await expect(unit).rejects.toMatchObject({ status: 503, code: 'storage_unavailable' });
      await sleep(20);
      expect(unhandled).toEqual([]);
      expect(db.stats.failedCommits).toBe(1);
      // The unit's start was lost, so its later write was refused, not committed alone.
      expect(db.has('c', 'later')).toBe(false);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    await db.close();
  });

  it('runs a write\'s onCommit callback at its commit, in write order, also inside a unit', async () => {
    const db = openNodeDbIn(null);
    const seen: string[] = [];
    await db.together(async () => {
      await db.run(() => 'one', (r) => seen.push(r));
      expect(seen).toEqual([]);
      await db.run(() => 'two', (r) => seen.push(r));
    });
    await db.run(() => 'three', (r) => seen.push(r));
    expect(seen).toEqual(['one', 'two', 'three']);
    await db.close();
  });
});

describe('schema migrations', () => {
  it('builds the current schema from an empty database', async () => {
    const db = openNodeDbIn(null);
    expect(db.version).toBe(NODE_MIGRATIONS.at(-1)!.version);
    const tables = (db.raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['records', 'tickets', 'outbox', 'contacts', 'session_messages', 'chat_sessions', 'conversations', 'webhook_deliveries', 'events', 'event_cursors']));
    await db.close();
  });

  it('moves a database of the previous schema version (1, before the event log moved in) to the current one, keeping its data', async () => {
    const dir = tempDir();
    const file = join(dir, 'switchboard.db');
    const v1 = SqliteDb.open(file, { migrations: NODE_MIGRATIONS.filter((m) => m.version === 1) });
    expect(v1.version).toBe(1);
    await v1.put('orgs', 'o1', { id: 'o1', name: 'Kept' });
    await v1.close();
    const db = openNodeDbIn(dir);
    expect(db.version).toBe(NODE_MIGRATIONS.at(-1)!.version);
    expect(db.get('orgs', 'o1')).toEqual({ id: 'o1', name: 'Kept' });
    expect(db.raw.prepare('SELECT COUNT(*) AS n FROM events').get()).toEqual({ n: 0 });
    await db.close();
  });

  it("enters the creation of tickets made before the ticket activity existed (version 4) into their activity", async () => {
    const dir = tempDir();
    const file = join(dir, 'switchboard.db');
    const v4 = SqliteDb.open(file, { migrations: NODE_MIGRATIONS.filter((m) => m.version <= 4) });
    const by = { kind: 'api_key', userId: 'u1', keyId: 'k1', keyName: 'crm' };
    const row = v4.raw.prepare('INSERT INTO tickets (org, seq, ticket_id, status, priority, assignee_id, audience_id, body) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?)');
    row.run('o1', 1, 'T-260101-000001', 'open', 'low', JSON.stringify({ ticketId: 'T-260101-000001', createdBy: by, createdAt: '2026-01-01T00:00:00.000Z' }));
    row.run('o1', 2, 'T-260101-000002', 'open', 'low', JSON.stringify({ ticketId: 'T-260101-000002', createdBy: null, createdAt: '2026-01-01T01:00:00.000Z' }));
    await v4.close();
    const store = createSqliteStore(openNodeDbIn(dir));
    const [first] = (await store.tickets.activity('o1', 'T-260101-000001', 0, 10)).entries;
    expect(first).toMatchObject({ ticketId: 'T-260101-000001', organizationId: 'o1', kind: 'created', actor: by, at: '2026-01-01T00:00:00.000Z' });
    expect((await store.tickets.activity('o1', 'T-260101-000002', 0, 10)).entries).toMatchObject([{ kind: 'created', actor: null }]);
    await store.close();
  });

  it('applies only the missing steps to a database of an earlier version, keeping its data', async () => {
    const dir = tempDir();
    const file = join(dir, 'x.db');
    const v1: Migration[] = [{ version: 1, up: (raw) => raw.exec('CREATE TABLE a (x TEXT)') }];
    const v2: Migration[] = [...v1, { version: 2, up: (raw) => raw.exec("ALTER TABLE a ADD COLUMN y TEXT DEFAULT 'new'") }];
    const old = SqliteDb.open(file, { migrations: v1 });
    old.raw.prepare("INSERT INTO a (x) VALUES ('kept')").run();
    await old.close();
    const db = SqliteDb.open(file, { migrations: v2 });
    expect(db.version).toBe(2);
    expect(db.raw.prepare('SELECT x, y FROM a').all()).toEqual([{ x: 'kept', y: 'new' }]);
    await db.close();
    // Opening again runs nothing twice.
    const again = SqliteDb.open(file, { migrations: v2 });
    expect(again.version).toBe(2);
    await again.close();
  });

  it('rolls a failing step back whole and refuses to start', () => {
    const dir = tempDir();
    const file = join(dir, 'x.db');
    const broken: Migration[] = [{ version: 1, up: (raw) => raw.exec('CREATE TABLE a (x); CREATE TABLE a (y)') }];
    expect(() => SqliteDb.open(file, { migrations: broken })).toThrow(StorageOpenError);
    const db = SqliteDb.open(file, { migrations: [] });
    expect(db.version).toBe(0);
    expect(db.raw.prepare("SELECT name FROM sqlite_master WHERE name = 'a'").get()).toBeUndefined();
  });
});
