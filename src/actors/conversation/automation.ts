import type { AutomationFailedData, AutomationFiredData, AutomationRule, RuleInput } from '../../domain/automation.js';
import { firingRules } from '../../domain/automation.js';
import type { DomainEvent } from '../../events/types.js';
import type { HandoverEventData } from './events.js';
import type { BusinessHours } from '../../domain/routing.js';
import { AUTOMATION, queueForTeam, queueOrWait, type Routed } from './routing.js';
import { assignAgent } from './rules.js';
import type { ConversationState, TimelineDraft } from './state.js';
import { systemDraft } from './timeline.js';

/*
 * Automation rules, run by the conversation actor on each customer message,
 * in the order the messages arrive and serialized with everything else the
 * actor does. What changes the conversation (a handover, an assignment) is
 * decided here, in the same write as the message; what reaches outside (an
 * auto-reply, a webhook) is an event: `automation.fired` carries the rule's
 * actions, and the automation effects consumer carries out the replies.
 */

/** The rule id of the built-in away reply of a channel's business hours. */
export const AWAY_REPLY_RULE = 'business_hours';

/** Customer messages on which rules fired, remembered so a redelivered message never fires them twice. */
const REMEMBERED_MESSAGES = 20;

/** Data of `automation.webhook` (a rule's `webhook` action): `event` is the name the rule gives. */
export interface AutomationWebhookData {
  event: string;
  ruleId: string;
  audienceExternalId: string;
  contactId: string;
  sessionId: string;
  messageId: string;
}

export interface MessageFacts {
  networkMessageId: string;
  channelId: string;
  input: RuleInput;
  /** The channel's away reply when the message came outside its business hours (null otherwise). */
  awayReply: string | null;
  /** The channel's business hours: outside them a rule's handover waits for the next opening (absent: always open). */
  businessHours?: BusinessHours | null;
}

/** A label as events show it. */
export interface LabelRef {
  id: string;
  name: string;
  color: string;
}

/** What rules change beside the conversation's own state, done by the actor before the write that records it (each idempotent). */
export interface RuleEffects {
  /** Puts the label (a name or id) on the conversation: the label and every label on it now, or why it could not. */
  addLabel(ref: string): Promise<{ ok: true; label: LabelRef; labels: LabelRef[]; added: boolean } | { ok: false; code: string; reason: string }>;
}

function ev<T>(s: ConversationState, type: string, id: string, now: Date, data: T): DomainEvent<T> {
  return { id, type, organizationId: s.organizationId, createdAt: now.toISOString(), data };
}

/**
 * Runs the rules (and the away reply) for one customer message on `state`,
 * the conversation with that message taken in; `made` are the timeline
 * entries this change made before (routing's), kept ahead of the rules'.
 * Each rule that fires is a `rule_fired` system entry, followed by the
 * entries of what it did. `id(…)` gives an id stable for the message, so a
 * re-run records the same events and entries.
 */
