import { createHash } from 'node:crypto';
import { z } from 'zod';
import { routingOf, type ChannelRouting } from '../../domain/routing.js';
import { badRequest } from '../../errors.js';
import type { DomainEvent } from '../../events/types.js';
import type { DurableActorSpec, HandlerMap, Outcome } from '../durable.js';
import { assignAgent, currentSession, openHandover, requestHandover, takeConversation, transferConversation, type HandoverRefusal, type Transition } from './rules.js';
import type { ConversationIndexRepo } from '../../store/conversations/port.js';
import type { ConversationRecord } from '../../domain/conversation.js';
import { conversationRecord } from './projection.js';
import { afterHandoverChange, AUTOMATION, fireDue } from './routing.js';
import type { ContactMergedEventData, HandoverEventData, NoteEventData } from './events.js';
import { initialConversationState, type ConversationState, type HandoverState, type Session, type TimelineDraft } from './state.js';
import { TIMELINE_ACTORS, type SystemEntry, type TimelineActor } from '../../domain/messages.js';
import { noteDraft, systemDraft, timelineMessage, withTimeline } from './timeline.js';
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
/** Who acted, for the timeline's system entries (absent in commands sent before they existed). */
const timelineActor = z.object({ type: z.enum(TIMELINE_ACTORS), userId: z.string().min(1).optional(), keyId: z.string().min(1).optional(), keyName: z.string().optional() });
/** The longest private note, in characters. */
export const MAX_NOTE_LENGTH = 4096;
export const conversationCommandSchema = z.discriminatedUnion('kind', [
  /** `teamId`: into that team's queue (a conversation already queued moves to it). */
  z.object({ kind: z.literal('handover.request'), ...contactRef, actor: timelineActor.optional(), teamId: z.string().min(1).max(64).optional() }),
  /**
   * Auto-assignment gives a queued conversation to `agentId`, only while it
   * is still queued in the queue the assigner saw (`teamId`, null for none):
   * of racing assigners, and against an agent's take, one wins.
   */
  z.object({ kind: z.literal('handover.auto_assign'), ...contactRef, agentId: z.string().min(1), teamId: z.string().min(1).nullable() }),
  z.object({ kind: z.literal('handover.open'), ...contactRef, actor: timelineActor.optional() }),
  z.object({ kind: z.literal('handover.assign'), ...contactRef, agentId: z.string().min(1) }),
  /** `by` names who acted (a user id), for the events. */
  z.object({ kind: z.literal('handover.take'), ...contactRef, agentId: z.string().min(1) }),
  z.object({ kind: z.literal('handover.transfer'), ...contactRef, agentId: z.string().min(1), by: z.string().min(1), onlyFrom: z.string().min(1).optional() }),
  z.object({ kind: z.literal('handover.release'), ...contactRef, by: z.string().min(1).optional(), onlyFrom: z.string().min(1).optional() }),
  z.object({ kind: z.literal('handover.resolve'), ...contactRef, by: z.string().min(1), onlyFrom: z.string().min(1).optional() }),
  /** A private note of an agent, into the latest session's timeline. */
  z.object({ kind: z.literal('note.add'), ...contactRef, agentId: z.string().min(1), text: z.string().min(1).max(MAX_NOTE_LENGTH) }),
  /** This contact was merged into `into` (the same person): the conversation leaves the lists; its history stays. */
  z.object({ kind: z.literal('contact.merged_away'), into: z.string().min(1).max(200) }),
  /** The contact `from` was merged into this one: a `contact_merged` entry, and a `contact.merged` event. */
  z.object({ kind: z.literal('contact.merged_in'), from: z.string().min(1).max(200), fromContactId: z.string().nullable() }),
  /** A ticket was created for this contact: a system entry in the latest session's timeline. */
  z.object({ kind: z.literal('timeline.ticket'), ticketId: z.string().min(1), subject: z.string().optional(), actor: timelineActor }),
  z.object({ kind: z.literal('state.get') }),
  /** The sweeper found one of the conversation's timers due (the bot's fallback): do what is due, if it still is. */
  z.object({ kind: z.literal('automation.tick') }),
  /** An automation rule's action could not be carried out (its auto-reply was refused): a system entry says why. */
  z.object({
    kind: z.literal('automation.failed'),
    failureId: z.string().min(1).max(200),
    sessionId: z.string().min(1),
    ruleId: z.string().min(1),
    ruleName: z.string(),
    action: z.string().min(1),
    reason: z.string().max(2000),
  }),
  /** An automation rule's action on a ticket was carried out (a ticket created, a priority set): a system entry names the rule. */
  z.object({
    kind: z.literal('automation.entry'),
    entryId: z.string().min(1).max(200),
    sessionId: z.string().min(1),
    ruleId: z.string().min(1),
    ruleName: z.string(),
    event: z.enum(['ticket_created', 'priority_set']),
    ticketId: z.string().min(1),
    subject: z.string().max(500).optional(),
    priority: z.string().max(20).optional(),
  }),
]);

