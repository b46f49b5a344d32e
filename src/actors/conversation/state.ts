/**
 * The conversation actor's state: everything the service must decide about
 * one contact of one organization, owned by exactly one actor at a time.
 * Plain JSON; times are ISO 8601 strings.
 */

/** Who answers the contact: the bot, nobody yet (waiting in the live-chat queue), or an agent. */
export type HandoverState =
  | { status: 'bot' }
  | { status: 'queued'; requestedAt: string }
  | { status: 'agent'; agentId: string; assignedAt: string };

export type SessionStatus = 'open' | 'resolved';

/** A conversation (session) of the contact; `id` is the `sessionId` of the API. */
export interface Session {
  id: string;
  status: SessionStatus;
  openedAt: string;
  /** Messages from the customer in this session, for the inbox's unread counts. */
  inboundCount?: number;
}

export interface ConversationState {
  organizationId: string;
  audienceExternalId: string;
  /** Known once a command named the contact (contacts live in the store's contacts repository). */
  contactId: string | null;
  /** The latest conversation; null until the first one opens. */
  session: Session | null;
  /** The contact's last message: the chat network's 24-hour window runs from here. */
  lastInboundAt: string | null;
  handover: HandoverState;
}

/** Actor key of a contact: organization and `audienceExternalId`, which may itself contain ':'. */
export function conversationKey(organizationId: string, audienceExternalId: string): string {
  if (organizationId.includes('/')) throw new Error('organization ids never contain "/"');
  return `${organizationId}/${audienceExternalId}`;
}

export function parseConversationKey(key: string): { organizationId: string; audienceExternalId: string } {
  const i = key.indexOf('/');
  if (i <= 0) throw new Error(`not a conversation key: ${key}`);
  return { organizationId: key.slice(0, i), audienceExternalId: key.slice(i + 1) };
}

export function initialConversationState(key: string): ConversationState {
  const { organizationId, audienceExternalId } = parseConversationKey(key);
  return { organizationId, audienceExternalId, contactId: null, session: null, lastInboundAt: null, handover: { status: 'bot' } };
}
