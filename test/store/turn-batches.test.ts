import { describe, expect, it } from 'vitest';
import { TurnBatches } from '../../src/store/turn-batches.js';
import { CoalescedReads } from '../../src/store/redis/coalesced-reads.js';
import type { RedisClient } from '../../src/store/index.js';
import { deferred } from '../actors/helpers.js';

/*
 * TurnBatches' guarantees, each against a send that records its calls: no
 * server, the turns of the event loop ended by hand (a setImmediate queued
 * after the batcher's own runs after it).
 */

const endOfTurn = () => new Promise<void>((r) => setImmediate(r));

interface Call {
  group: string;
  items: number[];
  answer: ReturnType<typeof deferred<readonly string[]>>;
}

/** A batcher over groups named by a string, whose calls wait to be answered by the test. */
function recorded(maxSize?: number) {
  const calls: Call[] = [];
  const batches = new TurnBatches<string, number, string>({
    key: (g) => g,
    maxSize,
    send: (group, items) => {
      const answer = deferred<readonly string[]>();
      calls.push({ group, items: [...items], answer });
      return answer.promise;
    },
  });
  return { calls, batches };
}

/** Answers a call with one result per item, naming the item it answers. */
const answerEach = (call: Call) => call.answer.resolve(call.items.map((i) => `${call.group}:${i}`));

