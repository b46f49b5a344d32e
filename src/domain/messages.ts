import type { MessageStatus } from './message-status.js';
import type { GraphTemplateComponent } from './templates.js';

/*
 * The session message record: what the message log stores and the API and
 * the live inbox show. Plain data, shared by the conversation actor, the
 * network adapters and every store of session messages.
 */

/** Who wrote a session message (DESIGN: Session message). */
export const MESSAGE_SENDERS = ['contact', 'bot', 'agent', 'system'] as const;
export type MessageSender = (typeof MESSAGE_SENDERS)[number];

export const CONTENT_TYPES = [
  'text',
  'template',
  'interactive',
  'button_reply',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'location',
  'contacts',
  'reaction',
  'unsupported',
] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

/** The content types that carry media (sent by link or by the network's media id). */
export const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

/**
 * The content of a session message. `type` and `text` are always the
 * readable gist (the rendered template body, the button title tapped);
 * the other fields carry what that type has.
 */
export interface MessageContent {
  type: ContentType;
  text?: string;
  /** Media sent by link. */
  mediaUrl?: string;
  /** Media by the network's media id (uploads and inbound media). */
  mediaId?: string;
  mimeType?: string;
  caption?: string;
  filename?: string;
  template?: { name: string; language: string; components?: GraphTemplateComponent[] };
  /** The reply buttons of an interactive message. */
  buttons?: { id: string; title: string }[];
  /** The id of the reply button tapped (button_reply from an interactive message). */
  buttonId?: string;
  /** The description of the list row chosen (a list reply, `button_reply` with `buttonId`). */
  description?: string;
  /** The catalog product a customer's message asks about (sent from a product's "message business" button). */
  referredProduct?: { catalogId: string; productRetailerId: string };
  /** The payload of the template quick-reply button tapped. */
  payload?: string;
  location?: { latitude: number; longitude: number; name?: string; address?: string; url?: string };
  /** The contact cards of a `contacts` message, as the network gave them (name.formatted_name, phones, emails, org, urls, addresses, birthday). */
  contacts?: Record<string, unknown>[];
  /** A reaction: the emoji (empty when taken back) on the message with that network id. */
  reaction?: { messageId: string; emoji: string };
  /** The ad or post a customer came from (click-to-WhatsApp), as the network gave it. */
  referral?: Record<string, unknown>;
  /** The network's message type when it is one this service does not model. */
  originalType?: string;
  /** With `unsupported`: the network's message as it came, so nothing of it is lost. */
  raw?: Record<string, unknown>;
}

export function isMediaContentType(t: ContentType): t is MediaType {
  return t === 'image' || t === 'video' || t === 'audio' || t === 'document' || t === 'sticker';
}

/** An error the network reported for a message (`errors[]` of a status webhook, or a rejected send). */
export interface NetworkErrorDetails {
  code: number;
  title: string;
  message: string;
}

/** What a system entry of the timeline records (`sender: "system"`). */
export const TIMELINE_EVENTS = ['handover_requested', 'taken', 'transferred', 'handed_back', 'resolved', 'reopened', 'ticket_created', 'assigned', 'rule_fired', 'automation_failed', 'waiting_for_opening', 'sla_breached', 'label_added', 'priority_set', 'team_assigned', 'contact_merged'] as const;
export type TimelineEvent = (typeof TIMELINE_EVENTS)[number];

/** Who caused a timeline entry: an agent (dashboard user), the bot (MCP), a script (an API key), an automation, or the customer. */
export const TIMELINE_ACTORS = ['agent', 'bot', 'api', 'automation', 'contact'] as const;
export interface TimelineActor {
  type: (typeof TIMELINE_ACTORS)[number];
  /** The user who acted (every principal has one: an API key's owner). */
  userId?: string;
  /** The API key, when one was used. */
  keyId?: string;
  keyName?: string;
}

/**
 * The structured part of a system entry: what happened to the conversation.
 * `from` and `to` are agent ids (a transfer; `from` also on a hand back or
 * resolve of a conversation an agent held).
 */
export interface SystemEntry {
  event: TimelineEvent;
  by?: TimelineActor;
  from?: string | null;
  to?: string;
  ticketId?: string;
  subject?: string;
  /** Why automation acted (`handover_requested` by automation): first_responder, bot_fallback, rule; for `automation_failed`, why the action failed. */
  reason?: string;
  /** The automation rule (`rule_fired`, `automation_failed`, and what a rule did). */
  ruleId?: string;
  ruleName?: string;
  /** `automation_failed`: the action that failed (`auto_reply`…). */
  action?: string;
  /** `waiting_for_opening`: when the conversation is queued (the channel's next opening); `sla_breached`: when the answer was due. */
  until?: string;
  /** `sla_breached`: the target missed, `first_response` or `next_response`. */
  target?: string;
  /** `label_added`: the label's name. */
  label?: string;
  /** `priority_set`: the ticket's priority now. */
  priority?: string;
  /** `team_assigned`: the team whose queue the conversation is in now (and `fromTeamId`, the one it was in before). */
  teamId?: string;
  fromTeamId?: string;
}

/**
 * One message of a session, as stored and as `GET /v1/sessions/{id}/messages`
 * returns it (spec: Session message, plus the fields below).
 */
export interface SessionMessage {
  _id: string;
  sessionId: string;
  organizationId: string;
  channelId: string;
  audienceExternalId: string;
  /** `internal`: a system entry or a private note, which never left the service. */
  direction: 'inbound' | 'outbound' | 'internal';
  sender: MessageSender;
  content: MessageContent;
  sentAt: string;
  /** The chat network's message id (`wamid…`); null for a send the network never accepted. */
  messageId: string | null;
  /** Outbound messages only. */
  status?: MessageStatus;
  statusUpdatedAt?: string;
  errors?: NetworkErrorDetails[];
  /** The network message this one replies to (a button tap names the message whose button it was). */
  replyTo?: string;
  /** The agent who sent it (sender `agent`). */
  agentId?: string;
  /** A system entry (`sender: "system"`): what happened to the conversation; `content.text` says it in words. */
  system?: SystemEntry;
  /** A private note of an agent (`sender: "agent"`, `agentId`): for the organization's agents only, never sent. */
  note?: true;
  /** Credits this send reserved; refunded if the network reports it failed. Internal: not in API responses. */
  charge?: { reservationId: string; amount: number };
}

/** Whether the customer-facing history leaves this message out (a private note). */
export function isPrivateNote(m: Pick<SessionMessage, 'note'>): boolean {
  return m.note === true;
}

/** A session message as `GET /v1/sessions/{sessionId}/messages` shows it (internal fields left out). */
export function publicMessage(m: SessionMessage): Omit<SessionMessage, 'charge' | 'organizationId'> {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { charge, organizationId, ...rest } = m;
  return rest;
}
