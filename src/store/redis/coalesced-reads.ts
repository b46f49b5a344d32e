import { getEach, type RedisClient } from './client.js';
import { TurnBatches } from '../turn-batches.js';

/**
 * GETs asked for in the same turn of the event loop, sent together
 * (`TurnBatches`): one MGET
 * on a single server (a key asked for twice read once), one GET each on
 * Redis Cluster (`getEach`: never a cross-slot MGET). A busy node takes in
 * many commands per turn (status webhooks, NATS reads carrying several
 * commands), and their actors' fence and state reads cost Redis one command,
 * not one each. The client itself writes a turn's commands at its end
 * (`setImmediate`), so waiting for the end of the turn costs a read at most
 * one more turn.
 *
 * Guarantees:
 * - A read is sent after it was asked for (at the end of the turn it was
 *   asked in), so its answer is at least as fresh as a GET sent at that
 *   moment: a read that must see the store as it is now (a fence) may go
 *   through here.
 * - Reads of one key asked for in one turn are answered alike; a failed
 *   command fails every read it carried, each with the same error.
 * - A read asked for once a write has completed sees that write.
 */
export class CoalescedReads {
  private readonly batches: TurnBatches<null, string, string | null>;

  constructor(client: RedisClient) {
    this.batches = new TurnBatches({
      key: () => '',
      send: async (_, asked) => {
        const keys = [...new Set(asked)];
        const values = await getEach(client, keys);
        const byKey = new Map(keys.map((k, i) => [k, values[i] ?? null]));
        return asked.map((k) => byKey.get(k) ?? null);
      },
    });
  }

  get(key: string): Promise<string | null> {
    return this.batches.add(null, key);
  }
}