export type ConversationCommand = z.infer<typeof conversationCommandSchema>;

export interface HandoverReply {
  success: boolean;
  /** Why nothing changed, when `success` is false. */
  reason?: HandoverRefusal;
  sessionId: string | null;
  handover: HandoverState;
}

export interface NoteReply {
  success: boolean;
  reason?: HandoverRefusal;
  sessionId: string | null;
  /** The stored note's `_id` in the session's history. */
  messageId?: string;
}

export interface ConversationReplies {
  'handover.request': HandoverReply;
  'handover.auto_assign': HandoverReply;
  'handover.open': HandoverReply;
  'handover.assign': HandoverReply;
  'handover.take': HandoverReply;
  'handover.transfer': HandoverReply;
  'handover.release': HandoverReply;
  'handover.resolve': HandoverReply;
  'note.add': NoteReply;
  'timeline.ticket': { success: boolean; sessionId: string | null };
  'contact.merged_away': { merged: boolean };
  'contact.merged_in': { merged: boolean; sessionId: string | null };
  'state.get': ConversationState;
  'automation.tick': { fired: string[] };
  'automation.failed': { recorded: boolean };
  'automation.entry': { recorded: boolean };
}

function event(type: string, s: ConversationState, id: string, now: Date, data: HandoverEventData): DomainEvent<HandoverEventData> {
  return { id, type, organizationId: s.organizationId, createdAt: now.toISOString(), data };
}

const refused = (s: ConversationState, reason: HandoverRefusal): Outcome<ConversationState, HandoverReply> => ({
  state: s,
  reply: { success: false, reason, sessionId: s.session?.id ?? null, handover: s.handover },
});

/** Who acted, as a system entry names an agent acting in the inbox. */
const agent = (userId: string | undefined): TimelineActor | undefined => (userId === undefined ? undefined : { type: 'agent', userId });

/** A system entry, without the fields it does not have. */
function entry(event: SystemEntry['event'], fields: Omit<SystemEntry, 'event'>): SystemEntry {
  return { event, ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) };
}

/**
 * The timeline entries of a change that puts the conversation in `session`:
 * `reopened` first when that is a new session after a resolved one, then `entries`.
 */
function drafts(s: ConversationState, session: Session, now: Date, newId: () => string, by: TimelineActor | undefined, ...entries: SystemEntry[]): TimelineDraft[] {
  const out: TimelineDraft[] = [];
  if (s.session !== null && s.session.status === 'resolved' && session.id !== s.session.id) out.push(systemDraft(newId(), session.id, now, entry('reopened', { by })));
  for (const e of entries) out.push(systemDraft(newId(), session.id, now, e));
  return out;
}

