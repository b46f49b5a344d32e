import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { describeError } from '../api/errors';
import type { SessionUser, TicketActivityEntry } from '../api/types';
import { userName } from '../directory';

const FIELD_NAMES: Record<string, string> = {
  subject: 'subject',
  description: 'description',
  status: 'status',
  priority: 'priority',
  assigneeId: 'assignee',
  resolutionDate: 'resolution date',
};

function actorName(e: TicketActivityEntry, me: SessionUser): string {
  const a = e.actor;
  if (a.kind === 'system') return 'Switchboard';
  const who = a.userId === me.id ? `${me.name} (you)` : (a.userName ?? 'a former user');
  if (a.kind === 'api_key') return `${who} via API key${a.keyName ? ` “${a.keyName}”` : ''}`;
  if (a.kind === 'mcp') return `${who} via MCP`;
  return who;
}

function value(field: string, v: string | null, me: SessionUser): string {
  if (v === null) return field === 'assigneeId' ? 'nobody' : 'none';
  if (field === 'assigneeId') return userName(v, me);
  if (field === 'resolutionDate') return new Date(v).toLocaleString();
  if (field === 'description') return v.length > 80 ? `“${v.slice(0, 80)}…”` : `“${v}”`;
  if (field === 'subject') return `“${v}”`;
  return v.replace('_', ' ');
}

function Entry({ e, me }: { e: TicketActivityEntry; me: SessionUser }) {
  const who = actorName(e, me);
  const when = <time dateTime={e.at}>{new Date(e.at).toLocaleString()}</time>;
  if (e.kind === 'comment') {
    return (
      <li class="activity-comment" data-kind="comment">
        <p class="muted">
          <strong>{who}</strong> commented · {when}
        </p>
        <p class="comment-text">{e.text}</p>
      </li>
    );
  }
  if (e.kind === 'created') {
    return (
      <li data-kind="created">
        <strong>{who}</strong> created the ticket · {when}
      </li>
    );
  }
  // A resolution date that follows a status change says nothing the status does not.
  const changes = (e.changes ?? []).filter((c) => !(c.field === 'resolutionDate' && e.changes!.some((o) => o.field === 'status')));
  return (
    <li data-kind="changed">
      <strong>{who}</strong>{' '}
      {changes.map((c, i) => (
        <span key={c.field} data-field={c.field}>
          {i > 0 ? ', ' : ''}changed the {FIELD_NAMES[c.field] ?? c.field} from {value(c.field, c.from, me)} to {value(c.field, c.to, me)}
        </span>
      ))}{' '}
      · {when}
    </li>
  );
}

/**
 * A ticket's history and the box to comment on it. Reloads when `version`
 * changes (the ticket was saved here), and after a comment.
 */
export function TicketActivity({ ticketId, me, version }: { ticketId: string; me: SessionUser; version: string }) {
  const [entries, setEntries] = useState<TicketActivityEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);

  const load = async () => {
    // Every page, oldest first: a ticket's history is short enough to show whole.
    const all: TicketActivityEntry[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(api.GET('/v1/tickets/{ticketId}/activity', { params: { path: { ticketId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }));
      all.push(...page.entries);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    setEntries(all);
  };

  useEffect(() => {
    load().catch((e: unknown) => setError(describeError(e)));
  }, [ticketId, version]);

  const send = async (ev: Event) => {
    ev.preventDefault();
    if (text.trim() === '') return;
    setBusy(true);
    setError(null);
    try {
      await ok(api.POST('/v1/tickets/{ticketId}/comments', { params: { path: { ticketId } }, body: { text } }));
      setText('');
      await load();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="ticket-activity" aria-labelledby="activity-title">
      <h2 id="activity-title">Activity</h2>
      {entries === null ? (
        <p class="muted">Loading…</p>
      ) : (
        <ol class="activity" aria-label="Ticket activity">
          {entries.map((e) => (
            <Entry key={e.id} e={e} me={me} />
          ))}
        </ol>
      )}
      <form onSubmit={send} class="comment-form">
        <label>
          Comment (for the team; the customer never sees it)
          <textarea name="comment" rows={3} maxLength={10_000} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary" disabled={busy || text.trim() === ''}>Comment</button>
      </form>
    </section>
  );
}
