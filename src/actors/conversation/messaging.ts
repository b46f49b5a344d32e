import type { ConversationState } from './state.js';
import type { HandlerMap } from '../durable.js';
import type { MessagingCommand, MessagingHandlerDeps, MessagingReplies } from './messaging-commands.js';
import { inboundHandler } from './inbound.js';
import { sendHandler } from './sends.js';
import { statusHandler } from './statuses.js';

/*
 * The conversation actor's messaging commands: sends, inbound
 * customer messages and network status updates. They run in the contact's
 * actor, so sends to one contact leave one at a time in order, and the 24-hour
 * window and handover are judged on the actor's own, current state.
 */

export {
  messagingCommandSchema,
  messagingUnavailableHandlers,
  MESSAGING_COMMAND_KINDS,
  type InboundReply,
  type MessagingCommand,
  type MessagingHandlerDeps,
  type MessagingReplies,
  type SendReply,
  type StatusReply,
} from './messaging-commands.js';
export { keyedSendRecordId, lateCopyReservationId, resendReservationId } from './charges.js';
export { webChatMessageId } from './messaging-shared.js';

/** Every messaging handler, each in the module of its job: sends, inbound messages, statuses (and charges beside them). */
export function messagingHandlers(deps: MessagingHandlerDeps): HandlerMap<ConversationState, MessagingCommand, MessagingReplies> {
  return { ...sendHandler(deps), ...inboundHandler(deps), ...statusHandler(deps) };
}
