export { WebChat, type WebChatDeps } from './module.js';
export { WebChatService, originAllowed, type VisitorAccess, type VisitorMessage } from './service.js';
export { InProcessVisitorNoticeBus, NatsVisitorNoticeBus, type VisitorNoticeBus } from './bus.js';
export { VISITOR_SOCKET_PATH } from './socket.js';
export { identityHash, verifiedVisitorId } from './identity.js';
