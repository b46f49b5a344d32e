import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { AutomationRule, NewAutomationRule, RuleAction, RuleCondition } from '../api/types';
import { FieldError, invalid } from '../components/FieldError';
import { CONTENT_TYPES } from '../../../src/domain/messages';
import { PRIORITIES } from '../tickets';
import { errorAt, formErrors, NO_ERRORS, type FormErrors } from './field-errors';
import { ACTION_LABELS, FIELD_CHOICES, FIELD_LABELS, fieldChoiceOf, labelOf, OPERATOR_LABELS, OPERATORS_OF, type FieldChoice, type Names, type Operator } from './rule-words';

/** A condition as typed: `lines` for lists (one per line), `text` for one value, `picks` for choices. */
interface ConditionDraft {
  field: FieldChoice;
  attribute: string;
  operator: Operator;
  lines: string;
  text: string;
  picks: string[];
}

/** An action as typed; `original` keeps an action of a type this editor does not know, unchanged. */
interface ActionDraft {
  type: string;
  /** `agent:<id>` or `team:<id>`: whom an `assign` gives the conversation to. */
  assignee: string;
  text: string;
  templateName: string;
  templateLanguage: string;
  event: string;
  /** `add_label`: the label's id (or, for a label that is gone, what the rule named). */
  label: string;
  priority: Priority;
  subject: string;
  original?: RuleAction;
}

type Priority = (typeof PRIORITIES)[number];

type ValueKind = 'lines' | 'text' | 'pick-one' | 'pick-many';

function valueKind(field: FieldChoice, op: Operator): ValueKind {
  if (field === 'businessHours') return 'pick-one';
  if (field === 'type' || field === 'channelId' || (field === 'label' && op !== 'matches')) return op === 'in' ? 'pick-many' : 'pick-one';
  return op === 'contains' || op === 'in' ? 'lines' : 'text';
}

const KNOWN_ACTIONS = ['request_handover', 'assign', 'add_label', 'set_priority', 'create_ticket', 'auto_reply', 'webhook'];

function conditionDraft(names: Names, c?: RuleAutomationCondition): ConditionDraft {
  if (c === undefined) return { field: 'text', attribute: '', operator: 'contains', lines: '', text: '', picks: [] };
  const list = Array.isArray(c.value) ? c.value : [c.value];
  const field = fieldChoiceOf(c.field);
  // A label named by its name (over the API) is picked by its id here.
  const picks = field === 'label' && c.operator !== 'matches' ? list.map((ref) => labelOf(ref, names)?.id ?? ref) : list;
  return { field, attribute: field === 'attribute' ? c.field.slice('attribute.'.length) : '', operator: c.operator, lines: list.join('\n'), text: list[0] ?? '', picks };
}
type RuleAutomationCondition = AutomationRule['conditions'][number];

function conditionOf(d: ConditionDraft): RuleCondition {
  const field = d.field === 'attribute' ? `attribute.${d.attribute.trim()}` : d.field;
  const kind = valueKind(d.field, d.operator);
  let value: string | string[];
  if (kind === 'lines') {
    const lines = d.lines.split('\n').map((l) => l.trim()).filter((l) => l !== '');
    value = d.operator === 'contains' && lines.length === 1 ? lines[0]! : lines;
  } else if (kind === 'text') value = d.text;
  else if (kind === 'pick-one') value = d.picks[0] ?? '';
  else value = d.picks;
  return { field, operator: d.operator, value };
}

function actionDraft(names: Names, a?: AutomationRule['actions'][number]): ActionDraft {
  const d: ActionDraft = { type: 'request_handover', assignee: '', text: '', templateName: '', templateLanguage: 'en_US', event: '', label: '', priority: 'high', subject: '' };
  if (a === undefined) return d;
  const t = a.template as { name?: string; language?: string } | undefined;
  return {
    type: a.type,
    assignee: typeof a.agentId === 'string' ? `agent:${a.agentId}` : typeof a.teamId === 'string' ? `team:${a.teamId}` : '',
    text: typeof a.text === 'string' ? a.text : '',
    templateName: t?.name ?? '',
    templateLanguage: t?.language ?? 'en_US',
    event: typeof a.event === 'string' ? a.event : '',
    label: typeof a.label === 'string' ? (labelOf(a.label, names)?.id ?? a.label) : '',
    priority: (PRIORITIES as readonly string[]).includes(a.priority as string) ? (a.priority as Priority) : 'high',
    subject: typeof a.subject === 'string' ? a.subject : '',
    ...(KNOWN_ACTIONS.includes(a.type) ? {} : { original: a as RuleAction }),
  };
}

