export { InboxService, type ConversationAction, type InboxServiceDeps, type ConversationViewInput } from './service.js';
export * from './schemas.js';
