import type { Inbox } from '../inbox/inbox';
import { useObservable } from '../state';
import { enableNotifications, notificationState } from '../inbox/notify';

/** In-page notices of conversations that were just queued (and the switch for browser notifications). */
export function QueuedNotices({ inbox }: { inbox: Inbox }) {
  const notices = useObservable(inbox.notices);
  const canAsk = useObservable(notificationState) === 'default';
  return (
    <div class="notices" aria-live="polite">
      {notices.map((n) => (
        <div class="notice" key={n.id} role="status">
          <a href={`/inbox/${encodeURIComponent(n.conversationId)}`} data-route onClick={() => inbox.dismissNotice(n.id)}>
            {n.name} is waiting for an agent
          </a>
          <button type="button" class="link" aria-label="Dismiss" onClick={() => inbox.dismissNotice(n.id)}>×</button>
        </div>
      ))}
      {notices.length > 0 && canAsk && (
        <button type="button" class="link small" onClick={() => void enableNotifications()}>
          Also notify me when this tab is in the background
        </button>
      )}
    </div>
  );
}
