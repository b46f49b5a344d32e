/*
 * The inbox protocol's frames, typed from the server's own zod schemas
 * (src/ws/protocol.ts, which also validates the frames and generates
 * /asyncapi.json): a type-only import, so nothing of the server is bundled and
 * the dashboard cannot drift from the protocol.
 */
import type { z } from 'zod';
import type { clientCommandSchema, serverFrameSchemas } from '../../../src/ws/protocol';

type Frame<K extends keyof typeof serverFrameSchemas> = z.infer<(typeof serverFrameSchemas)[K]>;

export type WelcomeFrame = Frame<'welcome'>;
export type EventFrame = Omit<Frame<'event'>, 'data'> & { data: Record<string, unknown> };
export type ResyncRequiredFrame = Frame<'resync_required'>;
export type ReplayDoneFrame = Frame<'replay_done'>;
export type PresenceFrame = Frame<'presence'>;
export type TypingFrame = Frame<'typing'>;
export type ConversationFrame = Frame<'conversation'>;
export type ConversationRow = ConversationFrame['conversation'];
export type ContactFrame = Frame<'contact'>;
export type AckFrame = Frame<'ack'>;
export type ErrorFrame = Frame<'error'>;
export type ServerFrame = WelcomeFrame | EventFrame | ResyncRequiredFrame | ReplayDoneFrame | PresenceFrame | TypingFrame | ConversationFrame | ContactFrame | AckFrame | ErrorFrame;
export type ClientCommand = z.infer<typeof clientCommandSchema>;

/** The events that change a conversation's row or history. */
export const CONVERSATION_EVENTS: readonly EventFrame['type'][] = ['handover.requested', 'conversation.assigned', 'handover.opened', 'conversation.resolved', 'conversation.note_added', 'conversation.labels_changed', 'inbound_message', 'message.sent', 'message_status'];

export function isEventFrame(f: ServerFrame): f is EventFrame {
  return typeof (f as EventFrame).seq === 'number' && typeof (f as EventFrame).id === 'string' && 'data' in f;
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

/** The ticket a ticket event is about: `ticket.updated` carries the ticket, `ticket.commented` the ticket beside the comment. */
export function ticketIdOf(f: EventFrame): string | undefined {
  const d = f.data;
  const t = (typeof d.ticketId === 'string' ? d : d.ticket) as { ticketId?: unknown } | undefined;
  return typeof t?.ticketId === 'string' ? t.ticketId : undefined;
}
