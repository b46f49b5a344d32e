export interface TurnBatchesOptions<G, I, R> {
  /** Names a group: items whose groups have the same name, asked in one turn, go in one call. */
  key(group: G): string;
  /**
   * Sends one batch: the group of its first item and the items, in the order asked. Answers one
   * result per item, in the same order.
   */
  send(group: G, items: I[]): Promise<readonly R[]>;
  /** At most this many items go in one call (default: no bound). */
  maxSize?: number;
}

interface Waiting<I, R> {
  item: I;
  resolve(result: R): void;
  reject(e: unknown): void;
}

interface Batch<G, I, R> {
  group: G;
  waiting: Waiting<I, R>[];
}

/**
 * Items asked for in one turn of the event loop, sent together at its end:
 * one call per group (a Redis script, an MGET, one SQL statement) where each item would have
 * been a command of its own. The Redis client writes a turn's commands at
 * its end anyway (`setImmediate`), so waiting for the end of the turn costs
 * an item at most one more turn.
 *
 * Guarantees:
 * - Items of one group asked in one turn go in one call, in the order asked
 *   (with `maxSize`, in calls of `maxSize` items, each in that order).
 * - A batch is sent at the end of the turn it was opened in, or at once when
 *   it reaches `maxSize` items; an item asked once its batch was sent opens
 *   a new one.
 * - Each item is answered with the result at its position in its call's
 *   answer; an answer of another length fails the call.
 * - A failed call (a rejected promise, or `send` throwing synchronously)
 *   rejects every item it carried with the same error, and only those.
 * - Nothing waits past its turn: when a turn ends, every item asked in it
 *   has been sent.
 */
export class TurnBatches<G, I, R> {
  private readonly batches = new Map<string, Batch<G, I, R>>();
  private flushScheduled = false;
  private readonly maxSize: number;

  constructor(private readonly options: TurnBatchesOptions<G, I, R>) {
    this.maxSize = options.maxSize ?? Infinity;
    if (!(this.maxSize >= 1)) throw new RangeError(`maxSize must be at least 1, got ${this.maxSize}`);
  }

  add(group: G, item: I): Promise<R> {
    return new Promise((resolve, reject) => {
      const name = this.options.key(group);
      let batch = this.batches.get(name);
      if (batch === undefined) {
        batch = { group, waiting: [] };
        this.batches.set(name, batch);
        if (!this.flushScheduled) {
          this.flushScheduled = true;
          setImmediate(() => this.flush());
        }
      }
      batch.waiting.push({ item, resolve, reject });
      if (batch.waiting.length >= this.maxSize) {
        this.batches.delete(name);
        this.run(batch);
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const batches = [...this.batches.values()];
    this.batches.clear();
    for (const b of batches) this.run(b);
  }

  private run(b: Batch<G, I, R>): void {
    let answer: Promise<readonly R[]>;
    try {
      answer = Promise.resolve(this.options.send(b.group, b.waiting.map((w) => w.item)));
    } catch (e) {
      answer = Promise.reject(e);
    }
    answer.then(
      (results) => {
        if (!Array.isArray(results) || results.length !== b.waiting.length) {
          const e = new Error(`a batch of ${b.waiting.length} items was answered with ${Array.isArray(results) ? results.length : 'no'} results`);
          for (const w of b.waiting) w.reject(e);
          return;
        }
        b.waiting.forEach((w, i) => w.resolve(results[i] as R));
      },
      (e: unknown) => {
        for (const w of b.waiting) w.reject(e);
      },
    );
  }
}
