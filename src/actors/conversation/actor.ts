import { z } from 'zod';
import { badRequest } from '../../errors.js';
import type { DomainEvent } from '../../events/types.js';
import type { DurableActorSpec, HandlerMap, Outcome } from '../durable.js';
import { assignAgent, currentSession, openHandover, requestHandover, type HandoverRefusal } from './rules.js';
import { initialConversationState, type ConversationState, type HandoverState } from './state.js';
import {
  messagingCommandSchema,
  messagingHandlers,
  messagingUnavailableHandlers,
  MESSAGING_COMMAND_KINDS,
  type MessagingCommand,
  type MessagingHandlerDeps,
  type MessagingReplies,
} from './messaging.js';

export const CONVERSATION_ACTOR = 'conversation';

/**
 * Every command the conversation actor understands. To add one (sends,
 * inbound messages, statuses...): add its schema here, its reply type to
 * `ConversationReplies`, and its handler to `conversationHandlers`; the
 * runtime needs no change.
 */
const contactRef = { contactId: z.string().min(1) };
export const conversationCommandSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('handover.request'), ...contactRef }),
  z.object({ kind: z.literal('handover.open'), ...contactRef }),
  z.object({ kind: z.literal('handover.assign'), ...contactRef, agentId: z.string().min(1) }),
  z.object({ kind: z.literal('state.get') }),
]);

export type ConversationCommand = z.infer<typeof conversationCommandSchema>;

export interface HandoverReply {
  success: boolean;
  /** Why nothing changed, when `success` is false. */
  reason?: HandoverRefusal;
  sessionId: string | null;
  handover: HandoverState;
}

export interface ConversationReplies {
  'handover.request': HandoverReply;
  'handover.open': HandoverReply;
  'handover.assign': HandoverReply;
  'state.get': ConversationState;
}

/** Data of `handover.requested` / `handover.opened` events. */
export interface HandoverEventData {
  audienceExternalId: string;
  contactId: string;
  sessionId: string;
  /** For `handover.opened`: who had the conversation before it went back to the bot. */
  previous?: HandoverState;
}

function event(type: string, s: ConversationState, id: string, now: Date, data: HandoverEventData): DomainEvent<HandoverEventData> {
  return { id, type, organizationId: s.organizationId, createdAt: now.toISOString(), data };
}

const refused = (s: ConversationState, reason: HandoverRefusal): Outcome<ConversationState, HandoverReply> => ({
  state: s,
  reply: { success: false, reason, sessionId: s.session?.id ?? null, handover: s.handover },
});

export const conversationHandlers: HandlerMap<ConversationState, ConversationCommand, ConversationReplies> = {
  'handover.request': (s, cmd, { now, newId }) => {
    const t = requestHandover(s.handover, now);
    if (!t.ok) return refused(s, t.reason);
    // The latest conversation goes to the queue; a contact with none yet (or
    // only a resolved one) gets a new conversation for the agent to pick up.
    const session = currentSession(s, now, newId());
    const next: ConversationState = { ...s, contactId: cmd.contactId, session, handover: t.next };
    return {
      state: next,
      reply: { success: true, sessionId: session.id, handover: t.next },
      events: [event('handover.requested', next, newId(), now, { audienceExternalId: s.audienceExternalId, contactId: cmd.contactId, sessionId: session.id })],
    };
  },

  'handover.open': (s, cmd, { now, newId }) => {
    const t = openHandover(s.handover);
    if (!t.ok || s.session === null) return refused(s, 'already_with_bot');
    const next: ConversationState = { ...s, contactId: cmd.contactId, handover: t.next };
    return {
      state: next,
      reply: { success: true, sessionId: s.session.id, handover: t.next },
      events: [
        event('handover.opened', next, newId(), now, {
          audienceExternalId: s.audienceExternalId,
          contactId: cmd.contactId,
          sessionId: s.session.id,
          previous: s.handover,
        }),
      ],
    };
  },

  'handover.assign': (s, cmd, { now, newId }) => {
    const t = assignAgent(s.handover, cmd.agentId, now);
    if (!t.ok) return refused(s, t.reason);
    if (t.next === s.handover) return { state: s, reply: { success: true, sessionId: s.session?.id ?? null, handover: s.handover } };
    const session = currentSession(s, now, newId());
    const next: ConversationState = { ...s, contactId: cmd.contactId, session, handover: t.next };
    return { state: next, reply: { success: true, sessionId: session.id, handover: t.next } };
  },

  'state.get': (s) => ({ state: s, reply: s }),
};

/**
 * The conversation actor. With `messaging` it also handles the messaging
 * commands of `messaging.ts` (sends, inbound messages, statuses); without it
 * those are refused with 503.
 */
export function conversationActorSpec(
  maxIdempotencyKeys: number,
  messaging?: MessagingHandlerDeps,
): DurableActorSpec<ConversationState, ConversationCommand | MessagingCommand, ConversationReplies & MessagingReplies> {
  return {
    type: CONVERSATION_ACTOR,
    initial: initialConversationState,
    parse: (raw) => {
      const kind = (raw as { kind?: unknown } | null)?.kind;
      const schema: z.ZodType<ConversationCommand | MessagingCommand> =
        typeof kind === 'string' && MESSAGING_COMMAND_KINDS.has(kind) ? messagingCommandSchema : conversationCommandSchema;
      const r = schema.safeParse(raw);
      if (!r.success) throw badRequest('invalid_command', 'invalid conversation command', z.treeifyError(r.error));
      return r.data;
    },
    handlers: { ...conversationHandlers, ...(messaging ? messagingHandlers(messaging) : messagingUnavailableHandlers()) },
    maxIdempotencyKeys,
    readOnly: ['state.get'],
  };
}