export async function runAutomation(
  state: ConversationState,
  made: readonly TimelineDraft[],
  rules: readonly AutomationRule[],
  m: MessageFacts,
  now: Date,
  id: (...parts: string[]) => string,
  effects?: RuleEffects,
): Promise<Routed & { fired: string[] }> {
  if (state.automation?.ruledMessages?.includes(m.networkMessageId)) return { state, events: [], fired: [] };
  const session = state.session;
  if (session === null || state.contactId === null) return { state, events: [], fired: [] };
  const contactId = state.contactId;
  const firing = rules.length === 0 ? [] : await firingRules(rules, m.input);
  const away = m.awayReply !== null && state.automation?.awayRepliedSession !== session.id;
  // Nothing fired: nothing to remember either (a re-run fires nothing, unless the rules changed meanwhile, and then once).
  if (firing.length === 0 && !away) return { state, events: [], fired: [] };
  let s = state;
  const events: DomainEvent[] = [];
  const fired: string[] = [];
  const entries: TimelineDraft[] = [...made];
  const entry = (key: string, e: Parameters<typeof systemDraft>[3]) => entries.push(systemDraft(`auto:${id('entry', key)}`, session.id, now, { ...e, by: { type: 'automation' } }));
  const base = { audienceExternalId: s.audienceExternalId, contactId, sessionId: session.id, channelId: m.channelId, messageId: m.networkMessageId };
  if (away) {
    s = { ...s, automation: { ...s.automation, awayRepliedSession: session.id } };
    events.push(ev<AutomationFiredData>(s, 'automation.fired', id('fired', AWAY_REPLY_RULE), now, { ruleId: AWAY_REPLY_RULE, ruleName: 'Away reply (outside business hours)', ...base, actions: [{ type: 'auto_reply', text: m.awayReply! }] }));
    fired.push(AWAY_REPLY_RULE);
    entry(`fired.${AWAY_REPLY_RULE}`, { event: 'rule_fired', ruleId: AWAY_REPLY_RULE, ruleName: 'Away reply (outside business hours)' });
  }
  for (const rule of firing) {
    events.push(ev<AutomationFiredData>(s, 'automation.fired', id('fired', rule.id), now, { ruleId: rule.id, ruleName: rule.name, ...base, actions: rule.actions }));
    fired.push(rule.id);
    entry(`fired.${rule.id}`, { event: 'rule_fired', ruleId: rule.id, ruleName: rule.name });
    for (const [i, action] of rule.actions.entries()) {
      const actionId = id('action', rule.id, String(i));
      if (action.type === 'request_handover') {
        const r = queueOrWait(s, m.businessHours ?? null, now, actionId, 'rule', rule.id);
        if (r.state === s) continue;
        s = r.state;
        entries.push(...(r.state.timeline ?? []));
        events.push(...r.events);
      } else if (action.type === 'assign' && action.teamId !== undefined) {
        const r = queueForTeam(s, now, actionId, rule, action.teamId);
        if (r.events.length === 0) continue;
        s = r.state;
        entries.push(...(r.state.timeline ?? []));
        events.push(...r.events);
      } else if (action.type === 'assign' && action.agentId !== undefined) {
        const t = assignAgent(s.handover, action.agentId, now);
        if (!t.ok || t.next === s.handover) continue;
        const previousAgentId = s.handover.status === 'agent' ? s.handover.agentId : null;
        s = { ...s, handover: t.next, automation: { ...s.automation, botReplyDueAt: undefined } };
        const data: HandoverEventData = { audienceExternalId: s.audienceExternalId, contactId, sessionId: session.id, agentId: action.agentId, previousAgentId, via: 'automation', by: AUTOMATION, reason: 'rule', ruleId: rule.id };
        events.push(ev(s, 'conversation.assigned', actionId, now, data));
        entry(`assigned.${rule.id}.${i}`, { event: 'assigned', from: previousAgentId, to: action.agentId, ruleId: rule.id, ruleName: rule.name });
      } else if (action.type === 'add_label') {
        const r = effects === undefined ? { ok: false as const, code: 'labels_unavailable', reason: 'labels are not available on this node' } : await effects.addLabel(action.label);
        if (!r.ok) {
          entry(`failed.${rule.id}.${i}`, { event: 'automation_failed', ruleId: rule.id, ruleName: rule.name, action: action.type, reason: r.reason });
          events.push(ev<AutomationFailedData>(s, 'automation.failed', id('failed', rule.id, String(i)), now, { ruleId: rule.id, ruleName: rule.name, ...base, action, code: r.code, reason: r.reason }));
          continue;
        }
        // Already on it (an agent put it there, or an earlier rule): nothing to say.
        if (!r.added) continue;
        entry(`label.${rule.id}.${i}`, { event: 'label_added', label: r.label.name, ruleId: rule.id, ruleName: rule.name });
        events.push(ev(s, 'conversation.labels_changed', actionId, now, { audienceExternalId: s.audienceExternalId, labels: r.labels, by: AUTOMATION, ruleId: rule.id }));
      } else if (action.type === 'webhook') {
        events.push(ev<AutomationWebhookData>(s, 'automation.webhook', actionId, now, { event: action.event, ruleId: rule.id, audienceExternalId: s.audienceExternalId, contactId, sessionId: session.id, messageId: m.networkMessageId }));
      }
      // auto_reply, create_ticket and set_priority reach outside: carried out from the `automation.fired` event.
    }
  }
  const withEntries = entries.length === made.length ? s : { ...s, timeline: entries };
  return { state: remember(withEntries, m.networkMessageId), events, fired };
}

function remember(s: ConversationState, messageId: string): ConversationState {
  const ruled = [...(s.automation?.ruledMessages ?? []), messageId].slice(-REMEMBERED_MESSAGES);
  return { ...s, automation: { ...s.automation, ruledMessages: ruled } };
}
