export { InboxService, type ConversationAction, type InboxServiceDeps } from './service.js';
export * from './schemas.js';