function actionOf(d: ActionDraft): RuleAction {
  if (d.original !== undefined && d.original.type === d.type) return d.original;
  switch (d.type) {
    case 'assign':
      return d.assignee.startsWith('team:') ? { type: 'assign', teamId: d.assignee.slice(5) } : { type: 'assign', agentId: d.assignee.slice(6) };
    case 'auto_reply':
      return {
        type: 'auto_reply',
        ...(d.text.trim() !== '' ? { text: d.text } : {}),
        ...(d.templateName.trim() !== '' ? { template: { name: d.templateName.trim(), language: d.templateLanguage.trim() } } : {}),
      };
    case 'webhook':
      return { type: 'webhook', event: d.event.trim() };
    case 'add_label':
      return { type: 'add_label', label: d.label };
    case 'set_priority':
      return { type: 'set_priority', priority: d.priority };
    case 'create_ticket':
      return { type: 'create_ticket', subject: d.subject };
    default:
      return { type: 'request_handover' };
  }
}

/**
 * A rule's form: its name, its conditions (all must hold) and actions, in
 * order, whether it stops the rules after it and whether it is on. New rules
 * go last (`POST /v1/automation-rules`); a change is `PATCH
 * /v1/automation-rules/{id}`. The API's refusals stand next to the
 * condition or action they name.
 */
export function RuleEditor({ rule, names, onSaved, onCancel }: { rule: AutomationRule | null; names: Names; onSaved: () => void; onCancel: () => void }) {
  const [name, setName] = useState(rule?.name ?? '');
  const [enabled, setEnabled] = useState(rule?.enabled ?? true);
  const [stop, setStop] = useState(rule?.stop ?? false);
  const [conditions, setConditions] = useState<ConditionDraft[]>(() => (rule?.conditions ?? []).map((c) => conditionDraft(names, c)));
  const [actions, setActions] = useState<ActionDraft[]>(() => (rule === null ? [actionDraft(names)] : rule.actions.map((a) => actionDraft(names, a))));
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const uid = `rule-${rule?.id ?? 'new'}`;

  const save = async (e: Event) => {
    e.preventDefault();
    const body: NewAutomationRule = { name, enabled, stop, conditions: conditions.map(conditionOf), actions: actions.map(actionOf) };
    setBusy(true);
    try {
      if (rule === null) await ok(api.POST('/v1/automation-rules', { body }));
      else await ok(api.PATCH('/v1/automation-rules/{id}', { params: { path: { id: rule.id } }, body }));
      setErrors(NO_ERRORS);
      onSaved();
    } catch (x) {
      setErrors(formErrors(x));
    } finally {
      setBusy(false);
    }
  };

  const nameErr = errorAt(errors, 'name');
  const editCondition = (i: number, patch: Partial<ConditionDraft>) => setConditions(conditions.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  const editAction = (i: number, patch: Partial<ActionDraft>) => setActions(actions.map((a, j) => (j === i ? { ...a, ...patch } : a)));
  return (
    <form class="card stack rule-editor" noValidate onSubmit={(e) => void save(e)} aria-label={rule === null ? 'New rule' : `Edit rule ${rule.name}`} data-testid="rule-editor">
      <label>
        Rule name
        <input value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} {...invalid(`${uid}-name-err`, nameErr)} />
      </label>
      <FieldError id={`${uid}-name-err`} message={nameErr} />

      <fieldset>
        <legend>When a customer's message… (all must hold; none: every message)</legend>
        {conditions.map((c, i) => (
          <ConditionRow key={i} uid={`${uid}-c${i}`} index={i} draft={c} names={names} error={errorAt(errors, `conditions.${i}`, true)} onChange={(p) => editCondition(i, p)} onRemove={() => setConditions(conditions.filter((_, j) => j !== i))} />
        ))}
        <FieldError id={`${uid}-conditions-err`} message={errorAt(errors, 'conditions')} />
        <button type="button" onClick={() => setConditions([...conditions, conditionDraft(names)])}>Add condition</button>
      </fieldset>

      <fieldset>
        <legend>…then, in this order</legend>
        {actions.map((a, i) => (
          <ActionRow key={i} uid={`${uid}-a${i}`} index={i} draft={a} names={names} error={errorAt(errors, `actions.${i}`, true)} onChange={(p) => editAction(i, p)} onRemove={() => setActions(actions.filter((_, j) => j !== i))} />
        ))}
        <FieldError id={`${uid}-actions-err`} message={errorAt(errors, 'actions')} />
        <button type="button" onClick={() => setActions([...actions, actionDraft(names)])}>Add action</button>
      </fieldset>

      <label class="check">
        <input type="checkbox" checked={stop} onChange={(e) => setStop(e.currentTarget.checked)} /> Stop here: when this rule fires, the rules after it are skipped
      </label>
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled
      </label>
      <div class="row wrap">
        <button type="submit" class="primary" disabled={busy}>{rule === null ? 'Create rule' : 'Save rule'}</button>
        <button type="button" disabled={busy} onClick={onCancel}>Cancel</button>
      </div>
      {errors.message && <p class="error" role="alert">{errors.message}</p>}
    </form>
  );
}

