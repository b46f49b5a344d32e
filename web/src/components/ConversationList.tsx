import type { ConversationSummary } from '../api/types';
import { displayName } from '../inbox/inbox';

function ago(iso: string | null): string {
  if (iso === null) return '';
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

/** A list of conversations (the queue, or the agent's own), each a link to its view. */
export function ConversationList({ title, conversations, total, unread, selected, empty, onMore, testid }: {
  title: string;
  conversations: ConversationSummary[];
  total?: number;
  unread: ReadonlyMap<string, number>;
  selected: string | null;
  empty: string;
  onMore?: () => void;
  testid: string;
}) {
  const count = total ?? conversations.length;
  return (
    <section class="conv-list" aria-label={title} data-testid={testid}>
      <h2>
        {title} <span class="count">{count}</span>
      </h2>
      {conversations.length === 0 ? (
        <p class="empty">{empty}</p>
      ) : (
        <ul>
          {conversations.map((c) => {
            const n = unread.get(c.id) ?? 0;
            return (
              <li key={c.id}>
                <a href={`/inbox/${encodeURIComponent(c.id)}`} data-route aria-current={selected === c.id ? 'true' : undefined} data-conversation={c.id}>
                  <span class="name">{displayName(c)}</span>
                  <span class="meta">{c.status === 'queued' ? `waiting ${ago(c.queuedAt)}` : ago(c.lastInboundAt ?? c.updatedAt)}</span>
                  {n > 0 && <span class="badge unread" aria-label={`${n} unread`}>{n}</span>}
                </a>
              </li>
            );
          })}
        </ul>
      )}
      {onMore && conversations.length < count && (
        <button type="button" onClick={onMore}>
          Show more ({count - conversations.length} not shown)
        </button>
      )}
    </section>
  );
}
