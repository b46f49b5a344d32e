import { CONVERSATION_ACTOR } from '../actors/conversation/actor.js';
import { conversationKey } from '../actors/conversation/state.js';
import type { ActorSystem } from '../actors/system.js';
import type { MessagingCommand, MessagingReplies } from '../actors/conversation/messaging.js';
import type { ConversationCommand, ConversationReplies } from '../actors/conversation/actor.js';
import type { ConversationGateway } from './service.js';

/** The conversation gateway over the actor runtime: commands go to the contact's actor, wherever it lives. */
export function actorConversationGateway(system: ActorSystem): ConversationGateway {
  const client = system.client<MessagingCommand | ConversationCommand, MessagingReplies & ConversationReplies>(CONVERSATION_ACTOR);
  return {
    ask: (org, aeid, command, idempotencyKey) => client.ask(conversationKey(org, aeid), command, idempotencyKey === undefined ? {} : { idempotencyKey }),
  };
}