export const conversationHandlers: HandlerMap<ConversationState, ConversationCommand, ConversationReplies> = {
  'handover.request': (s, cmd, { now, newId }) => {
    // Already queued: naming another team moves it to that team's queue.
    if (cmd.teamId !== undefined && s.handover.status === 'queued' && s.session !== null && s.teamId !== cmd.teamId) {
      return toTeamQueue(s, cmd.contactId, cmd.teamId, cmd.actor, now, newId);
    }
    const t = requestHandover(s.handover, now);
    if (!t.ok) return refused(s, t.reason);
    // The latest conversation goes to the queue; a contact with none yet (or
    // only a resolved one) gets a new conversation for the agent to pick up.
    const session = currentSession(s, now, newId());
    const entries = [entry('handover_requested', { by: cmd.actor })];
    if (cmd.teamId !== undefined) entries.push(entry('team_assigned', { by: cmd.actor, teamId: cmd.teamId }));
    const timeline = drafts(s, session, now, newId, cmd.actor, ...entries);
    const next: ConversationState = withTimeline({ ...s, contactId: cmd.contactId, session, handover: t.next, ...(cmd.teamId === undefined ? {} : { teamId: cmd.teamId }) }, timeline);
    const data: HandoverEventData = { audienceExternalId: s.audienceExternalId, contactId: cmd.contactId, sessionId: session.id };
    if (cmd.actor !== undefined) data.requestedBy = cmd.actor;
    if (cmd.teamId !== undefined) data.teamId = cmd.teamId;
    return {
      state: next,
      reply: { success: true, sessionId: session.id, handover: t.next },
      events: [event('handover.requested', next, newId(), now, data)],
    };
  },

  'handover.auto_assign': (s, cmd, { now, newId }) => {
    if (s.handover.status !== 'queued' || s.session === null || (s.teamId ?? null) !== cmd.teamId) {
      return refused(s, s.handover.status === 'agent' ? 'already_taken' : s.handover.status === 'queued' ? 'already_queued' : 'already_with_bot');
    }
    const handover: HandoverState = { status: 'agent', agentId: cmd.agentId, assignedAt: now.toISOString() };
    const by: TimelineActor = { type: 'automation' };
    const timeline = [systemDraft(newId(), s.session.id, now, entry('assigned', { by, from: null, to: cmd.agentId, reason: 'auto_assign', teamId: s.teamId }))];
    const next: ConversationState = withTimeline({ ...s, contactId: cmd.contactId, handover }, timeline);
    const data: HandoverEventData = { audienceExternalId: s.audienceExternalId, contactId: cmd.contactId, sessionId: s.session.id, agentId: cmd.agentId, previousAgentId: null, via: 'auto_assign', by: AUTOMATION };
    if (s.teamId !== undefined) data.teamId = s.teamId;
    return { state: next, reply: { success: true, sessionId: s.session.id, handover }, events: [event('conversation.assigned', next, newId(), now, data)] };
  },

  'handover.open': (s, cmd, { now, newId }) => {
    const t = openHandover(s.handover);
    if (!t.ok || s.session === null) return refused(s, 'already_with_bot');
    const timeline = drafts(s, s.session, now, newId, cmd.actor, entry('handed_back', { by: cmd.actor, from: holderOf(s) }));
    const next: ConversationState = withTimeline({ ...s, contactId: cmd.contactId, handover: t.next }, timeline);
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

  'handover.take': (s, cmd, { now, newId }) => {
    const t = takeConversation(s.handover, cmd.agentId, now);
    if (!t.ok) return refused(s, t.reason);
    if (t.next === s.handover) return { state: s, reply: { success: true, sessionId: s.session?.id ?? null, handover: s.handover } };
    return assigned(s, cmd.contactId, t, now, newId, { via: 'take', by: cmd.agentId });
  },

  'handover.transfer': (s, cmd, { now, newId }) => {
    if (cmd.onlyFrom !== undefined && !heldBy(s, cmd.onlyFrom)) return refused(s, 'not_assigned');
    const t = transferConversation(s.handover, cmd.agentId, now);
    if (!t.ok) return refused(s, t.reason);
    if (t.next === s.handover) return { state: s, reply: { success: true, sessionId: s.session?.id ?? null, handover: s.handover } };
    return assigned(s, cmd.contactId, t, now, newId, { via: 'transfer', by: cmd.by });
  },

  // Back to the bot (an agent's hand back); `onlyFrom` refuses unless that agent holds it (a queued one anyone may release).
  'handover.release': (s, cmd, { now, newId }) => {
    if (cmd.onlyFrom !== undefined && s.handover.status === 'agent' && !heldBy(s, cmd.onlyFrom)) return refused(s, 'not_assigned');
    const t = openHandover(s.handover);
    if (!t.ok || s.session === null) return refused(s, 'already_with_bot');
    const timeline = drafts(s, s.session, now, newId, agent(cmd.by), entry('handed_back', { by: agent(cmd.by), from: holderOf(s) }));
    const next: ConversationState = withTimeline({ ...s, contactId: cmd.contactId, handover: t.next }, timeline);
    const data: HandoverEventData = { audienceExternalId: s.audienceExternalId, contactId: cmd.contactId, sessionId: s.session.id, previous: s.handover };
    if (cmd.by !== undefined) data.by = cmd.by;
    return { state: next, reply: { success: true, sessionId: s.session.id, handover: t.next }, events: [event('handover.opened', next, newId(), now, data)] };
  },

  // Closes the session and gives the contact back to the bot; the contact's next message opens a new session.
  'handover.resolve': (s, cmd, { now, newId }) => {
    if (s.session === null || s.session.status !== 'open') return refused(s, 'no_conversation');
    if (cmd.onlyFrom !== undefined && s.handover.status === 'agent' && !heldBy(s, cmd.onlyFrom)) return refused(s, 'not_assigned');
    const timeline = drafts(s, s.session, now, newId, agent(cmd.by), entry('resolved', { by: agent(cmd.by), from: holderOf(s) }));
    const next: ConversationState = withTimeline({ ...s, contactId: cmd.contactId, session: { ...s.session, status: 'resolved' }, handover: { status: 'bot' } }, timeline);
    return {
      state: next,
      reply: { success: true, sessionId: s.session.id, handover: next.handover },
      events: [event('conversation.resolved', next, newId(), now, { audienceExternalId: s.audienceExternalId, contactId: cmd.contactId, sessionId: s.session.id, previous: s.handover, by: cmd.by })],
    };
  },

  // Into the latest session, open or resolved (a note on a closed conversation is still about it); none yet: nothing to note on.
  'note.add': (s, cmd, { now, newId }) => {
    if (s.session === null) return { state: s, reply: { success: false, reason: 'no_conversation', sessionId: null } };
    const draft = noteDraft(newId(), s.session.id, now, cmd.agentId, cmd.text);
    const next: ConversationState = withTimeline({ ...s, contactId: cmd.contactId }, [draft]);
    const messageId = timelineMessage(s, draft, '')._id;
    const data: NoteEventData = { audienceExternalId: s.audienceExternalId, contactId: cmd.contactId, sessionId: s.session.id, messageId, agentId: cmd.agentId, text: cmd.text, createdAt: draft.at };
    return { state: next, reply: { success: true, sessionId: s.session.id, messageId }, events: [event('conversation.note_added', next, newId(), now, data)] };
  },

  'timeline.ticket': (s, cmd, { now, newId }) => {
    if (s.session === null) return { state: s, reply: { success: false, sessionId: null } };
    const draft = systemDraft(newId(), s.session.id, now, entry('ticket_created', { by: cmd.actor, ticketId: cmd.ticketId, subject: cmd.subject }));
    return { state: withTimeline(s, [draft]), reply: { success: true, sessionId: s.session.id } };
  },

  'state.get': (s) => ({ state: s, reply: s }),

  'contact.merged_away': (s, cmd) => (s.mergedInto === cmd.into ? { state: s, reply: { merged: false } } : { state: { ...s, mergedInto: cmd.into }, reply: { merged: true } }),

  'contact.merged_in': (s, cmd, { now, newId }) => {
    const data: ContactMergedEventData = { audienceExternalId: s.audienceExternalId, contactId: s.contactId, mergedAudienceExternalId: cmd.from, mergedContactId: cmd.fromContactId };
    const merged: DomainEvent<ContactMergedEventData> = { id: newId(), type: 'contact.merged', organizationId: s.organizationId, createdAt: now.toISOString(), data };
    if (s.session === null) return { state: s, reply: { merged: true, sessionId: null }, events: [merged] };
    const draft = systemDraft(newId(), s.session.id, now, entry('contact_merged', { from: cmd.from }));
    return { state: withTimeline(s, [draft]), reply: { merged: true, sessionId: s.session.id }, events: [merged] };
  },

  'automation.failed': (s, cmd, { now }) => {
    const entry = systemDraft(`autofail:${cmd.failureId}`, cmd.sessionId, now, {
      event: 'automation_failed',
      by: { type: 'automation' },
      ruleId: cmd.ruleId,
      ruleName: cmd.ruleName,
      action: cmd.action,
      reason: cmd.reason,
    });
    return { state: withTimeline(s, [entry]), reply: { recorded: true } };
  },

  'automation.entry': (s, cmd, { now }) => {
    const { kind: _kind, entryId, sessionId, ...fields } = cmd;
    const entry = systemDraft(`autodone:${entryId}`, sessionId, now, { by: { type: 'automation' }, ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)), event: cmd.event });
    return { state: withTimeline(s, [entry]), reply: { recorded: true } };
  },

  'automation.tick': (s, _cmd, { now }) => tick(s, now),
};

