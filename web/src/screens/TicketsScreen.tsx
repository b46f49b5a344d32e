import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { describeError } from '../api/errors';

import type { SessionUser } from '../api/types';
import { directory, loadDirectory, userName } from '../directory';
import { navigate, usePath } from '../router';
import { useObservable } from '../state';
import { TicketDetail } from '../components/TicketDetail';
import { TicketForm } from '../components/TicketForm';
import { TicketOrigin } from '../components/TicketOrigin';
import { PRIORITIES, STATUSES, type TicketShape } from '../tickets';
import { contactNames, loadContactNames, phoneOf } from '../contacts';


const PAGE_SIZE = 20;
/** The API's assignee filter value for tickets assigned to nobody. */
const UNASSIGNED = 'none';

/** A page of `GET /v1/tickets`: `totalRelation: 'gte'` when a text search stopped counting. */
type TicketPage = { tickets: TicketShape[]; total: number; totalRelation: 'eq' | 'gte'; totalPages: number };

/** Tickets the user can see, newest first, with the filters the API offers; create and edit. */
export function TicketsScreen({ user, ticketId }: { user: SessionUser; ticketId: string | null }) {
  const { query } = usePath();
  const people = useObservable(directory);
  const names = useObservable(contactNames);
  const status = query.get('status') ?? '';
  const contact = query.get('contact') ?? '';
  const priority = query.get('priority') ?? '';
  const assignee = query.get('assignee') ?? '';
  const page = Math.max(1, Number(query.get('page') ?? '1') || 1);
  const [data, setData] = useState<TicketPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [reload, setReload] = useState(0);

  useEffect(() => void loadDirectory(), []);
  useEffect(() => {
    if (ticketId) return;
    setError(null);
    const q: { page: number; limit: number; status?: TicketShape['status']; priority?: TicketShape['priority']; assigneeId?: string; audienceExternalId?: string } = { page, limit: PAGE_SIZE };
    if (status) q.status = status as TicketShape['status'];
    if (priority) q.priority = priority as TicketShape['priority'];
    if (assignee) q.assigneeId = assignee;
    if (contact) q.audienceExternalId = contact;
    ok(api.GET('/v1/tickets', { params: { query: q } }))
      .then((r) => {
        const d = r as unknown as TicketPage;
        loadContactNames(d.tickets.flatMap((t) => (t.audienceId ? [t.audienceId] : [])));
        setData(d);
      })
      .catch((e: unknown) => setError(describeError(e)));
  }, [status, priority, assignee, contact, page, ticketId, reload]);

  const setFilter = (k: string, v: string) => {
    const next = new URLSearchParams(query);
    if (v) next.set(k, v);
    else next.delete(k);
    if (k !== 'page') next.delete('page');
    const s = next.toString();
    navigate(`/tickets${s ? `?${s}` : ''}`);
  };

  if (ticketId) return <TicketDetail ticketId={ticketId} user={user} />;

  return (
    <section class="panel tickets" aria-labelledby="tickets-title">
      <header class="row wrap spread">
        <h1 id="tickets-title">Tickets</h1>
        <button type="button" class="primary" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          New ticket
        </button>
      </header>
      {creating && (
        <TicketForm
          user={user}
          onCreated={() => {
            setCreating(false);
            setReload((n) => n + 1);
          }}
        />
      )}
      <form class="filters row wrap" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select name="status" value={status} onChange={(e) => setFilter('status', e.currentTarget.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>{s.replace('_', ' ')}</option>
            ))}
          </select>
        </label>
        <label>
          Priority
          <select name="priority" value={priority} onChange={(e) => setFilter('priority', e.currentTarget.value)}>
            <option value="">any</option>
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Assignee
          <select name="assignee" value={assignee} onChange={(e) => setFilter('assignee', e.currentTarget.value)}>
            <option value="">anyone</option>
            <option value={UNASSIGNED}>unassigned</option>
            <option value={user.id}>me</option>
            {/* An agent sees only their own and unassigned tickets, so only admins pick a teammate. */}
            {[...people.values()]
              .filter((p) => user.role === 'admin' && p.id !== user.id)
              .sort((a, b) => a.name.localeCompare(b.name))
              .map((p) => (
                <option key={p.id} value={p.id}>{p.name}</option>
              ))}
            {assignee && assignee !== UNASSIGNED && assignee !== user.id && !people.has(assignee) && <option value={assignee}>another agent</option>}
          </select>
        </label>
        <label>
          Contact
          <input name="contact" placeholder="phone:phoneNumberId" value={contact} onChange={(e) => setFilter('contact', e.currentTarget.value.trim())} />
        </label>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      {data === null ? (
        <p class="muted">Loading…</p>
      ) : data.tickets.length === 0 ? (
        <p class="empty">No ticket matches.</p>
      ) : (
        <div class="table-wrap">
          <table data-testid="tickets">
            <thead>
              <tr>
                <th scope="col">Ticket</th>
                <th scope="col">Status</th>
                <th scope="col">Priority</th>
                <th scope="col">Contact</th>
                <th scope="col">Assignee</th>
                <th scope="col">Made by</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.tickets.map((t) => (
                <tr key={t.ticketId} data-ticket={t.ticketId}>
                  <td>
                    <a href={`/tickets/${encodeURIComponent(t.ticketId)}`} data-route>{t.title}</a>
                    <div class="muted small">{t.ticketId}</div>
                  </td>
                  <td><span class={`pill ${t.status}`}>{t.status.replace('_', ' ')}</span></td>
                  <td><span class={`pill ${t.priority}`}>{t.priority}</span></td>
                  <td data-testid="ticket-contact">
                    {t.audienceId ? (
                      <a href={`/contacts/${encodeURIComponent(t.audienceId)}`} data-route>
                        {names.get(t.audienceId) ?? (typeof t.audienceExternalId === 'string' ? phoneOf(t.audienceExternalId) : 'contact')}
                      </a>
                    ) : (
                      <span class="muted">none</span>
                    )}
                  </td>
                  <td>{t.assigneeId ? userName(t.assigneeId, user) : 'unassigned'}</td>
                  <td><TicketOrigin ticket={t} people={people} /></td>
                  <td><time dateTime={t.createdAt}>{new Date(t.createdAt).toLocaleString()}</time></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && data.totalPages > 1 && (
        <nav class="pager row" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => setFilter('page', String(page - 1))}>Previous</button>
          <span>
            Page {page} of {data.totalPages}
            {data.totalRelation === 'gte' ? '+' : ''} ({data.total.toLocaleString()}
            {data.totalRelation === 'gte' ? ' or more' : ''} tickets)
          </span>
          <button type="button" disabled={page >= data.totalPages} onClick={() => setFilter('page', String(page + 1))}>Next</button>
        </nav>
      )}
    </section>
  );
}
