export { ReplyInbox, type Attempt } from './reply-inbox.js';
