import type { ConversationSummary } from '../api/types';
import { displayName } from '../inbox/inbox';
import { SlaFlag } from './SlaFlag';

function ago(iso: string | null): string {
  if (iso === null) return '';
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

function meta(c: ConversationSummary): string {
  if (c.status === 'queued') return `waiting ${ago(c.queuedAt)}`;
  if (c.status === 'bot' && c.sessionStatus === 'resolved') return `resolved · ${ago(c.updatedAt)}`;
  return ago(c.updatedAt);
}

/** One view's conversations, each a link to its view (keeping the list's address), and "load more" while pages follow. */
export function ConversationList({ label, conversations, unread, selected, empty, more, loadingMore, onMore, linkSearch }: {
  label: string;
  conversations: ConversationSummary[];
  unread: ReadonlyMap<string, number>;
  selected: string | null;
  empty: string;
  more: boolean;
  loadingMore: boolean;
  onMore: () => void;
  linkSearch: string;
}) {
  return (
    <section class="conv-list" aria-label={label} data-testid="conversations">
      {conversations.length === 0 ? (
        <p class="empty">{empty}</p>
      ) : (
        <ul>
          {conversations.map((c) => {
            const n = unread.get(c.id) ?? 0;
            return (
              <li key={c.id}>
                <a href={`/inbox/${encodeURIComponent(c.id)}${linkSearch}`} data-route aria-current={selected === c.id ? 'true' : undefined} data-conversation={c.id} data-status={c.status}>
                  <span class="name">{displayName(c)}</span>
                  <span class="meta">{meta(c)}</span>
                  {c.sla && <SlaFlag sla={c.sla} />}
                  {n > 0 && <span class="badge unread" aria-label={`${n} unread`}>{n}</span>}
                  {(c.labels ?? []).length > 0 && (
                    <span class="chips" aria-label="Labels">
                      {c.labels.map((l) => (
                        <span key={l.id} class="chip" style={{ '--chip': l.color }} data-label={l.name} title={`label ${l.name}`}>
                          {l.name}
                        </span>
                      ))}
                    </span>
                  )}
                </a>
              </li>
            );
          })}
        </ul>
      )}
      {more && (
        <button type="button" onClick={onMore} disabled={loadingMore}>
          {loadingMore ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}
