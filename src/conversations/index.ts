export { ConversationClient, type AnyConversationCommand, type AnyConversationReplies, type AskOptions } from './client.js';
export { HandoverService } from './handover.js';
