import { isAppError } from '../errors.js';
import { actorUnavailable, ROUTING_RETRY_CODES } from './errors.js';
import type { ActorHost } from './host.js';
import type { PartitionListener } from './placement.js';
import type { Envelope } from './types.js';

/**
 * Carries a command to the node that owns its actor and brings the reply
 * back. The two adapters: `InProcessTransport` (embedded mode: one node owns
 * every partition) and `NatsActorTransport` (requests to partition subjects).
 *
 * `send` resolves with the actor's reply, or rejects with the actor's error,
 * or with a retryable 503 when no owner answered within `timeoutMs`. An
 * adapter may deliver a command more than once while looking for the owner
 * (a timed-out attempt, a partition that moved); actors answer such repeats
 * from their idempotency records, which is why every envelope sent through
 * `ActorSystem` carries a key.
 */
export interface ActorTransport extends PartitionListener {
  send(envelope: Envelope, timeoutMs: number): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Embedded mode: the host is right here; placement changes concern nobody
 * else. A partition can still be briefly unowned (at start, or re-acquired
 * after a lease renewal came too late), so routing refusals are retried
 * until the deadline like over the network.
 */
export class InProcessTransport implements ActorTransport {
  constructor(private readonly host: ActorHost) {}

  async send(envelope: Envelope, timeoutMs: number): Promise<unknown> {
    const deadline = performance.now() + timeoutMs;
    let backoff = 5;
    for (;;) {
      try {
        return await this.host.deliver(envelope);
      } catch (e) {
        if (!isAppError(e) || !ROUTING_RETRY_CODES.has(e.code)) throw e;
        if (performance.now() + backoff > deadline) throw actorUnavailable('this conversation is not being served right now; retry shortly');
      }
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 200);
    }
  }

  listen(): Promise<void> {
    return Promise.resolve();
  }

  unlisten(): Promise<void> {
    return Promise.resolve();
  }

  announcePlacementChange(): void {}

  onPlacementChange(): void {}

  close(): Promise<void> {
    return Promise.resolve();
  }
}
