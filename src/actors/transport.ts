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

/** Embedded mode: the host is right here; placement changes concern nobody else. */
export class InProcessTransport implements ActorTransport {
  constructor(private readonly host: ActorHost) {}

  send(envelope: Envelope): Promise<unknown> {
    return this.host.deliver(envelope);
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
