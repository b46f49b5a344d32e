import { useEffect, useRef, useState } from 'preact/hooks';
import { request } from '../api/client';
import { describeError } from '../api/errors';
import type { SearchResult } from '../api/types';
import { usePath } from '../router';

const DELAY_MS = 200;
const LIMIT = 8;

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** Where a message hit opens: its conversation, showing that message's session, scrolled to it. */
export function messageHref(m: SearchResult['messages'][number]): string {
  return `/inbox/${encodeURIComponent(m.conversationId)}?session=${encodeURIComponent(m.sessionId)}&message=${encodeURIComponent(m.messageId)}`;
}

/** The one search box of the app shell: contacts by name or phone, messages by their words (`GET /v1/search`). */
export function SearchBox() {
  const { path } = usePath();
  const [q, setQ] = useState('');
  const [result, setResult] = useState<SearchResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const text = q.trim();
    if (text === '') {
      setResult(null);
      return;
    }
    let live = true;
    const t = setTimeout(() => {
      request<SearchResult>('GET', `/v1/search?q=${encodeURIComponent(text)}&limit=${LIMIT}`)
        .then((r) => {
          if (!live) return;
          setResult(r);
          setError(null);
        })
        .catch((e: unknown) => live && setError(describeError(e)));
    }, DELAY_MS);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [q]);

  // A hit was followed (or the person went elsewhere): the results close.
  useEffect(() => setOpen(false), [path]);

  useEffect(() => {
    const outside = (e: MouseEvent) => {
      if (box.current && !box.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('mousedown', outside);
    return () => document.removeEventListener('mousedown', outside);
  }, []);

  const shown = open && q.trim() !== '' && (result !== null || error !== null);
  return (
    <div class="search" ref={box} role="search" onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
      <input
        type="search"
        name="q"
        aria-label="Search contacts and messages"
        placeholder="Search contacts and messages"
        value={q}
        maxLength={200}
        autoComplete="off"
        onInput={(e) => {
          setQ(e.currentTarget.value);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
      />
      {shown && (
        <div class="search-results" data-testid="search-results">
          {error && <p class="error" role="alert">{error}</p>}
          {result && result.contacts.length === 0 && result.messages.length === 0 && <p class="muted">Nothing found.</p>}
          {result && result.contacts.length > 0 && (
            <section aria-label="Contacts">
              <h2>Contacts</h2>
              <ul>
                {result.contacts.map((c) => (
                  <li key={c.id}>
                    <a href={`/contacts/${encodeURIComponent(c.id)}`} data-route data-contact={c.id}>
                      <span class="name">{c.name ?? `+${c.phone}`}</span> <span class="muted small">+{c.phone}</span>
                    </a>
                  </li>
                ))}
              </ul>
            </section>
          )}
          {result && result.messages.length > 0 && (
            <section aria-label="Messages">
              <h2>Messages</h2>
              <ul>
                {result.messages.map((m) => (
                  <li key={m.messageId}>
                    <a href={messageHref(m)} data-route data-message={m.messageId}>
                      <span class="snippet">{m.snippet}</span>
                      <span class="muted small">
                        +{m.audienceExternalId.slice(0, m.audienceExternalId.indexOf(':'))} · <time dateTime={m.sentAt}>{when.format(new Date(m.sentAt))}</time>
                      </span>
                    </a>
                  </li>
                ))}
              </ul>
            </section>
          )}
        </div>
      )}
    </div>
  );
}
