import type { ChannelDetail, Label, RuleActionType, Team, TeamMember } from '../api/types';

/*
 * Automation rules in words, for the list and the editor's choices. The
 * fields, operators and action types are the API's (src/domain/automation.ts
 * and the zod schemas of /v1/automation-rules); an action type added there
 * and not yet known here is still listed and kept, by its name.
 */

/** What the editor offers for a condition's field (`attribute` stands for `attribute.<name>`). */
export const FIELD_CHOICES = ['text', 'payload', 'type', 'channelId', 'label', 'attribute', 'businessHours'] as const;
export type FieldChoice = (typeof FIELD_CHOICES)[number];

export const FIELD_LABELS: Record<FieldChoice, string> = {
  text: 'Message text',
  payload: 'Quick reply or button payload',
  type: 'Message type',
  channelId: 'Channel',
  label: 'Label (of the conversation or the contact)',
  attribute: 'Contact attribute',
  businessHours: 'Business hours',
};

export type Operator = 'contains' | 'equals' | 'matches' | 'in' | 'is';

/** The operators the API accepts for each field (it refuses the others). */
export const OPERATORS_OF: Record<FieldChoice, readonly Operator[]> = {
  text: ['contains', 'equals', 'in', 'matches'],
  payload: ['equals', 'contains', 'in', 'matches'],
  type: ['equals', 'in'],
  channelId: ['equals', 'in'],
  label: ['in', 'equals', 'matches'],
  attribute: ['equals', 'in', 'contains', 'matches'],
  businessHours: ['is'],
};

export const OPERATOR_LABELS: Record<Operator, string> = {
  contains: 'contains any of',
  equals: 'equals',
  in: 'is one of',
  matches: 'matches the pattern',
  is: 'is',
};

export const ACTION_LABELS: Partial<Record<RuleActionType, string>> & Record<string, string | undefined> = {
  request_handover: 'Queue for an agent (handover)',
  assign: 'Assign to an agent or a team',
  add_label: 'Add a label',
  set_priority: "Set the open ticket's priority",
  create_ticket: 'Create a ticket',
  auto_reply: 'Send an auto-reply',
  webhook: 'Notify by webhook event',
};

export function fieldChoiceOf(field: string): FieldChoice {
  if (field.startsWith('attribute.')) return 'attribute';
  return (FIELD_CHOICES as readonly string[]).includes(field) ? (field as FieldChoice) : 'text';
}

const quoted = (v: string | string[]) => (Array.isArray(v) ? v : [v]).map((x) => `“${x}”`).join(', ');

export interface Names {
  channels: ReadonlyMap<string, ChannelDetail>;
  members: ReadonlyMap<string, TeamMember>;
  teams: ReadonlyMap<string, Team>;
  labels: ReadonlyMap<string, Label>;
}

/** The organization's label a rule names, by its id or its name (any case, as the API takes it). */
export function labelOf(ref: string, names: Pick<Names, 'labels'>): Label | undefined {
  const byId = names.labels.get(ref);
  if (byId !== undefined) return byId;
  const folded = ref.toLowerCase();
  return [...names.labels.values()].find((l) => l.name.toLowerCase() === folded);
}

const labelName = (ref: string, names: Names) => labelOf(ref, names)?.name ?? ref;

export function describeCondition(c: { field: string; operator: string; value: string | string[] }, names: Names): string {
  const choice = fieldChoiceOf(c.field);
  const what = choice === 'attribute' ? `attribute ${c.field.slice('attribute.'.length)}` : choice === 'label' ? 'a label' : FIELD_LABELS[choice].toLowerCase();
  const list = Array.isArray(c.value) ? c.value : [c.value];
  const values =
    choice === 'channelId'
      ? list.map((id) => names.channels.get(id)?.name ?? id).join(', ')
      : choice === 'label' && c.operator !== 'matches'
        ? quoted(list.map((ref) => labelName(ref, names)))
        : choice === 'businessHours'
          ? String(c.value)
          : quoted(c.value);
  return `${what} ${OPERATOR_LABELS[c.operator as Operator] ?? c.operator} ${values}`;
}

export function describeAction(a: { type: string } & Record<string, unknown>, names: Names): string {
  switch (a.type) {
    case 'request_handover':
      return 'queue for an agent';
    case 'assign':
      return typeof a.agentId === 'string' ? `assign to ${names.members.get(a.agentId)?.name ?? a.agentId}` : `queue for team ${typeof a.teamId === 'string' ? (names.teams.get(a.teamId)?.name ?? a.teamId) : '?'}`;
    case 'auto_reply': {
      const t = a.template as { name: string; language: string } | undefined;
      const parts = [typeof a.text === 'string' ? `reply “${a.text}”` : null, t ? `template ${t.name} (${t.language})${typeof a.text === 'string' ? ' when the window is closed' : ''}` : null];
      return parts.filter(Boolean).join(', or ');
    }
    case 'webhook':
      return `webhook event “${String(a.event)}”`;
    case 'add_label':
      return `add label “${labelName(String(a.label), names)}”`;
    case 'set_priority':
      return `set the ticket's priority to ${String(a.priority)}`;
    case 'create_ticket':
      return `create a ticket “${String(a.subject)}”`;
    default: {
      const { type, ...rest } = a;
      const detail = Object.entries(rest).map(([k, v]) => `${k} ${typeof v === 'string' ? `“${v}”` : JSON.stringify(v)}`);
      return [type.replace(/_/g, ' '), ...detail].join(' ');
    }
  }
}