/**
 * Does what is due on the conversation's timers. Ids are derived from the
 * conversation and the timer, so a re-run of a tick records the same events.
 * `routing` is the channel's (its business hours), when the node knows it.
 */
function tick(s: ConversationState, now: Date, routing?: ChannelRouting): Outcome<ConversationState, { fired: string[] }> {
  const id = (what: string) => `tick_${createHash('sha256').update([s.organizationId, s.audienceExternalId, what].join('\u0000')).digest('base64url').slice(0, 32)}`;
  const r = fireDue(s, now, id, routing);
  // Nothing due (another node's sweep came first, or the timer was cleared): nothing to write or remember.
  if (r.state === s) return { state: s, reply: { fired: [] }, forget: true };
  return { state: r.state, reply: { fired: r.fired }, events: r.events };
}

/** Every handler, with the timers of the previous holder voided when a command changes who has the conversation. */
function withRoutingTimers<C extends { kind: string }, R extends { [K in C['kind']]: unknown }>(handlers: HandlerMap<ConversationState, C, R>): HandlerMap<ConversationState, C, R> {
  const out: Record<string, unknown> = {};
  for (const [kind, h] of Object.entries(handlers) as [string, (s: ConversationState, c: never, ctx: never) => Outcome<ConversationState, unknown> | Promise<Outcome<ConversationState, unknown>>][]) {
    out[kind] = async (s: ConversationState, c: never, ctx: never) => {
      const o = await h(s, c, ctx);
      const state = afterHandoverChange(s, o.state);
      return state === o.state ? o : { ...o, state };
    };
  }
  return out as HandlerMap<ConversationState, C, R>;
}

