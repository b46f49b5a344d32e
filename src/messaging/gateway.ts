import type { ConversationClient } from '../conversations/index.js';
import type { ConversationGateway } from './service.js';

/** The messaging services' port onto the one conversation client: its ids are placed already (canonical). */
export function conversationGateway(client: ConversationClient): ConversationGateway {
  return {
    ask: (org, aeid, command, idempotencyKey) => client.askPlaced(org, aeid, command, idempotencyKey === undefined ? {} : { idempotencyKey }),
  };
}
