export { InboxService, type ConversationAction, type InboxServiceDeps, type ConversationViewInput } from './service.js';
export * from './schemas.js';
export { LabelService, DEFAULT_LABEL_COLOR, type LabelServiceDeps, type PublicLabel } from './labels.js';
