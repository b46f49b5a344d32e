export { InboxServer, INBOX_PATH, type InboxAuthenticators, type InboxServerOptions, type SocketCredential } from './server.js';
export { InProcessEphemeralBus, NatsEphemeralBus, type EphemeralBus, type ConversationChange } from './ephemeral.js';
export { contactAnnouncer, conversationAnnouncer } from './conversation-changes.js';
export { InProcessCredentialNotices, NatsCredentialNotices, type CredentialNotices } from './credential-notices.js';
export { clientCommandSchema, serverFrameSchemas, CLOSE, MAX_FRAME_BYTES, type ClientCommand } from './protocol.js';
export { buildAsyncApi } from './asyncapi.js';
