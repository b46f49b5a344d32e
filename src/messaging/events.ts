import type { MessageStatus } from '../domain/message-status.js';
import type { MessageContent, MessageSender, NetworkErrorDetails } from '../domain/messages.js';

/*
 * Data of the messaging events (`DomainEvent.data`), as webhooks and the live
 * inbox receive them.
 */

/** `message.sent`: the network accepted a message (accepted, not yet delivered). */
export interface MessageSentEventData {
  messageId: string;
  channelId: string;
  audienceExternalId: string;
  contactId: string;
  sessionId: string;
  to: string;
  sender: MessageSender;
  content: MessageContent;
  status: 'accepted';
  timestamp: string;
}

/** `message_status`: the network reported a new state of a sent message, against its `messageId`. */
export interface MessageStatusEventData {
  messageId: string;
  status: Exclude<MessageStatus, 'accepted'>;
  timestamp: string;
  channelId: string;
  audienceExternalId: string;
  sessionId: string;
  /** The customer's phone number, or their business-scoped user id when the message went to that. */
  recipientId: string;
  /** The customer's business-scoped user id and WhatsApp username, when known (from the status, or the customer's last message). */
  userId: string | null;
  username: string | null;
  errors?: NetworkErrorDetails[];
}

/** `inbound_message`: a contact wrote, or tapped a button. `handover` is true while a human has the conversation. */
export interface InboundMessageEventData {
  messageId: string;
  channelId: string;
  audienceExternalId: string;
  contactId: string;
  sessionId: string;
  /** Where the customer wrote from: their phone number, or their business-scoped user id when they hide the number. */
  from: string;
  /** The customer's phone number, null when they hide it. */
  phone: string | null;
  /** The customer's business-scoped user id and WhatsApp username, when the network gave them. */
  userId: string | null;
  username: string | null;
  profileName: string | null;
  content: MessageContent;
  receivedAt: string;
  handover: boolean;
  handoverStatus: 'bot' | 'queued' | 'agent';
  replyTo?: string;
}