function ConditionRow({ uid, index, draft, names, error, onChange, onRemove }: { uid: string; index: number; draft: ConditionDraft; names: Names; error: string | undefined; onChange: (p: Partial<ConditionDraft>) => void; onRemove: () => void }) {
  const n = index + 1;
  const kind = valueKind(draft.field, draft.operator);
  const errId = `${uid}-err`;
  const choices: { value: string; label: string }[] =
    draft.field === 'businessHours'
      ? [{ value: 'closed', label: 'closed (outside the hours)' }, { value: 'open', label: 'open' }]
      : draft.field === 'type'
        ? CONTENT_TYPES.map((t) => ({ value: t, label: t }))
        : draft.field === 'label'
          ? labelChoices(names, draft.picks)
          : [...names.channels.values()].map((c) => ({ value: c.id, label: c.name }));
  const setField = (field: FieldChoice) => onChange({ field, operator: OPERATORS_OF[field][0]!, picks: field === 'businessHours' ? ['closed'] : [] });
  return (
    <div class="clause" data-testid="condition">
      <label>
        Condition {n} field
        <select value={draft.field} onChange={(e) => setField(e.currentTarget.value as FieldChoice)}>
          {FIELD_CHOICES.map((f) => (
            <option key={f} value={f}>{FIELD_LABELS[f]}</option>
          ))}
        </select>
      </label>
      {draft.field === 'attribute' && (
        <label>
          Condition {n} attribute name
          <input value={draft.attribute} placeholder="plan" onInput={(e) => onChange({ attribute: e.currentTarget.value })} {...invalid(errId, error)} />
        </label>
      )}
      <label>
        Condition {n} operator
        <select value={draft.operator} onChange={(e) => onChange({ operator: e.currentTarget.value as Operator })}>
          {OPERATORS_OF[draft.field].map((o) => (
            <option key={o} value={o}>{OPERATOR_LABELS[o]}</option>
          ))}
        </select>
      </label>
      {kind === 'lines' && (
        <label class="grow">
          Condition {n} values (one per line)
          <textarea rows={2} value={draft.lines} onInput={(e) => onChange({ lines: e.currentTarget.value })} {...invalid(errId, error)} />
        </label>
      )}
      {kind === 'text' && (
        <label class="grow">
          Condition {n} {draft.operator === 'matches' ? 'pattern (a regular expression, case-insensitive)' : 'value'}
          <input value={draft.text} onInput={(e) => onChange({ text: e.currentTarget.value })} {...invalid(errId, error)} />
        </label>
      )}
      {kind === 'pick-one' && (
        <label>
          Condition {n} value
          <select value={draft.picks[0] ?? ''} onChange={(e) => onChange({ picks: [e.currentTarget.value] })} {...invalid(errId, error)}>
            {draft.picks.length === 0 && <option value="">Choose…</option>}
            {choices.map((c) => (
              <option key={c.value} value={c.value}>{c.label}</option>
            ))}
          </select>
        </label>
      )}
      {kind === 'pick-many' && (
        <fieldset class="row wrap" aria-label={`Condition ${n} values`} {...invalid(errId, error)}>
          {choices.map((c) => (
            <label key={c.value} class="check">
              <input type="checkbox" checked={draft.picks.includes(c.value)} onChange={(e) => onChange({ picks: e.currentTarget.checked ? [...draft.picks, c.value] : draft.picks.filter((p) => p !== c.value) })} /> {c.label}
            </label>
          ))}
        </fieldset>
      )}
      <button type="button" class="link" aria-label={`Remove condition ${n}`} onClick={onRemove}>×</button>
      <FieldError id={errId} message={error} />
    </div>
  );
}