/** A queued conversation moves to a team's queue: a `team_assigned` entry and a `conversation.team_assigned` event. */
function toTeamQueue(s: ConversationState, contactId: string, teamId: string, by: TimelineActor | undefined, now: Date, newId: () => string): Outcome<ConversationState, HandoverReply> {
  const session = s.session!;
  const timeline = [systemDraft(newId(), session.id, now, entry('team_assigned', { by, teamId, fromTeamId: s.teamId }))];
  const next: ConversationState = withTimeline({ ...s, contactId, teamId }, timeline);
  const data: HandoverEventData = { audienceExternalId: s.audienceExternalId, contactId, sessionId: session.id, teamId, previousTeamId: s.teamId ?? null };
  if (by !== undefined) data.requestedBy = by;
  return { state: next, reply: { success: true, sessionId: session.id, handover: s.handover }, events: [event('conversation.team_assigned', next, newId(), now, data)] };
}

function heldBy(s: ConversationState, agentId: string): boolean {
  return s.handover.status === 'agent' && s.handover.agentId === agentId;
}

/** The agent holding the conversation, if one does. */
function holderOf(s: ConversationState): string | undefined {
  return s.handover.status === 'agent' ? s.handover.agentId : undefined;
}

function assigned(
  s: ConversationState,
  contactId: string,
  t: Extract<Transition, { ok: true }>,
  now: Date,
  newId: () => string,
  how: { via: 'take' | 'transfer'; by: string },
): Outcome<ConversationState, HandoverReply> {
  const session = currentSession(s, now, newId());
  const agentId = t.next.status === 'agent' ? t.next.agentId : '';
  const previousAgentId = s.handover.status === 'agent' ? s.handover.agentId : null;
  const by = agent(how.by);
  const timeline = drafts(s, session, now, newId, by, how.via === 'take' ? entry('taken', { by, from: previousAgentId ?? undefined }) : entry('transferred', { by, from: previousAgentId, to: agentId }));
  const next: ConversationState = withTimeline({ ...s, contactId, session, handover: t.next }, timeline);
  return {
    state: next,
    reply: { success: true, sessionId: session.id, handover: t.next },
    events: [event('conversation.assigned', next, newId(), now, { audienceExternalId: s.audienceExternalId, contactId, sessionId: session.id, agentId, previousAgentId, via: how.via, by: how.by })],
  };
}

