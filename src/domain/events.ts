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
