import { createHash } from 'node:crypto';
import type { DomainEvent } from '../../events/types.js';
import type { SessionMessage } from '../../domain/messages.js';
import type { ContactIdentity } from '../../domain/types.js';
import type { HandlerContext } from '../durable.js';
import type { MessagingHandlerDeps } from './messaging-commands.js';
import { currentSession } from './rules.js';
import type { ConversationState, Session } from './state.js';

/* What the messaging handlers share: derived ids, the actor's memo of its messages, events, sessions. */

/** Ids derived from the network's ids, so a re-run after a crash republishes the same event (stores the same message), not a new one. */
export function stableId(prefix: string, ...parts: string[]): string {
  return `${prefix}_${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 32)}`;
}

/** Messages an actor keeps in its memo (`HandlerContext.memo`), newest last: a send's status webhooks come while it is among them. */
const MEMO_MESSAGES = 8;

/** `m` as this actor just stored it: its statuses need not read it back. */
export function rememberMessage(ctx: HandlerContext, m: SessionMessage): void {
  const memo = ctx.memo;
  if (memo === undefined) return;
  const k = `message:${m._id}`;
  memo.delete(k);
  memo.set(k, m);
  if (memo.size > MEMO_MESSAGES) memo.delete(memo.keys().next().value!);
}

/** The message with record id `id` as this actor last stored it, if it remembers it. */
export function recalledMessage(ctx: HandlerContext, id: string | undefined): SessionMessage | null {
  return id === undefined ? null : ((ctx.memo?.get(`message:${id}`) as SessionMessage | undefined) ?? null);
}

export function event<T>(type: string, id: string, s: ConversationState, now: Date, data: T): DomainEvent<T> {
  return { id, type, organizationId: s.organizationId, createdAt: now.toISOString(), data };
}

export async function ensureContact(deps: MessagingHandlerDeps, s: ConversationState, ctx: HandlerContext, name: string | null, identity: ContactIdentity = {}): Promise<string> {
  const learns = name !== null || Object.keys(identity).length > 0;
  if (s.contactId !== null) {
    // A contact made by a send or by an operator learns the name the customer goes by, and their ids.
    if (learns) await deps.contacts.noteIdentity(s.organizationId, s.audienceExternalId, identity, name);
    return s.contactId;
  }
  if (learns) {
    const existing = await deps.contacts.get(s.organizationId, s.audienceExternalId);
    if (existing !== null) return (await deps.contacts.noteIdentity(s.organizationId, existing.audienceExternalId, identity, name))?.id ?? existing.id;
  }
  const c = await deps.contacts.upsert({ id: ctx.newId(), organizationId: s.organizationId, audienceExternalId: s.audienceExternalId, name, createdAt: ctx.now.toISOString(), ...identity });
  return c.id;
}

/**
 * The session a new message goes into: the latest while it is open, else a
 * new one. The log learns about it from the message's own append (same write).
 */
export function sessionFor(s: ConversationState, ctx: HandlerContext): Session {
  return currentSession(s, ctx.now, ctx.newId());
}

/** A web chat message's id (what the network's id is on the chat network): named after its stored record. */
export const webChatMessageId = (recordId: string): string => `webchat.${recordId}`;

/** Waits for both writes (neither is left running when the command fails); both values, or the first failure. */
export async function bothSettled<A, B>(first: Promise<A>, second: Promise<B>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}

/** The session a stored message went into, as the state should hold it: the open one, unless a newer one opened since. */
export function sessionOf(s: ConversationState, m: SessionMessage): Session {
  return s.session?.status === 'open' ? s.session : { id: m.sessionId, status: 'open', openedAt: m.sentAt };
}

export function withEvents<T extends { events: DomainEvent[] }>(o: T, before: DomainEvent[]): T {
  return before.length === 0 ? o : { ...o, events: [...before, ...o.events] };
}

