import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { describeError } from '../api/errors';
import type { SessionUser } from '../api/types';
import { directory } from '../directory';
import { PRIORITIES } from '../tickets';
import { useObservable } from '../state';

/** Creates a ticket; an agent may leave it unassigned or take it, an admin may assign anyone. `prefill` starts the subject and description. */
export function TicketForm({ user, onCreated, contact, prefill }: { user: SessionUser; onCreated: (ticketId: string) => void; contact?: string; prefill?: { subject: string; description: string } }) {
  const people = useObservable(directory);
  const [subject, setSubject] = useState(prefill?.subject ?? '');
  const [description, setDescription] = useState(prefill?.description ?? '');
  const [priority, setPriority] = useState<(typeof PRIORITIES)[number]>('medium');
  const [assigneeId, setAssigneeId] = useState('');
  const [aeid, setAeid] = useState(contact ?? '');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const assignable = user.role === 'admin' && people.size > 0 ? [...people.values()].filter((p) => p.active !== false) : [{ id: user.id, name: `${user.name} (you)` }];

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const t = await ok(
        api.POST('/v1/tickets', {
          body: { subject: subject.trim(), description: description.trim(), priority, ...(assigneeId ? { assigneeId } : {}), ...(aeid.trim() ? { audienceExternalId: aeid.trim() } : {}) },
        }),
      );
      onCreated(t.ticketId);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="ticket-form card" onSubmit={submit} aria-label="New ticket">
      <label>
        Subject
        <input name="subject" required maxLength={500} value={subject} onInput={(e) => setSubject(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <textarea name="description" required rows={prefill ? 8 : 3} maxLength={20000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <div class="row wrap">
        <label>
          Priority
          <select name="priority" value={priority} onChange={(e) => setPriority(e.currentTarget.value as typeof priority)}>
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Assignee
          <select name="assignee" value={assigneeId} onChange={(e) => setAssigneeId(e.currentTarget.value)}>
            <option value="">unassigned</option>
            {assignable.map((p) => (
              <option key={p.id} value={p.id}>{p.name}</option>
            ))}
          </select>
        </label>
        <label>
          Contact (optional)
          <input name="contact" placeholder="phone:phoneNumberId" value={aeid} onInput={(e) => setAeid(e.currentTarget.value)} />
        </label>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      <button type="submit" class="primary" disabled={busy}>Create ticket</button>
    </form>
  );
}
