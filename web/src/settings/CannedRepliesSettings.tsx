import { useState } from 'preact/hooks';
import { request } from '../api/client';
import type { CannedReply } from '../api/types';
import { CANNED_PLACEHOLDERS, CANNED_TEXT_MAX } from '../../../src/domain/canned-replies';
import { useAction, useLoad } from './useLoad';

const PLACEHOLDER_NAMES = Object.keys(CANNED_PLACEHOLDERS).map((p) => `{{${p}}}`);

/** One reply, shown as a row; editing turns it into a form. */
function Row({ reply, busy, onSave, onDelete }: { reply: CannedReply; busy: boolean; onSave: (body: { shortCode: string; text: string }) => Promise<boolean>; onDelete: () => void }) {
  const [edit, setEdit] = useState<{ shortCode: string; text: string } | null>(null);
  if (edit === null) {
    return (
      <tr data-reply={reply.shortCode}>
        <td><code>/{reply.shortCode}</code></td>
        <td class="canned-text">{reply.text}</td>
        <td class="row">
          <button type="button" disabled={busy} onClick={() => setEdit({ shortCode: reply.shortCode, text: reply.text })} aria-label={`Edit /${reply.shortCode}`}>Edit</button>
          <button type="button" disabled={busy} onClick={onDelete} aria-label={`Delete /${reply.shortCode}`}>Delete</button>
        </td>
      </tr>
    );
  }
  return (
    <tr data-reply={reply.shortCode}>
      <td>
        <input aria-label="Short code" required pattern="[A-Za-z0-9_\-]{1,32}" maxLength={32} value={edit.shortCode} onInput={(e) => setEdit({ ...edit, shortCode: e.currentTarget.value })} />
      </td>
      <td>
        <textarea aria-label="Text" required rows={3} maxLength={CANNED_TEXT_MAX} value={edit.text} onInput={(e) => setEdit({ ...edit, text: e.currentTarget.value })} />
      </td>
      <td class="row">
        <button type="button" class="primary" disabled={busy} onClick={() => void onSave(edit).then((ok) => ok && setEdit(null))}>Save</button>
        <button type="button" disabled={busy} onClick={() => setEdit(null)}>Cancel</button>
      </td>
    </tr>
  );
}

/** The organization's canned replies: add, change and delete (agents insert them in the composer with `/`). */
export function CannedRepliesSettings() {
  const replies = useLoad(() => request<{ cannedReplies: CannedReply[] }>('GET', '/v1/canned-replies').then((r) => r.cannedReplies));
  const action = useAction();
  const [form, setForm] = useState({ shortCode: '', text: '' });

  const create = async (e: Event) => {
    e.preventDefault();
    if (await action.run(() => request('POST', '/v1/canned-replies', { shortCode: form.shortCode.trim(), text: form.text }))) {
      setForm({ shortCode: '', text: '' });
      replies.reload();
    }
  };
  const save = async (id: string, body: { shortCode: string; text: string }) => {
    const ok = await action.run(() => request('PATCH', `/v1/canned-replies/${encodeURIComponent(id)}`, { shortCode: body.shortCode.trim(), text: body.text }));
    if (ok) replies.reload();
    return ok;
  };
  const remove = (r: CannedReply) => {
    if (!confirm(`Delete /${r.shortCode}?`)) return;
    void action.run(() => request('DELETE', `/v1/canned-replies/${encodeURIComponent(r.id)}`)).then((ok) => ok && replies.reload());
  };

  return (
    <section class="panel" aria-labelledby="canned-title">
      <h1 id="canned-title">Canned replies</h1>
      <p class="muted">
        Agents type <code>/</code> and the short code in the composer to insert a reply. Placeholders filled at insert: {PLACEHOLDER_NAMES.map((p, i) => (
          <span key={p}>{i > 0 ? ', ' : ''}<code>{p}</code></span>
        ))}.
      </p>
      <form class="card" onSubmit={create} aria-label="New canned reply">
        <div class="row wrap">
          <label>
            Short code
            <input name="shortCode" required pattern="[A-Za-z0-9_\-]{1,32}" maxLength={32} placeholder="thanks" title="1 to 32 letters, digits, _ or -" value={form.shortCode} onInput={(e) => setForm({ ...form, shortCode: e.currentTarget.value })} />
          </label>
          <label class="grow">
            Text
            <textarea name="text" required rows={3} maxLength={CANNED_TEXT_MAX} value={form.text} onInput={(e) => setForm({ ...form, text: e.currentTarget.value })} />
          </label>
        </div>
        <button type="submit" class="primary" disabled={action.busy}>Add reply</button>
      </form>
      {action.error && <p class="error" role="alert">{action.error}</p>}
      {replies.error && <p class="error" role="alert">{replies.error}</p>}
      {replies.data && (replies.data.length === 0 ? (
        <p class="muted">No canned replies yet.</p>
      ) : (
        <div class="table-wrap">
          <table data-testid="canned-replies">
            <thead>
              <tr><th scope="col">Code</th><th scope="col">Text</th><th scope="col"><span class="sr">Actions</span></th></tr>
            </thead>
            <tbody>
              {replies.data.map((r) => (
                <Row key={r.id} reply={r} busy={action.busy} onSave={(body) => save(r.id, body)} onDelete={() => remove(r)} />
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </section>
  );
}