describe('TurnBatches', () => {
  it('sends the items of one group and one turn in one call, in the order asked, at the end of the turn', async () => {
    const { calls, batches } = recorded();
    const asked = [batches.add('a', 1), batches.add('b', 10), batches.add('a', 2)];
    // Asked from a microtask of the same turn: still this turn's batch.
    await Promise.resolve();
    asked.push(batches.add('a', 3));
    expect(calls).toEqual([]);
    await endOfTurn();
    expect(calls.map((c) => [c.group, c.items])).toEqual([
      ['a', [1, 2, 3]],
      ['b', [10]],
    ]);
    for (const c of calls) answerEach(c);
    expect(await Promise.all(asked)).toEqual(['a:1', 'b:10', 'a:2', 'a:3']);
  });

  it('sends a batch at the end of the turn it was opened in: an item of the next turn opens a new one, and nothing waits past its turn', async () => {
    const { calls, batches } = recorded();
    const first = batches.add('a', 1);
    await endOfTurn();
    // Unanswered, the call is sent all the same; an item asked now goes in a call of its own.
    expect(calls.map((c) => c.items)).toEqual([[1]]);
    const second = batches.add('a', 2);
    await endOfTurn();
    expect(calls.map((c) => c.items)).toEqual([[1], [2]]);
    // An item asked while a call is being answered (from its callbacks) is sent at the end of that turn too.
    const third = first.then(() => batches.add('a', 3));
    answerEach(calls[0]!);
    answerEach(calls[1]!);
    expect(await second).toBe('a:2');
    await endOfTurn();
    expect(calls.map((c) => c.items)).toEqual([[1], [2], [3]]);
    answerEach(calls[2]!);
    expect(await third).toBe('a:3');
  });

  it('sends a batch at once when it reaches maxSize, and the rest of the turn in a new one', async () => {
    const { calls, batches } = recorded(3);
    const asked = [batches.add('a', 0), batches.add('a', 1), batches.add('b', 0)];
    asked.push(batches.add('a', 2));
    expect(calls.map((c) => [c.group, c.items])).toEqual([['a', [0, 1, 2]]]);
    for (let i = 3; i < 7; i++) asked.push(batches.add('a', i));
    expect(calls.map((c) => [c.group, c.items])).toEqual([
      ['a', [0, 1, 2]],
      ['a', [3, 4, 5]],
    ]);
    await endOfTurn();
    expect(calls.map((c) => [c.group, c.items])).toEqual([
      ['a', [0, 1, 2]],
      ['a', [3, 4, 5]],
      ['b', [0]],
      ['a', [6]],
    ]);
    for (const c of calls) answerEach(c);
    expect(await Promise.all(asked)).toEqual(['a:0', 'a:1', 'b:0', 'a:2', 'a:3', 'a:4', 'a:5', 'a:6']);
  });

  it('answers each item with the result at its position, and passes the group of the batch\'s first item', async () => {
    const sent: { group: { name: string; n: number }; items: string[] }[] = [];
    const batches = new TurnBatches<{ name: string; n: number }, string, string>({
      key: (g) => g.name,
      send: async (group, items) => {
        sent.push({ group, items: [...items] });
        return items.map((item, i) => `${i}:${item}`);
      },
    });
    const asked = [batches.add({ name: 'g', n: 1 }, 'x'), batches.add({ name: 'g', n: 2 }, 'x'), batches.add({ name: 'g', n: 3 }, 'y')];
    expect(await Promise.all(asked)).toEqual(['0:x', '1:x', '2:y']);
    expect(sent).toEqual([{ group: { name: 'g', n: 1 }, items: ['x', 'x', 'y'] }]);
  });

  it('a failed call rejects every item it carried with the same error, and only those', async () => {
    const { calls, batches } = recorded();
    const failing = [batches.add('a', 1), batches.add('a', 2)];
    const other = batches.add('b', 1);
    await endOfTurn();
    const e = new Error('refused');
    calls[0]!.answer.reject(e);
    answerEach(calls[1]!);
    const settled = await Promise.allSettled(failing);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    for (const s of settled) expect((s as PromiseRejectedResult).reason).toBe(e);
    expect(await other).toBe('b:1');
    // The next turn sends afresh.
    const again = batches.add('a', 3);
    await endOfTurn();
    answerEach(calls[2]!);
    expect(await again).toBe('a:3');
  });

  it('a send that throws synchronously rejects its items like a failed call, and the other batches of the turn are still sent', async () => {
    const e = new Error('thrown');
    const sent: string[] = [];
    const batches = new TurnBatches<string, number, number>({
      key: (g) => g,
      maxSize: 2,
      send: (group, items) => {
        sent.push(group);
        if (group.startsWith('bad')) throw e;
        return Promise.resolve(items.map((i) => i * 10));
      },
    });
    const bad = [batches.add('bad', 1), batches.add('bad-later', 1)];
    const good = batches.add('good', 1);
    // A full batch sent at once from `add`: the throw rejects its items, not the caller.
    const full = [batches.add('bad', 2)];
    const settled = await Promise.allSettled([...bad, ...full]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const s of settled) expect((s as PromiseRejectedResult).reason).toBe(e);
    expect(await good).toBe(10);
    expect(sent).toEqual(['bad', 'bad-later', 'good']);
  });

  it('an answer with a result missing fails the whole call', async () => {
    const { calls, batches } = recorded();
    const asked = [batches.add('a', 1), batches.add('a', 2)];
    await endOfTurn();
    calls[0]!.answer.resolve(['only one']);
    const settled = await Promise.allSettled(asked);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason).toBe((settled[1] as PromiseRejectedResult).reason);
  });

  it('refuses a maxSize below one', () => {
    expect(() => new TurnBatches<string, number, number>({ key: (g) => g, send: async () => [], maxSize: 0 })).toThrow(RangeError);
  });
});

describe('CoalescedReads on TurnBatches', () => {
  it('reads a turn\'s keys in one MGET, a key asked twice read once, and answers each read by its key', async () => {
    const mgets: string[][] = [];
    const store: Record<string, string> = { x: '1', y: '2' };
    const client = {
      mGet: async (keys: string[]) => {
        mgets.push(keys);
        return keys.map((k) => store[k] ?? null);
      },
      get: async (key: string) => store[key] ?? null,
    } as unknown as RedisClient;
    const reads = new CoalescedReads(client);
    expect(await Promise.all([reads.get('x'), reads.get('y'), reads.get('x'), reads.get('z')])).toEqual(['1', '2', '1', null]);
    expect(mgets).toEqual([['x', 'y', 'z']]);
  });
});
