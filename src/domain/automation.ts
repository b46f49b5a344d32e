import type { MessageContent } from './messages.js';
import type { TicketPriority } from './types.js';

/*
 * Automation rules: what a business wants done with a customer's message
 * without writing a bot. Plain data and pure functions; the conversation
 * actor evaluates them in the order the messages arrive.
 */

export const CONDITION_FIELDS = ['text', 'payload', 'type', 'channelId', 'label', 'businessHours'] as const;
/** `attribute.<name>` tests a custom attribute of the contact. */
export type ConditionField = (typeof CONDITION_FIELDS)[number] | `attribute.${string}`;
export const CONDITION_OPERATORS = ['contains', 'equals', 'matches', 'in', 'is'] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

export interface RuleCondition {
  field: ConditionField;
  operator: ConditionOperator;
  /** `contains`: a word or phrase, or a list (any of them); `in`: a list; `matches`: a pattern; `is` (businessHours): `open` or `closed`. */
  value: string | string[];
}

export type RuleAction =
  | { type: 'request_handover' }
  /** To an agent at once (`agentId`), or into a team's queue (`teamId`). */
  | { type: 'assign'; agentId: string; teamId?: undefined }
  | { type: 'assign'; teamId: string; agentId?: undefined }
  | { type: 'auto_reply'; text?: string; template?: { name: string; language: string } }
  | { type: 'add_label'; label: string }
  | { type: 'set_priority'; priority: TicketPriority }
  | { type: 'create_ticket'; subject: string }
  | { type: 'webhook'; event: string };

export const ACTION_TYPES = ['request_handover', 'assign', 'add_label', 'set_priority', 'auto_reply', 'create_ticket', 'webhook'] as const;

export interface AutomationRule {
  id: string;
  organizationId: string;
  name: string;
  enabled: boolean;
  /** All must hold; none: every message. */
  conditions: RuleCondition[];
  actions: RuleAction[];
  /** When the rule fires, the rules after it are not evaluated for this message. */
  stop: boolean;
  createdAt: string;
  updatedAt: string;
}

/** What a rule is tested against: one customer message and where it stands. */
export interface RuleInput {
  content: MessageContent;
  channelId: string;
  /** Whether the channel is open now (true when it has no business hours). */
  withinBusinessHours: boolean;
  /** The contact's custom attributes, read only when a rule asks for one. */
  attribute(name: string): Promise<string | null>;
  /** The labels on the conversation and on the contact, each by its name and its id; read only when a rule asks. */
  labels?(): Promise<string[]>;
}

const fold = (s: string) => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
const list = (v: string | string[]) => (Array.isArray(v) ? v : [v]);

/** A rule's pattern, compiled once per text (case-insensitive, Unicode). Invalid patterns are refused when the rule is saved. */
const patterns = new Map<string, RegExp | null>();
export function compilePattern(p: string): RegExp | null {
  let r = patterns.get(p);
  if (r === undefined) {
    try {
      r = new RegExp(p, 'iu');
    } catch {
      r = null;
    }
    if (patterns.size > 5000) patterns.clear();
    patterns.set(p, r);
  }
  return r;
}

/** A field's value for one message, read and folded once however many rules test it. */
interface FieldValue {
  raw: string | null;
  folded: string | null;
}

function test(op: ConditionOperator, value: string | string[], v: FieldValue): boolean {
  const actual = v.raw;
  if (actual === null) return false;
  const a = (v.folded ??= fold(actual));
  switch (op) {
    case 'contains':
      return list(value).some((w) => w.length > 0 && a.includes(fold(w)));
    case 'equals':
    case 'is':
      return list(value).some((w) => a === fold(w));
    case 'in':
      return list(value).some((w) => a === fold(w));
    case 'matches': {
      const r = compilePattern(list(value)[0] ?? '');
      return r !== null && r.test(actual.slice(0, 4096));
    }
  }
}

/** The value a condition's field has for this message. */
async function fieldOf(c: RuleCondition, input: RuleInput): Promise<string | null> {
  if (c.field.startsWith('attribute.')) return input.attribute(c.field.slice('attribute.'.length));
  switch (c.field) {
    case 'text':
      return input.content.text ?? input.content.caption ?? null;
    case 'payload':
      return input.content.payload ?? input.content.buttonId ?? null;
    case 'type':
      return input.content.type;
    case 'channelId':
      return input.channelId;
    case 'businessHours':
      return input.withinBusinessHours ? 'open' : 'closed';
    default:
      return null;
  }
}

/** A `label` condition holds when any label (by name or id) of the conversation or the contact passes the test. */
async function labelMatches(c: RuleCondition, input: RuleInput, values: Map<string, FieldValue>): Promise<boolean> {
  let all = labelValues.get(values);
  if (all === undefined) {
    all = ((await input.labels?.()) ?? []).map((raw) => ({ raw, folded: null }));
    labelValues.set(values, all);
  }
  return all.some((v) => test(c.operator, c.value, v));
}
/** A message's labels, read once however many rules test them (keyed by the message's field values). */
const labelValues = new WeakMap<Map<string, FieldValue>, FieldValue[]>();

/** True when every condition holds for the message (a rule without conditions matches every message). */
export async function ruleMatches(rule: Pick<AutomationRule, 'conditions'>, input: RuleInput, values = new Map<string, FieldValue>()): Promise<boolean> {
  for (const c of rule.conditions) {
    if (c.field === 'label') {
      if (!(await labelMatches(c, input, values))) return false;
      continue;
    }
    let v = values.get(c.field);
    if (v === undefined) {
      v = { raw: await fieldOf(c, input), folded: null };
      values.set(c.field, v);
    }
    if (!test(c.operator, c.value, v)) return false;
  }
  return true;
}

/** The rules that fire for one message, in order: enabled ones whose conditions hold, up to and including the first that stops. */
export async function firingRules(rules: readonly AutomationRule[], input: RuleInput): Promise<AutomationRule[]> {
  const out: AutomationRule[] = [];
  const values = new Map<string, FieldValue>();
  for (const r of rules) {
    if (!r.enabled || !(await ruleMatches(r, input, values))) continue;
    out.push(r);
    if (r.stop) break;
  }
  return out;
}

/** Data of `automation.fired`: one rule that fired for one customer message. */
export interface AutomationFiredData {
  ruleId: string;
  ruleName: string;
  audienceExternalId: string;
  contactId: string;
  sessionId: string;
  channelId: string;
  /** The customer's message (the network's id) the rule fired on. */
  messageId: string;
  actions: RuleAction[];
}

/** Data of `automation.failed`: an action of a rule that fired and could not be carried out, and why. */
export interface AutomationFailedData extends Omit<AutomationFiredData, 'actions'> {
  action: RuleAction;
  code: string;
  reason: string;
}
