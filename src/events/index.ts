export { eventSubject, EVENT_TYPES } from './types.js';
export type {
  ConsumeOptions,
  DomainEvent,
  EventDeliveryInfo,
  EventFeed,
  EventFollower,
  EventHandler,
  EventLog,
  EventPublisher,
  EventReadOptions,
  EventReadResult,
  EventSubscription,
  EventType,
  LoggedEvent,
} from './types.js';
export { EmbeddedEventLog, type EmbeddedEventLogOptions } from './embedded-log.js';
export { JetStreamEventLog, type JetStreamEventLogOptions } from './jetstream-log.js';
export { openEventLog } from './open.js';
export { OutboxRelay, type OutboxRelayOptions } from './outbox-relay.js';
