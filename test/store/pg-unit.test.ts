import { describe, expect, it } from 'vitest';
import type { PgDb } from '../../src/store/index.js';
import { deferred } from '../actors/helpers.js';
import { usePostgres } from '../harness/use-postgres.js';

/*
 * PgDb.together, the clustered unit of work (the shape of SqliteDb.together):
 * a unit's writes are one transaction, opened by its first write, committed
 * when it ends or settles; what another connection sees is all of it or none.
 */

const postgres = usePostgres();

/** What a connection outside the unit sees of a record. */
const outside = (db: PgDb, key: string) => db.apart(() => db.get<string>('u', key));

describe('PgDb.together', () => {
  it('commits the writes of a unit together, across its awaits, and resolves once they are committed', async () => {
    const db = await postgres.open();
    const gate = deferred();
    const atGate = deferred();
    const unit = db.together(async () => {
      await db.put('u', 'a', 'A');
      // Read back inside the unit: its own write is there.
      expect(await db.get('u', 'a')).toBe('A');
      atGate.resolve();
      await gate.promise;
      await db.put('u', 'b', 'B');
      return 'done';
    });
    await atGate.promise;
    expect(await outside(db, 'a')).toBeUndefined();
    gate.resolve();
    expect(await unit).toBe('done');
    expect([await outside(db, 'a'), await outside(db, 'b')]).toEqual(['A', 'B']);
  });

  it('commits the writes so far at settle; the next write opens a transaction of its own', async () => {
    const db = await postgres.open();
    const gate = deferred();
    const atGate = deferred();
    const unit = db.together(async () => {
      await db.put('u', 'a', 'A');
      await db.settle();
      await db.put('u', 'b', 'B');
      atGate.resolve();
      await gate.promise;
    });
    await atGate.promise;
    expect([await outside(db, 'a'), await outside(db, 'b')]).toEqual(['A', undefined]);
    gate.resolve();
    await unit;
    expect(await outside(db, 'b')).toBe('B');
  });

  it('keeps none of a unit whose statement failed, and rejects with that failure', async () => {
    const db = await postgres.open();
    const failed = db.together(async () => {
      await db.put('u', 'a', 'A');
      // Caught by the unit's code, as a store might: the transaction is lost all the same.
      await db.query('SELECT 1 / 0 FOR UPDATE', []).catch(() => {});
      await db.put('u', 'b', 'B').catch(() => {});
    });
    await expect(failed).rejects.toThrow(/division by zero/);
    expect([await outside(db, 'a'), await outside(db, 'b')]).toEqual([undefined, undefined]);
  });

  it('is a commit, not a rollback scope: what a unit wrote before it threw commits, and it rejects with its error', async () => {
    const db = await postgres.open();
    await expect(
      db.together(async () => {
        await db.put('u', 'a', 'A');
        throw new Error('handler failed');
      }),
    ).rejects.toThrow('handler failed');
    expect(await outside(db, 'a')).toBe('A');
  });

  it('runs a tx inside a unit as a savepoint: a tx that throws takes back only its own writes', async () => {
    const db = await postgres.open();
    await db.together(async () => {
      await db.put('u', 'a', 'A');
      await expect(
        db.tx(async (q) => {
          await db.put('u', 'b', 'B', q);
          await q.query('SELECT 1 / 0');
        }),
      ).rejects.toThrow(/division by zero/);
      await db.tx(async (q) => db.put('u', 'c', 'C', q));
    });
    expect([await outside(db, 'a'), await outside(db, 'b'), await outside(db, 'c')]).toEqual(['A', undefined, 'C']);
  });

  it('joins a tx started inside a tx of the unit to it', async () => {
    const db = await postgres.open();
    await db.together(async () => {
      await db.tx(async (q) => {
        await db.put('u', 'a', 'A', q);
        await db.tx(async (q2) => db.put('u', 'b', 'B', q2));
      });
    });
    expect([await outside(db, 'a'), await outside(db, 'b')]).toEqual(['A', 'B']);
  });

  it('sends the statements of one turn and their commit without waiting between them, and leaves reads before the first write outside', async () => {
    const db = await postgres.open();
    await db.put('u', 'x', 'X');
    const before = { ...db.stats };
    await db.together(async () => {
      expect(await db.get('u', 'x')).toBe('X');
      await Promise.all([db.put('u', 'a', 'A'), db.put('u', 'b', 'B'), db.put('u', 'c', 'C')]);
    });
    // The read, BEGIN, three writes and COMMIT; one transaction.
    expect(db.stats.statements - before.statements).toBe(6);
    expect(db.stats.transactions - before.transactions).toBe(1);
    expect(await db.values('u')).toEqual(['A', 'B', 'C', 'X']);
  });

  it('sends a unit whose transaction holds one statement as that statement alone, committed on its own', async () => {
    const db = await postgres.open();
    const before = { ...db.stats };
    await db.together(async () => {
      // The commit asked in the turn of the write (not after its answer: by then BEGIN went out with it).
      const written = db.put('u', 'a', 'A');
      await db.settle();
      await written;
      // Awaited before the unit ends: a transaction of its own.
      await db.put('u', 'b', 'B');
    });
    // The lone write; BEGIN, the write and COMMIT; two transactions.
    expect(db.stats.statements - before.statements).toBe(4);
    expect(db.stats.transactions - before.transactions).toBe(2);
    expect([await outside(db, 'a'), await outside(db, 'b')]).toEqual(['A', 'B']);
  });

  it('rejects a unit whose one statement failed with that failure, keeping nothing of it', async () => {
    const db = await postgres.open();
    const before = { ...db.stats };
    const failed = db.together(async () => {
      const bad = db.query('INSERT INTO records (coll, key, value) VALUES ($1, $2, $3)', ['u', 'bad', '{not json']);
      bad.catch(() => {});
      await db.settle();
    });
    await expect(failed).rejects.toThrow(/invalid input syntax for type json/);
    expect(db.stats.statements - before.statements).toBe(1);
    expect(await outside(db, 'bad')).toBeUndefined();
    // The connection went back to the pool in a usable state.
    await db.together(async () => db.put('u', 'after', 'ok'));
    expect(await outside(db, 'after')).toBe('ok');
  });

  it("fails every write of a unit whose connection could not be had with that failure, and the unit with it", async () => {
    const db = await postgres.open();
    await db.close();
    const failures: unknown[] = [];
    const unit = db.together(async () => {
      failures.push(await db.put('u', 'a', 'A').catch((e: unknown) => e));
      // A second write of the same unit, after its transaction's connection failed.
      failures.push(await db.put('u', 'b', 'B').catch((e: unknown) => e));
    });
    await expect(unit).rejects.toThrow(/pool after calling end/);
    expect(failures.map((e) => (e as Error).message)).toEqual([expect.stringMatching(/pool after calling end/), expect.stringMatching(/pool after calling end/)]);
  });
});
