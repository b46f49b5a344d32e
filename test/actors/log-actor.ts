import { z } from 'zod';
import type { DurableActorSpec } from '../../src/actors/index.js';
import { badRequest } from '../../src/errors.js';

/**
 * A test actor: appends sequence numbers to a per-key log. `delayMs` makes a
 * command slow (a stand-in for a network call) between reading and writing.
 */
export const logCommand = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('append'), seq: z.number().int(), delayMs: z.number().int().min(0).optional() }),
  z.object({ kind: z.literal('get') }),
]);
export type LogCommand = z.infer<typeof logCommand>;
export interface LogState {
  log: number[];
}
export interface LogReplies {
  append: { length: number; seq: number; node: string };
  get: LogState;
}

export function logActorSpec(node = 'local', maxIdempotencyKeys = 100): DurableActorSpec<LogState, LogCommand, LogReplies> {
  return {
    type: 'log',
    initial: () => ({ log: [] }),
    parse: (raw) => {
      const r = logCommand.safeParse(raw);
      if (!r.success) throw badRequest('invalid_command', 'bad log command');
      return r.data;
    },
    handlers: {
      append: async (s, cmd) => {
        if (cmd.delayMs) await new Promise((r) => setTimeout(r, cmd.delayMs));
        const log = [...s.log, cmd.seq];
        return { state: { log }, reply: { length: log.length, seq: cmd.seq, node } };
      },
      get: (s) => ({ state: s, reply: s }),
    },
    maxIdempotencyKeys,
    readOnly: ['get'],
  };
}
