import { derivedMessageId } from '../../domain/message-id.js';
import type { SessionMessage, SystemEntry, TimelineActor } from '../../domain/messages.js';
import type { Principal } from '../../domain/types.js';
import type { ConversationState, TimelineDraft } from './state.js';

/*
 * The conversation's timeline entries besides messages: system entries (what
 * happened to the conversation: handover requested, taken, transferred, handed
 * back, resolved, reopened, ticket created) and agents' private notes. The
 * actor makes them in the command that makes the change, keeps them in its
 * state (fenced, with the change) and stores them into the session's history
 * after the commit (`project`), named by their draft's id, so each is stored
 * exactly once and in order with the messages. They never go to the network,
 * are never counted as unread and never charged.
 */

/** Who a caller is on the timeline: a dashboard session is an agent, an API key a script (`api`), and over MCP the bot. */
export function timelineActorOf(p: Principal, via?: 'mcp'): TimelineActor {
  if (p.keyId.startsWith('session:')) return { type: 'agent', userId: p.userId };
  return { type: via === 'mcp' ? 'bot' : 'api', userId: p.userId, keyId: p.keyId, ...(p.keyName === undefined ? {} : { keyName: p.keyName }) };
}

function who(by: TimelineActor | undefined): string {
  if (by === undefined) return 'someone';
  switch (by.type) {
    case 'agent':
      return by.userId === undefined ? 'an agent' : `agent ${by.userId}`;
    case 'bot':
      return 'the bot';
    case 'api':
      return by.keyName === undefined ? 'the API' : `the API (key "${by.keyName}")`;
    case 'automation':
      return 'an automation';
    case 'contact':
      return 'the customer';
  }
}

/** The readable text of a system entry: what `content.text` says (clients with names for ids may say it better). */
export function systemEntryText(e: SystemEntry): string {
  switch (e.event) {
    case 'handover_requested':
      return `Handover requested by ${who(e.by)}`;
    case 'taken':
      return `Taken by ${who(e.by)}`;
    case 'transferred': {
      const by = e.by?.userId !== undefined && e.by.userId !== e.from ? ` by ${who(e.by)}` : '';
      return `Transferred from agent ${e.from ?? 'nobody'} to agent ${e.to ?? 'nobody'}${by}`;
    }
    case 'handed_back':
      return `Handed back to the bot by ${who(e.by)}`;
    case 'resolved':
      return `Resolved by ${who(e.by)}`;
    case 'reopened':
      return e.by?.type === 'contact' ? 'Reopened: the customer wrote again' : `Reopened by ${who(e.by)}`;
    case 'ticket_created':
      return `Ticket ${e.ticketId ?? ''} created by ${who(e.by)}${e.subject === undefined ? '' : `: ${e.subject}`}`;
    case 'assigned':
      if (e.reason === 'auto_assign') return `Assigned automatically to agent ${e.to ?? 'nobody'}`;
      return `Assigned to agent ${e.to ?? 'nobody'} by ${who(e.by)}${e.ruleName === undefined ? '' : ` (rule "${e.ruleName}")`}`;
    case 'team_assigned':
      return `Queued for team ${e.teamId ?? 'none'} by ${who(e.by)}${e.ruleName === undefined ? '' : ` (rule "${e.ruleName}")`}`;
    case 'rule_fired':
      return `Automation rule "${e.ruleName ?? e.ruleId ?? ''}" fired`;
    case 'waiting_for_opening':
      return `Outside business hours: queued for an agent at the next opening (${e.until ?? 'unknown'})`;
    case 'sla_breached':
      return `Response-time target missed: the ${e.target === 'next_response' ? 'next' : 'first'} response was due at ${e.until ?? 'unknown'}`;
    case 'label_added':
      return `Label "${e.label ?? ''}" added by ${who(e.by)}${e.ruleName === undefined ? '' : ` (rule "${e.ruleName}")`}`;
    case 'priority_set':
      return `Ticket ${e.ticketId ?? ''} priority set to ${e.priority ?? ''} by ${who(e.by)}${e.ruleName === undefined ? '' : ` (rule "${e.ruleName}")`}`;
    case 'contact_merged':
      return `Merged with ${e.from ?? 'another contact'}: the same person, found by another of their ids; both histories are this contact's`;
    case 'automation_failed':
      return `Automation rule "${e.ruleName ?? e.ruleId ?? ''}" could not ${e.action === 'auto_reply' ? 'send its auto-reply' : `carry out ${e.action ?? 'an action'}`}: ${e.reason ?? 'unknown reason'}`;
  }
}

export function systemDraft(id: string, sessionId: string, at: Date, entry: SystemEntry): TimelineDraft {
  return { id, sessionId, at: at.toISOString(), text: systemEntryText(entry), system: entry };
}

export function noteDraft(id: string, sessionId: string, at: Date, agentId: string, text: string): TimelineDraft {
  return { id, sessionId, at: at.toISOString(), text, note: { agentId } };
}

/** The state with `drafts` as the entries this change made (the entries of earlier changes are stored by now). */
export function withTimeline(s: ConversationState, drafts: TimelineDraft[]): ConversationState {
  return drafts.length === 0 ? s : { ...s, timeline: drafts };
}

/** The stored message's `_id` of a draft. */
export function timelineMessageId(organizationId: string, audienceExternalId: string, draftId: string): string {
  return derivedMessageId('timeline', organizationId, audienceExternalId, draftId);
}

/** A draft as its session's history stores it. */
export function timelineMessage(s: Pick<ConversationState, 'organizationId' | 'audienceExternalId'>, d: TimelineDraft, channelId: string): SessionMessage {
  const m: SessionMessage = {
    _id: timelineMessageId(s.organizationId, s.audienceExternalId, d.id),
    sessionId: d.sessionId,
    organizationId: s.organizationId,
    channelId,
    audienceExternalId: s.audienceExternalId,
    direction: 'internal',
    sender: d.note === undefined ? 'system' : 'agent',
    content: { type: 'text', text: d.text },
    sentAt: d.at,
    messageId: null,
  };
  if (d.system !== undefined) m.system = d.system;
  if (d.note !== undefined) {
    m.note = true;
    m.agentId = d.note.agentId;
  }
  return m;
}
