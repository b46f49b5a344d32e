import type { TimelineActor } from '../../domain/messages.js';
import type { HandoverState } from './state.js';

/*
 * The data of the events the conversation actor emits, apart from the
 * handlers that emit them, so routing, automation and the actor all read
 * them from here (and none imports another for a type).
 */

/** Why automation acted: the channel's first responder, the bot's fallback, or a rule. */
export type AutomationReason = 'first_responder' | 'bot_fallback' | 'rule';

/** Data of `handover.requested` / `handover.opened` / `conversation.assigned` / `conversation.resolved` events. */
export interface HandoverEventData {
  audienceExternalId: string;
  contactId: string;
  sessionId: string;
  /** For `handover.opened` and `conversation.resolved`: who had the conversation before it went back to the bot. */
  previous?: HandoverState;
  /** For `conversation.assigned`: the agent who has it now, who had it before, and how it came to them. */
  agentId?: string;
  previousAgentId?: string | null;
  via?: 'take' | 'transfer' | 'automation' | 'auto_assign';
  /** For `handover.requested` and `conversation.team_assigned`: the team whose queue it is in (and the one it was in before, if any). */
  teamId?: string;
  previousTeamId?: string | null;
  /** The user who acted, when a user did; `automation` when routing or a rule did. */
  by?: string;
  /** Why automation acted (`by: "automation"`): the channel's first responder, the bot's fallback, or a rule. */
  reason?: AutomationReason;
  /** The rule that acted, when one did. */
  ruleId?: string;
  /** For `handover.requested`: who asked (an agent, the bot over MCP, a script with an API key, an automation). */
  requestedBy?: TimelineActor;
}

/** Data of `contact.merged`: the contact `mergedAudienceExternalId` names turned out to be this one's person, and is part of it now. */
export interface ContactMergedEventData {
  audienceExternalId: string;
  contactId: string | null;
  mergedAudienceExternalId: string;
  mergedContactId: string | null;
}

/** Data of `conversation.note_added`: a private note, for the organization's agents (and webhooks), never the customer. */
export interface NoteEventData {
  audienceExternalId: string;
  contactId: string;
  sessionId: string;
  /** The note's `_id` in the session's history. */
  messageId: string;
  agentId: string;
  text: string;
  createdAt: string;
}

