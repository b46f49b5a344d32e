export type { Actor, ActorAddress, ActorContext, ActorFactory, AskOptions, Clock, Envelope, MessageMeta } from './types.js';
export { systemClock } from './types.js';
export { ActorHost, type ActorHostOptions, type CommandObserver, type PartitionOwnership } from './host.js';
export { ActorSystem, actorSettingsFromConfig, createClusteredActorSystem, createEmbeddedActorSystem, type ActorClient, type ActorSystemDeps, type ActorSystemSettings } from './system.js';
export { durableActor, type Command, type DurableActorDeps, type DurableActorSpec, type Handler, type HandlerContext, type HandlerMap, type Outcome, type StoredActorState } from './durable.js';
export { PartitionCoordinator, type PartitionCoordinatorOptions, type PartitionListener } from './placement.js';
export { InProcessTransport, type ActorTransport } from './transport.js';
export { NatsActorTransport, type NatsActorTransportOptions } from './nats-transport.js';
export { desiredOwners, partitionOf } from './partitions.js';
export { actorUnavailable, mailboxFull, ownershipLost, partitionMoved, partitionNotOwned, ROUTING_RETRY_CODES } from './errors.js';
export {
  CONVERSATION_ACTOR,
  conversationActorSpec,
  conversationCommandSchema,
  conversationHandlers,
  type ConversationCommand,
  type ConversationReplies,
  type HandoverReply,
  type NoteReply,
  MAX_NOTE_LENGTH,
} from './conversation/actor.js';
export type { AutomationReason, ContactMergedEventData, HandoverEventData, NoteEventData } from './conversation/events.js';
export { systemEntryText, timelineActorOf } from './conversation/timeline.js';
export { conversationKey, initialConversationState, parseConversationKey, type ConversationState, type HandoverState, type Session, type SessionStatus } from './conversation/state.js';
export {
  assignAgent,
  currentSession,
  isWithHuman,
  openHandover,
  requestHandover,
  takeConversation,
  transferConversation,
  HANDOVER_REFUSALS,
  type HandoverRefusal,
  type Transition,
} from './conversation/rules.js';
export { ConversationTimers, type ConversationTimersOptions } from './conversation/timers.js';
export { AUTOMATION } from './conversation/routing.js';
export { openActors, type OpenedActors } from './open.js';
