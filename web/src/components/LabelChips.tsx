import type { Label } from '../api/types';

/**
 * The labels on a conversation or a contact, each removable, and a picker of
 * the organization's other labels to add one.
 */
export function LabelChips({ on, all, busy, add, remove }: { on: Label[]; all: Label[]; busy: boolean; add: (labelId: string) => void; remove: (label: Label) => void }) {
  const addable = all.filter((l) => !on.some((o) => o.id === l.id));
  return (
    <div class="labels" data-testid="labels">
      <ul aria-label="Labels">
        {on.map((l) => (
          <li key={l.id} class="chip" style={{ '--chip': l.color }} data-label={l.name}>
            {l.name}
            <button type="button" aria-label={`Remove label ${l.name}`} disabled={busy} onClick={() => remove(l)}>
              ×
            </button>
          </li>
        ))}
      </ul>
      {addable.length > 0 && (
        <label>
          <span class="sr">Add a label</span>
          <select
            value=""
            disabled={busy}
            onChange={(e) => {
              const labelId = e.currentTarget.value;
              if (labelId) add(labelId);
            }}
          >
            <option value="">Add label…</option>
            {addable.map((l) => (
              <option key={l.id} value={l.id}>{l.name}</option>
            ))}
          </select>
        </label>
      )}
    </div>
  );
}