function ActionRow({ uid, index, draft, names, error, onChange, onRemove }: { uid: string; index: number; draft: ActionDraft; names: Names; error: string | undefined; onChange: (p: Partial<ActionDraft>) => void; onRemove: () => void }) {
  const n = index + 1;
  const errId = `${uid}-err`;
  const types = [...KNOWN_ACTIONS, ...(KNOWN_ACTIONS.includes(draft.type) ? [] : [draft.type])];
  const agents = [...names.members.values()].filter((m) => m.active);
  return (
    <div class="clause" data-testid="action">
      <label>
        Action {n}
        <select aria-label={`Action ${n}`} value={draft.type} onChange={(e) => onChange({ type: e.currentTarget.value })}>
          {types.map((t) => (
            <option key={t} value={t}>{ACTION_LABELS[t] ?? t}</option>
          ))}
        </select>
      </label>
      {draft.type === 'assign' && (
        <label>
          Action {n} assignee
          <select value={draft.assignee} onChange={(e) => onChange({ assignee: e.currentTarget.value })} {...invalid(errId, error)}>
            <option value="">Choose…</option>
            <optgroup label="An agent, at once">
              {agents.map((m) => (
                <option key={m.id} value={`agent:${m.id}`}>{m.name} ({m.role})</option>
              ))}
            </optgroup>
            {names.teams.size > 0 && (
              <optgroup label="A team's queue">
                {[...names.teams.values()].map((t) => (
                  <option key={t.id} value={`team:${t.id}`}>Team {t.name}</option>
                ))}
              </optgroup>
            )}
          </select>
        </label>
      )}
      {draft.type === 'auto_reply' && (
        <>
          <label class="grow">
            Action {n} reply text (inside the 24-hour window)
            <textarea rows={2} maxLength={4096} value={draft.text} onInput={(e) => onChange({ text: e.currentTarget.value })} {...invalid(errId, error)} />
          </label>
          <label>
            Action {n} template when the window is closed (optional; one without variables)
            <input value={draft.templateName} placeholder="hello_world" onInput={(e) => onChange({ templateName: e.currentTarget.value })} />
          </label>
          <label>
            Action {n} template language
            <input class="short" value={draft.templateLanguage} onInput={(e) => onChange({ templateLanguage: e.currentTarget.value })} />
          </label>
        </>
      )}
      {draft.type === 'add_label' && (
        <label>
          Action {n} label
          <select value={draft.label} onChange={(e) => onChange({ label: e.currentTarget.value })} {...invalid(errId, error)}>
            <option value="">Choose…</option>
            {labelChoices(names, [draft.label]).map((c) => (
              <option key={c.value} value={c.value}>{c.label}</option>
            ))}
          </select>
        </label>
      )}
      {draft.type === 'add_label' && names.labels.size === 0 && <p class="small muted">No label yet: an admin makes them over the API (POST /v1/labels).</p>}
      {draft.type === 'set_priority' && (
        <label>
          Action {n} priority
          <select value={draft.priority} onChange={(e) => onChange({ priority: e.currentTarget.value as Priority })} {...invalid(errId, error)}>
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>{p}</option>
            ))}
          </select>
        </label>
      )}
      {draft.type === 'create_ticket' && (
        <label class="grow">
          Action {n} ticket subject
          <input value={draft.subject} maxLength={200} placeholder="Refund request" onInput={(e) => onChange({ subject: e.currentTarget.value })} {...invalid(errId, error)} />
        </label>
      )}
      {draft.type === 'webhook' && (
        <label>
          Action {n} event name
          <input value={draft.event} placeholder="vip_message" onInput={(e) => onChange({ event: e.currentTarget.value })} {...invalid(errId, error)} />
        </label>
      )}
      {draft.original !== undefined && draft.original.type === draft.type && <code class="small">{JSON.stringify(draft.original)}</code>}
      <button type="button" class="link" aria-label={`Remove action ${n}`} onClick={onRemove}>×</button>
      <FieldError id={errId} message={error} />
    </div>
  );
}

/** The organization's labels by name, and any the rule names that are no longer among them (kept, shown as they are). */
function labelChoices(names: Names, picked: readonly string[]): { value: string; label: string }[] {
  const known = [...names.labels.values()].sort((a, b) => a.name.localeCompare(b.name)).map((l) => ({ value: l.id, label: l.name }));
  const gone = picked.filter((p) => p !== '' && !names.labels.has(p)).map((p) => ({ value: p, label: `${p} (not a label now)` }));
  return [...known, ...gone];
}
