import { useEffect, useState } from 'preact/hooks';
import { api, ok, request } from '../api/client';
import { ApiError, describeError } from '../api/errors';
import type { SessionUser } from '../api/types';
import { directory, userName } from '../directory';
import { PRIORITIES, STATUSES, type TicketShape } from '../tickets';
import { useObservable } from '../state';
import { useInbox } from '../inbox/context';
import { TicketActivity } from './TicketActivity';
import { TicketOrigin } from './TicketOrigin';

/** One ticket: edit its subject, status, priority, assignee and description; its contact and conversation; its activity and comments. */
export function TicketDetail({ ticketId, user }: { ticketId: string; user: SessionUser }) {
  const people = useObservable(directory);
  const inbox = useInbox();
  /** Ticket events heard while the page is open: a comment changes the activity, not the ticket's `updatedAt`. */
  const [heard, setHeard] = useState(0);
  const [t, setT] = useState<TicketShape | null>(null);
  const [draft, setDraft] = useState<Partial<TicketShape>>({});
  const [error, setError] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const [saved, setSaved] = useState(false);
  const [contact, setContact] = useState<{ audienceExternalId: string; name: string | null } | null>(null);

  useEffect(() => {
    const load = () =>
      ok(api.GET('/v1/tickets/{ticketId}', { params: { path: { ticketId } } }))
        .then((r) => setT(r as unknown as TicketShape))
        .catch((e: unknown) => (e instanceof ApiError && e.status === 404 ? setMissing(true) : setError(describeError(e))));
    void load();
    // A teammate's change or comment shows at once: fields the agent is editing keep the draft (the form shows `{...t, ...draft}`).
    return inbox.watchTicket(ticketId, () => {
      void load();
      setHeard((n) => n + 1);
    });
  }, [ticketId, inbox]);

  useEffect(() => {
    if (!t?.audienceId) return;
    // Until the contact answers (or without the scope to read it), its phone number stands in for its name.
    if (typeof t.audienceExternalId === 'string') setContact({ audienceExternalId: t.audienceExternalId, name: null });
    request<{ contact: { audienceExternalId: string; name: string | null } }>('GET', `/v1/contacts/${encodeURIComponent(t.audienceId)}`)
      .then((r) => setContact(r.contact))
      .catch(() => undefined);
  }, [t?.audienceId, t?.audienceExternalId]);

  if (missing) return <section class="panel" role="alert"><h1>No such ticket</h1><p>It does not exist or is not visible to you.</p><a href="/tickets" data-route>All tickets</a></section>;
  if (!t) return <section class="panel">{error ? <p class="error" role="alert">{error}</p> : <p class="muted">Loading…</p>}</section>;

  const v = { ...t, ...draft };
  const changed = Object.keys(draft).filter((k) => (draft as Record<string, unknown>)[k] !== (t as Record<string, unknown>)[k]);
  const save = async (e: Event) => {
    e.preventDefault();
    if (changed.length === 0) return;
    setError(null);
    setSaved(false);
    // The API takes the ticket's `title` as `subject`.
    const body = Object.fromEntries(changed.map((k) => [k === 'title' ? 'subject' : k, (draft as Record<string, unknown>)[k]]));
    try {
      const next = await ok(api.PATCH('/v1/tickets/{ticketId}', { params: { path: { ticketId } }, body }));
      setT(next as unknown as TicketShape);
      setDraft({});
      setSaved(true);
    } catch (err) {
      setError(describeError(err));
    }
  };
  const assignable = user.role === 'admin' ? [...people.values()].filter((p) => p.active !== false) : [{ id: user.id, name: `${user.name} (you)` }];

  return (
    <section class="panel ticket" aria-labelledby="ticket-title">
      <a href="/tickets" data-route class="back">← Tickets</a>
      <h1 id="ticket-title">{t.title}</h1>
      <p class="muted">
        {t.ticketId} · created {new Date(t.createdAt).toLocaleString()} · made by <TicketOrigin ticket={t} people={people} />
      </p>
      {t.audienceId && (
        <p class="ticket-contact">
          Contact:{' '}
          <a href={`/contacts/${encodeURIComponent(t.audienceId)}`} data-route data-contact={t.audienceId}>
            {contact ? contactLabel(contact) : 'the contact'}
          </a>
          {contact && (
            <>
              {' · '}
              <a href={`/inbox/${encodeURIComponent(contact.audienceExternalId)}`} data-route>
                open the conversation
              </a>
            </>
          )}
        </p>
      )}
      <form onSubmit={save} class="ticket-edit">
        <label>
          Subject
          <input name="subject" maxLength={500} required value={v.title} onInput={(e) => setDraft({ ...draft, title: e.currentTarget.value })} />
        </label>
        <div class="row wrap">
          <label>
            Status
            <select name="status" value={v.status} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value as TicketShape['status'] })}>
              {STATUSES.map((s) => (
                <option key={s} value={s}>{s.replace('_', ' ')}</option>
              ))}
            </select>
          </label>
          <label>
            Priority
            <select name="priority" value={v.priority} onChange={(e) => setDraft({ ...draft, priority: e.currentTarget.value as TicketShape['priority'] })}>
              {PRIORITIES.map((p) => (
                <option key={p} value={p}>{p}</option>
              ))}
            </select>
          </label>
          <label>
            Assignee
            <select name="assignee" value={v.assigneeId ?? ''} onChange={(e) => setDraft({ ...draft, assigneeId: e.currentTarget.value || null })}>
              <option value="">unassigned</option>
              {v.assigneeId && !assignable.some((p) => p.id === v.assigneeId) && <option value={v.assigneeId}>{userName(v.assigneeId, user)}</option>}
              {assignable.map((p) => (
                <option key={p.id} value={p.id}>{p.name}</option>
              ))}
            </select>
          </label>
        </div>
        <label>
          Description
          <textarea name="description" rows={5} value={v.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
        </label>
        {error && <p class="error" role="alert">{error}</p>}
        {saved && <p class="ok" role="status">Saved.</p>}
        <button type="submit" class="primary" disabled={changed.length === 0}>Save changes</button>
      </form>
      <TicketActivity ticketId={t.ticketId} me={user} version={`${t.updatedAt}#${heard}`} />
    </section>
  );
}

/** A contact's name, else its phone number (the part of its id before the channel's number). */
function contactLabel(c: { audienceExternalId: string; name: string | null }): string {
  return c.name ?? `+${c.audienceExternalId.split(':')[0]}`;
}
