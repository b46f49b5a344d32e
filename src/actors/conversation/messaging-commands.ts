import { z } from 'zod';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ContactRepo, TicketRepo } from '../../store/core/port.js';
import { type ChannelRepo, type WhatsAppChannel } from '../../store/channels/port.js';
import type { SendPacer } from '../../store/send-pacing/port.js';
import type { CreditRepo } from '../../store/credits/port.js';
import type { SessionMessageRepo } from '../../store/session-messages/port.js';
import { type ChatNetwork, type NetworkRejection } from '../../network/port.js';
import { type GraphMessage } from '../../network/graph-api.js';
import type { InboundMessageEvent, StatusEvent } from '../../network/inbound.js';
import { type MessageStatus } from '../../domain/message-status.js';
import type { MessageContent } from '../../domain/messages.js';
import type { HandlerMap } from '../durable.js';
import type { ConversationState } from './state.js';
import type { AutomationRuleRepo } from '../../store/automation/port.js';
import type { LabelRepo } from '../../store/labels/port.js';

/*
 * The conversation actor's messaging commands (sends, inbound customer
 * messages, network status updates), their replies, and what their handlers
 * need from the node.
 */

export interface MessagingHandlerDeps {
  channels: ChannelRepo;
  /** The network a channel talks to (the Graph API or the sandbox network). */
  networkFor(channel: WhatsAppChannel): ChatNetwork;
  messages: SessionMessageRepo;
  contacts: ContactRepo;
  /** The contacts' tickets: the open one's priority picks the response targets of a channel that sets them by priority. Absent: no priority. */
  tickets?: Pick<TicketRepo, 'list'>;
  credits: CreditRepo;
  log: Logger;
  /**
   * How long a successor waits for the network to report an earlier attempt
   * of a keyed send (a status echoing its callback data) before it sends again.
   */
  sendRecoveryWaitMs: number;
  /** Called when a keyed send goes to the network again because no status came for its earlier attempt. */
  onResend?(info: { attempt: number }): void;
  /** Each phone number's send budget (its tier), shared by every node. Absent: sends are not paced. */
  pacer?: SendPacer;
  /** A send waits at most this long for its number's turn; past it the send is refused with 429. */
  pacingMaxWaitMs?: number;
  /** The organizations' automation rules, run on each customer message. Absent: none run. */
  rules?: AutomationRuleRepo;
  /** The organizations' labels: rules test them and put them on conversations. Absent: a rule sees none and cannot add one. */
  labels?: LabelRepo;
}

const isObjectWithType = (v: unknown) => typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';

export const messagingCommandSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('message.send'),
    channelId: z.string().min(1),
    /** The customer's number on the chat network; the visitor's id on a web chat. */
    to: z.string().regex(/^(?:[0-9]{7,15}|[A-Z]{2}\.[0-9A-Za-z]{1,128}|v_[0-9a-f]{24})$/),
    /** `template` sends go whatever the window and handover; `freeform` ones are checked against both. */
    policy: z.enum(['template', 'freeform']),
    message: z.custom<GraphMessage>(isObjectWithType, 'message must be a network message'),
    content: z.custom<MessageContent>(isObjectWithType, 'content must be message content'),
    sender: z.enum(['bot', 'agent', 'system']),
    agentId: z.string().optional(),
    /** The send goes only while this agent holds the conversation (an agent's reply from the inbox). */
    holder: z.string().min(1).optional(),
    /** Credits reserved for this send; the actor refunds them when the network refuses it. */
    reservation: z.object({ id: z.string().min(1), amount: z.number().int().min(0) }).optional(),
    /**
     * The caller's idempotency key, when it gave one: the stored message is
     * named after it, so a retry that finds the message knows the send left
     * (its first run stopped before the actor recorded it) and finishes it
     * instead of sending a second time.
     */
    sendKey: z.string().min(1).optional(),
  }),
  z.object({ kind: z.literal('network.inbound'), channelId: z.string().min(1), event: z.custom<InboundMessageEvent>((v) => typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'message') }),
  z.object({
    kind: z.literal('network.status'),
    channelId: z.string().min(1),
    event: z.custom<StatusEvent>((v) => typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'status'),
    /** The stored message's `_id` as the webhook receiver found it: a hint that saves a lookup, checked against the network's id. */
    messageRecordId: z.string().min(1).optional(),
  }),
]);
export type MessagingCommand = z.infer<typeof messagingCommandSchema>;

export type SendReply =
  | { outcome: 'sent'; messageId: string; sessionId: string; contactId: string; sentAt: string; _id: string }
  | { outcome: 'rejected'; rejection: NetworkRejection; refunded: boolean }
  | { outcome: 'unavailable'; maybeSent: boolean; message: string; refunded: boolean };

export interface InboundReply {
  duplicate: boolean;
  sessionId: string | null;
}

export interface StatusReply {
  applied: boolean;
  status: MessageStatus | null;
  /** The message is not stored yet: the status is kept and applied once it is. */
  parked?: boolean;
}

export interface MessagingReplies {
  'message.send': SendReply;
  'network.inbound': InboundReply;
  'network.status': StatusReply;
}

/** The kinds above, to tell a messaging command from the actor's other commands. */
export const MESSAGING_COMMAND_KINDS: ReadonlySet<string> = new Set(['message.send', 'network.inbound', 'network.status']);

/** Handlers for a node that was started without messaging: every messaging command is refused. */
export function messagingUnavailableHandlers(): HandlerMap<ConversationState, MessagingCommand, MessagingReplies> {
  const refuse = () => {
    throw new AppError(503, 'messaging_unavailable', 'chat messaging is not configured on this node', undefined, { retryAfterSeconds: 5 });
  };
  return { 'message.send': refuse, 'network.inbound': refuse, 'network.status': refuse };
}

