import type { AssignmentStore } from './port.js';

/** One node's auto-assignment lock and order (embedded mode). A second caller waits for the lock rather than being told it is busy. */
export function createMemoryAssignmentStore(): AssignmentStore {
  const locks = new Map<string, Promise<unknown>>();
  const order = new Map<string, Map<string, number>>();
  return {
    async withLock(org, fn) {
      const before = locks.get(org) ?? Promise.resolve();
      const run = before.then(
        () => fn(async () => true),
        () => fn(async () => true),
      );
      const tail = run.catch(() => undefined);
      locks.set(org, tail);
      try {
        return await run;
      } finally {
        if (locks.get(org) === tail) locks.delete(org);
      }
    },
    async lastAssigned(org) {
      return new Map(order.get(org) ?? []);
    },
    async noteAssigned(org, userId, at) {
      const m = order.get(org) ?? new Map<string, number>();
      order.set(org, m);
      m.set(userId, at);
    },
  };
}