/**
 * Every handler, dropping the timeline entries of the change before: they
 * were stored when it was projected, which the runtime makes sure of before
 * it runs the next command.
 */
function droppingStoredTimeline<H extends Record<string, (s: ConversationState, cmd: never, ctx: never) => unknown>>(handlers: H): H {
  return Object.fromEntries(
    Object.entries(handlers).map(([kind, h]) => [
      kind,
      async (s: ConversationState, cmd: never, ctx: never) => {
        const o = (await h(s, cmd, ctx)) as Outcome<ConversationState, unknown>;
        if (o.state === s || s.timeline === undefined || o.state.timeline !== s.timeline) return o;
        const { timeline: _stored, ...rest } = o.state;
        return { ...o, state: rest };
      },
    ]),
  ) as H;
}

/** The channel id of a conversation: the channel with its `audienceExternalId`'s phone number id (a web chat's: its own id). */
async function channelIdOf(channels: MessagingHandlerDeps['channels'], organizationId: string, audienceExternalId: string): Promise<string> {
  const suffix = audienceExternalId.slice(audienceExternalId.indexOf(':') + 1);
  const byNumber = await channels.getByPhoneNumberId(suffix);
  if (byNumber !== null && byNumber.organizationId === organizationId) return byNumber.id;
  return (await channels.get(organizationId, suffix))?.id ?? suffix;
}

/** The routing of the conversation's channel now (the defaults when it has none or is gone). */
async function routingNow(channels: MessagingHandlerDeps['channels'], s: ConversationState): Promise<ChannelRouting> {
  const channel = await channels.get(s.organizationId, await channelIdOf(channels, s.organizationId, s.audienceExternalId));
  return channel === null ? routingOf({}) : routingOf(channel);
}

/**
 * The conversation actor. With `messaging` it also handles the messaging
 * commands of `messaging.ts` (sends, inbound messages, statuses); without it
 * those are refused with 503.
 */
export function conversationActorSpec(
  maxIdempotencyKeys: number,
  messaging?: MessagingHandlerDeps,
  /** Where the inbox's conversation list is kept up to date (see `conversationRecord`). */
  index?: ConversationIndexRepo,
  /** Told each record the list stored, once the command that wrote it committed (the live inbox announces it). */
  onListed?: (record: ConversationRecord) => void,
): DurableActorSpec<ConversationState, ConversationCommand | MessagingCommand, ConversationReplies & MessagingReplies> {
  const project =
    index === undefined && messaging === undefined
      ? undefined
      : async (state: ConversationState, version: number, now: Date) => {
          // The change's timeline entries first, each once (by its `_id`), before anything of the next command.
          if (messaging !== undefined && state.timeline !== undefined && state.timeline.length > 0) {
            const channelId = await channelIdOf(messaging.channels, state.organizationId, state.audienceExternalId);
            for (const d of state.timeline) await messaging.messages.append(timelineMessage(state, d, channelId));
          }
          // A contact nobody ever wrote to or named has nothing to list; one merged into another leaves the lists.
          if (index === undefined || (state.contactId === null && state.session === null)) return;
          if (state.mergedInto !== undefined) return void (await index.remove(state.organizationId, state.audienceExternalId));
          const record = conversationRecord(state, version, now);
          if ((await index.put(record)) && onListed !== undefined) return () => onListed(record);
        };
  return {
    ...(project === undefined ? {} : { project }),
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
    handlers: withRoutingTimers<ConversationCommand | MessagingCommand, ConversationReplies & MessagingReplies>(
      droppingStoredTimeline({
        ...conversationHandlers,
        ...(messaging ? messagingHandlers(messaging) : messagingUnavailableHandlers()),
        // With the channels at hand, timers are judged on the channel's business hours as they are now.
        ...(messaging ? { 'automation.tick': async (s: ConversationState, _cmd: unknown, { now }: { now: Date }) => tick(s, now, await routingNow(messaging.channels, s)) } : {}),
      }),
    ),
    maxIdempotencyKeys,
    readOnly: ['state.get'],
    // A status changes no state unless it was parked or charges a late copy; its event needs no state write.
    reportKinds: ['network.status'],
  };
}
