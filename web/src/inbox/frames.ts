/*
 * The inbox protocol's frames (docs/inbox.md). Written from the document;
 * the server's zod schemas (src/ws/protocol.ts) are the source this module
 * switches to importing from once they exist.
 */
import type { ReplyMessage, TemplateSend } from '../api/types';

export interface WelcomeFrame {
  type: 'welcome';
  organizationId: string;
  user: { id: string; role: string };
  seq: number;
  heartbeatSeconds: number;
}

export const CONVERSATION_EVENTS = ['handover.requested', 'conversation.assigned', 'handover.opened', 'conversation.resolved', 'inbound_message', 'message.sent', 'message_status'] as const;
export const TICKET_EVENTS = ['ticket.created', 'ticket.updated'] as const;
export type EventType = (typeof CONVERSATION_EVENTS)[number] | (typeof TICKET_EVENTS)[number];

export interface EventFrame {
  type: EventType;
  id: string;
  createdAt: string;
  organizationId: string;
  data: Record<string, unknown>;
  seq: number;
}

export interface ResyncRequiredFrame {
  type: 'resync_required';
  oldestSeq: number;
  seq: number;
}
export interface ReplayDoneFrame {
  type: 'replay_done';
  seq: number;
}
export interface PresenceFrame {
  type: 'presence';
  userId: string;
  status: 'online' | 'away' | 'offline';
}
export interface TypingFrame {
  type: 'typing';
  userId: string;
  conversationId: string;
}
export interface AckFrame {
  type: 'ack';
  commandId: string;
  result: unknown;
}
export interface ErrorFrame {
  type: 'error';
  commandId?: string;
  error: { code: string; message: string; details?: unknown };
}

export type ServerFrame = WelcomeFrame | EventFrame | ResyncRequiredFrame | ReplayDoneFrame | PresenceFrame | TypingFrame | AckFrame | ErrorFrame;

export type ClientCommand =
  | { type: 'take'; id: string; conversationId: string }
  | { type: 'reply'; id: string; conversationId: string; message: ReplyMessage }
  | { type: 'send_template'; id: string; conversationId: string; template: TemplateSend }
  | { type: 'hand_back'; id: string; conversationId: string }
  | { type: 'resolve'; id: string; conversationId: string }
  | { type: 'transfer'; id: string; conversationId: string; agentId: string }
  | { type: 'typing'; id: string; conversationId: string }
  | { type: 'presence'; id: string; status: 'online' | 'away' | 'offline' };

export function isEventFrame(f: ServerFrame): f is EventFrame {
  return typeof (f as EventFrame).seq === 'number' && (f as EventFrame).id !== undefined && 'data' in f;
}

/** The conversation an event is about, where its data names one. */
export function conversationIdOf(f: EventFrame): string | undefined {
  const d = f.data;
  for (const k of ['conversationId', 'audienceExternalId']) {
    const v = d[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  const c = d.conversation as { id?: unknown } | undefined;
  return typeof c?.id === 'string' ? c.id : undefined;
}
