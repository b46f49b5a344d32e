/**
 * A fact the service tells the outside world about: delivered to webhooks,
 * streamed to the live inbox. `id` is unique per event and stable across
 * redeliveries (it becomes the `webhook-id` header).
 */
export interface DomainEvent<T = unknown> {
  id: string;
  type: string;
  organizationId: string;
  createdAt: string;
  data: T;
}

/**
 * Where producers (actors, HTTP handlers) record events.
 *
 * `publish` resolves only once the event is durably recorded (fsynced on disk
 * in embedded mode, acknowledged by JetStream file storage in clustered mode):
 * callers acknowledge their own operation after it resolves, so an
 * acknowledged operation never loses its event. Rejects when the event could
 * not be recorded; the caller must then fail its operation (retryably).
 */
export interface EventPublisher {
  publish(event: DomainEvent): Promise<void>;
}

/** Subject of an event on the bus: `<prefix>.<org>.<type>`. */
export function eventSubject(prefix: string, event: Pick<DomainEvent, 'organizationId' | 'type'>): string {
  return `${prefix}.events.${event.organizationId}.${event.type}`;
}
