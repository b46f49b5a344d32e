import type { PaceGrant, SendPacer } from './port.js';

/**
 * One node's pacing (embedded mode): the next free turn of each channel, in
 * memory. A restart forgets the turns, as it forgets the sends waiting for them.
 */
export function createMemorySendPacer(now: () => number = () => performance.timeOrigin + performance.now()): SendPacer {
  const nextTurn = new Map<string, number>();
  return {
    async reserve(channelId, perSecond, maxWaitMs): Promise<PaceGrant> {
      const t = now();
      const turn = Math.max(nextTurn.get(channelId) ?? 0, t);
      const waitMs = turn - t;
      if (waitMs > maxWaitMs) return { ok: false, retryAfterMs: waitMs - maxWaitMs };
      nextTurn.set(channelId, turn + 1000 / perSecond);
      return { ok: true, waitMs };
    },
  };
}
