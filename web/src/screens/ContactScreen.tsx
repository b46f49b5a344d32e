import { useEffect, useState } from 'preact/hooks';
import { api, ok, request } from '../api/client';
import { ApiError, describeError } from '../api/errors';
import type { ChannelInfo, ContactDetail, ConversationDetail, Label, MessageShape, SessionUser } from '../api/types';
import { LabelChips } from '../components/LabelChips';
import { TicketForm } from '../components/TicketForm';
import { useInbox } from '../inbox/context';
import { ticketPrefill } from '../ticket-prefill';
import type { TicketShape } from '../tickets';

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const at = (iso: string | null | undefined) => (iso ? <time dateTime={iso}>{when.format(new Date(iso))}</time> : <span class="muted">never</span>);

type Contact = ContactDetail['contact'];

const STATUS_TEXT = { bot: 'with the bot', queued: 'waiting for an agent', assigned: 'with an agent' } as const;

/** A contact: name and custom attributes to edit, phone, channel, first and last seen, every session of its conversation and its tickets. */
export function ContactScreen({ user, contactId }: { user: SessionUser; contactId: string }) {
  const [detail, setDetail] = useState<ContactDetail | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [channels, setChannels] = useState<ChannelInfo[]>([]);
  const [recent, setRecent] = useState<MessageShape[]>([]);
  const [creating, setCreating] = useState(false);
  const [reload, setReload] = useState(0);
  const inbox = useInbox();

  // A teammate's rename, attribute or label change shows at once.
  useEffect(() => inbox.watchContact(contactId, () => setReload((n) => n + 1)), [contactId, inbox]);

  useEffect(() => {
    ok(api.GET('/v1/channels'))
      .then((r) => setChannels(r.channels as ChannelInfo[]))
      .catch(() => undefined);
  }, []);

  useEffect(() => {
    setError(null);
    ok(api.GET('/v1/contacts/{id}', { params: { path: { id: contactId } } }))
      .then((d) => {
        setDetail(d);
        if (d.conversation !== null) {
          return request<{ conversation: ConversationDetail }>('GET', `/v1/conversations/${encodeURIComponent(d.conversation.id)}`).then((r) => setRecent(r.conversation.messages));
        }
      })
      .catch((e: unknown) => (e instanceof ApiError && e.status === 404 ? setMissing(true) : setError(describeError(e))));
  }, [contactId, reload]);

  if (missing) return <section class="panel" role="alert"><h1>No such contact</h1><p>It does not exist, or it belongs to another organization.</p></section>;
  if (!detail) return <section class="panel">{error ? <p class="error" role="alert">{error}</p> : <p class="muted">Loading…</p>}</section>;

  const { contact, conversation, sessions } = detail;
  const tickets = (detail.tickets ?? []) as unknown as TicketShape[];
  const channel = channels.find((c) => c.id === conversation?.channelId);
  const name = contact.name ?? shownName(contact);
  // A PATCH answers the contact without its labels: those stay as they were.
  const changed = (c: Contact) => setDetail({ ...detail, contact: { ...detail.contact, ...c } });

  return (
    <section class="panel contact" aria-labelledby="contact-title">
      <header class="row wrap spread">
        <ContactName contact={contact} onChanged={changed} />
        <button type="button" class="primary" aria-expanded={creating} onClick={() => setCreating(!creating)}>Create ticket</button>
      </header>
      {error && <p class="error" role="alert">{error}</p>}
      {creating && (
        <TicketForm
          user={user}
          contact={contact.audienceExternalId}
          prefill={ticketPrefill({ contactId: contact.id, name, conversationId: conversation?.id ?? null, messages: recent, me: user })}
          onCreated={() => {
            setCreating(false);
            setReload((n) => n + 1);
          }}
        />
      )}
      <dl class="facts">
        <dt>Phone</dt>
        <dd data-testid="contact-phone">{contact.phone === null ? <span class="muted">hidden by the customer</span> : `+${contact.phone}`}</dd>
        {contact.username !== null && (
          <>
            <dt>WhatsApp username</dt>
            <dd data-testid="contact-username">@{contact.username}</dd>
          </>
        )}
        {contact.userId !== null && (
          <>
            <dt>WhatsApp user id</dt>
            <dd data-testid="contact-user-id"><code>{contact.userId}</code></dd>
          </>
        )}
        <dt>Channel</dt>
        <dd>{channel?.name ?? conversation?.channelId ?? <span class="muted">none</span>}</dd>
        <dt>First seen</dt>
        <dd>{at(contact.createdAt)}</dd>
        <dt>Last seen</dt>
        <dd>{at(conversation?.lastInboundAt)}</dd>
        <dt>Now</dt>
        <dd>{conversation ? STATUS_TEXT[conversation.status] : <span class="muted">no conversation yet</span>}</dd>
      </dl>
      <ContactLabels contact={contact} onChanged={changed} />
      <Attributes contact={contact} onChanged={changed} />
      <section aria-labelledby="contact-conversations">
        <h2 id="contact-conversations">Conversations <span class="count">{sessions.length}</span></h2>
        {sessions.length === 0 ? (
          <p class="empty">No conversation yet.</p>
        ) : (
          <ul class="plain" data-testid="contact-conversations">
            {sessions.map((s) => (
              <li key={s.sessionId} data-session={s.sessionId}>
                <a href={`/inbox/${encodeURIComponent(contact.audienceExternalId)}${s.sessionId === conversation?.sessionId ? '' : `?session=${encodeURIComponent(s.sessionId)}`}`} data-route>
                  Started {when.format(new Date(s.openedAt))}
                </a>{' '}
                <span class={`pill ${s.status}`}>{s.status === 'open' && conversation ? STATUS_TEXT[conversation.status] : s.status}</span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="contact-tickets">
        <h2 id="contact-tickets">Tickets <span class="count">{detail.ticketsTotal ?? tickets.length}</span></h2>
        {tickets.length === 0 ? (
          <p class="empty">No ticket.</p>
        ) : (
          <ul class="plain" data-testid="contact-tickets">
            {tickets.map((t) => (
              <li key={t.ticketId}>
                <a href={`/tickets/${encodeURIComponent(t.ticketId)}`} data-route>{t.title}</a> <span class={`pill ${t.status}`}>{t.status.replace('_', ' ')}</span>{' '}
                <span class="muted small">{t.ticketId}</span>
              </li>
            ))}
          </ul>
        )}
        {(detail.ticketsTotal ?? 0) > tickets.length && (
          <a href={`/tickets?contact=${encodeURIComponent(contact.audienceExternalId)}`} data-route>All {detail.ticketsTotal} tickets</a>
        )}
      </section>
    </section>
  );
}

function patch(id: string, body: { name?: string | null; attributes?: Record<string, string | null> }): Promise<Contact> {
  return ok(api.PATCH('/v1/contacts/{id}', { params: { path: { id } }, body })).then((r) => r.contact);
}

function ContactName({ contact, onChanged }: { contact: Contact; onChanged: (c: Contact) => void }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(contact.name ?? '');
  const [error, setError] = useState<string | null>(null);
  if (!editing) {
    return (
      <div class="row">
        <h1 id="contact-title">{contact.name ?? shownName(contact)}</h1>
        <button type="button" class="link" onClick={() => (setValue(contact.name ?? ''), setEditing(true))}>Rename</button>
      </div>
    );
  }
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      onChanged(await patch(contact.id, { name: value.trim() === '' ? null : value.trim() }));
      setEditing(false);
      setError(null);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <form class="row" onSubmit={save} aria-label="Rename">
      <h1 id="contact-title" class="sr">{contact.name ?? shownName(contact)}</h1>
      <label>
        Name
        <input name="name" value={value} maxLength={200} onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary">Save</button>
      <button type="button" onClick={() => setEditing(false)}>Cancel</button>
      {error && <p class="error" role="alert">{error}</p>}
    </form>
  );
}

/** The contact's labels (the organization's label set), added and removed here. */
function ContactLabels({ contact, onChanged }: { contact: Contact; onChanged: (c: Contact) => void }) {
  const [all, setAll] = useState<Label[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    request<{ labels: Label[] }>('GET', '/v1/labels')
      .then((r) => setAll(r.labels))
      .catch(() => undefined);
  }, []);
  const relabel = async (what: string, fn: () => Promise<{ labels: Label[] }>) => {
    setBusy(true);
    try {
      onChanged({ ...contact, labels: (await fn()).labels });
      setError(null);
    } catch (err) {
      setError(`${what}: ${describeError(err)}`);
    } finally {
      setBusy(false);
    }
  };
  const path = `/v1/contacts/${encodeURIComponent(contact.id)}/labels`;
  return (
    <section aria-labelledby="contact-labels">
      <h2 id="contact-labels">Labels</h2>
      <LabelChips
        on={contact.labels ?? []}
        all={all}
        busy={busy}
        add={(labelId) => void relabel('Label not added', () => request('POST', path, { labels: [labelId] }))}
        remove={(l) => void relabel('Label not removed', () => request('DELETE', `${path}/${encodeURIComponent(l.id)}`))}
      />
      {error && <p class="error" role="alert">{error}</p>}
    </section>
  );
}

/** Custom attributes, each editable and removable, and a new one added by key. */
function Attributes({ contact, onChanged }: { contact: Contact; onChanged: (c: Contact) => void }) {
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const change = async (attributes: Record<string, string | null>) => {
    try {
      onChanged(await patch(contact.id, { attributes }));
      setError(null);
      return true;
    } catch (err) {
      setError(describeError(err));
      return false;
    }
  };
  const entries = Object.entries(contact.attributes).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section aria-labelledby="contact-attributes">
      <h2 id="contact-attributes">Attributes</h2>
      {entries.length === 0 && <p class="empty">No attribute yet.</p>}
      {entries.length > 0 && (
        <table class="attributes" data-testid="attributes">
          <tbody>
            {entries.map(([k, v]) => (
              <tr key={k} data-attribute={k}>
                <th scope="row">{k}</th>
                <td>
                  <input aria-label={`Value of ${k}`} value={edits[k] ?? v} maxLength={1000} onInput={(e) => setEdits({ ...edits, [k]: e.currentTarget.value })} />
                </td>
                <td class="row">
                  {edits[k] !== undefined && edits[k] !== v && (
                    <button type="button" onClick={() => void change({ [k]: edits[k]! }).then((done) => done && setEdits(({ [k]: _, ...rest }) => rest))}>Save</button>
                  )}
                  <button type="button" class="link" onClick={() => void change({ [k]: null })}>Remove</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        class="row wrap"
        aria-label="New attribute"
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim() === '') return;
          void change({ [key.trim()]: value }).then((done) => {
            if (!done) return;
            setKey('');
            setValue('');
          });
        }}
      >
        <label>
          Key
          <input name="key" value={key} maxLength={64} pattern="[A-Za-z0-9_.\-]{1,64}" title="letters, digits, _ . -" onInput={(e) => setKey(e.currentTarget.value)} />
        </label>
        <label>
          Value
          <input name="value" value={value} maxLength={1000} onInput={(e) => setValue(e.currentTarget.value)} />
        </label>
        <button type="submit">Add attribute</button>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
    </section>
  );
}

/** What a nameless contact is called: their number, or their username (or WhatsApp user id) when they hide it. */
function shownName(c: Pick<Contact, 'phone' | 'username' | 'userId'>): string {
  if (c.phone !== null) return `+${c.phone}`;
  return c.username !== null ? `@${c.username}` : (c.userId ?? 'WhatsApp user');
}
