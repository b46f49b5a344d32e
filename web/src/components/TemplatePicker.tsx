import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { describeError } from '../api/errors';
import type { TemplateComponent, TemplateInfo, TemplateParameter, TemplateSend, TemplateSlot } from '../api/types';

function bodyText(t: TemplateInfo): string {
  return t.components.find((c) => (c.type ?? '').toUpperCase() === 'BODY')?.text ?? '';
}

function slotLabel(s: TemplateSlot, i: number): string {
  const kind = s.params[i] ?? 'textual';
  const where = s.component === 'button' ? `button ${(s.index ?? 0) + 1}` : s.component;
  return `${where} ${kind === 'textual' ? `{{${i + 1}}}` : kind.replace('_', ' ')}`;
}

function parameter(kind: string, value: string): TemplateParameter {
  if (kind === 'image' || kind === 'video' || kind === 'document') return { type: kind, [kind]: { link: value } } as TemplateParameter;
  if (kind === 'payload') return { type: 'payload', payload: value };
  return { type: 'text', text: value };
}

/** Builds the `components` of a send from the values typed for each slot; optional slots left empty are left out. */
export function templateComponents(slots: TemplateSlot[], values: Record<string, string>): TemplateComponent[] {
  const out: TemplateComponent[] = [];
  slots.forEach((s, si) => {
    const params = s.params.map((kind, pi) => ({ kind, v: (values[`${si}.${pi}`] ?? '').trim() }));
    if (s.optional && params.every((p) => p.v === '')) return;
    const parameters = params.map((p) => parameter(p.kind, p.v));
    if (s.component === 'button') out.push({ type: 'button', sub_type: s.subType ?? 'quick_reply', index: s.index ?? 0, parameters });
    else out.push({ type: s.component, parameters });
  });
  return out;
}

/** Picks an approved template of the channel and asks for each of its variables. */
export function TemplatePicker({ channelId, onSend, busy }: { channelId: string; onSend: (t: TemplateSend) => void; busy: boolean }) {
  const [templates, setTemplates] = useState<TemplateInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [chosen, setChosen] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});

  useEffect(() => {
    ok(api.GET('/v1/channels/{channelId}/templates', { params: { path: { channelId } } }))
      .then((r) => setTemplates((r.templates as unknown as TemplateInfo[]).filter((t) => t.status.toUpperCase() === 'APPROVED')))
      .catch((e: unknown) => setError(describeError(e)));
  }, [channelId]);

  const template = useMemo(() => templates?.find((t) => `${t.name}|${t.language}` === chosen), [templates, chosen]);

  if (error) return <p class="error" role="alert">Templates could not be loaded: {error}</p>;
  if (templates === null) return <p class="muted">Loading templates…</p>;
  if (templates.length === 0) return <p class="muted">This channel has no approved template.</p>;

  const missing = template?.variables.some((s, si) => !s.optional && s.params.some((_, pi) => (values[`${si}.${pi}`] ?? '').trim() === '')) ?? true;
  const submit = (e: Event) => {
    e.preventDefault();
    if (!template || missing) return;
    const components = templateComponents(template.variables, values);
    onSend({ name: template.name, language: { code: template.language, policy: 'deterministic' }, ...(components.length ? { components } : {}) });
    setValues({});
  };

  return (
    <form class="template-picker" onSubmit={submit}>
      <label>
        Template
        <select value={chosen} onChange={(e) => { setChosen(e.currentTarget.value); setValues({}); }} name="template">
          <option value="">Choose an approved template…</option>
          {templates.map((t) => (
            <option key={`${t.name}|${t.language}`} value={`${t.name}|${t.language}`}>
              {t.name} ({t.language}, {t.category.toLowerCase()})
            </option>
          ))}
        </select>
      </label>
      {template && (
        <>
          <p class="template-body">{bodyText(template)}</p>
          {template.variables.map((s, si) =>
            s.params.map((_, pi) => (
              <label key={`${si}.${pi}`}>
                {slotLabel(s, pi)}
                {s.optional ? ' (optional)' : ''}
                <input value={values[`${si}.${pi}`] ?? ''} required={!s.optional} onInput={(e) => setValues({ ...values, [`${si}.${pi}`]: e.currentTarget.value })} />
              </label>
            )),
          )}
        </>
      )}
      <button type="submit" class="primary" disabled={busy || !template || missing}>
        Send template
      </button>
    </form>
  );
}
