import type { ComponentChildren } from 'preact';
import { useEffect, useMemo } from 'preact/hooks';
import type { SessionUser } from '../api/types';
import { Inbox, type PresenceStatus } from '../inbox/inbox';
import { InboxContext } from '../inbox/context';
import { logout } from '../session';
import { useObservable } from '../state';
import { QueuedNotices } from './QueuedNotices';
import { SearchBox } from './SearchBox';
import { enableNotifications, notificationState } from '../inbox/notify';

/** The signed-in frame: navigation, the user, sign out, and the live inbox every screen shares. */
export function AppShell({ user, path, children }: { user: SessionUser; path: string; children: ComponentChildren }) {
  const inbox = useMemo(() => new Inbox(user), [user.id]);
  useEffect(() => {
    inbox.start();
    return () => inbox.stop();
  }, [inbox]);
  return (
    <InboxContext.Provider value={inbox}>
      <a class="skip" href="#main">Skip to content</a>
      <header class="topbar">
        <span class="brand">Switchboard</span>
        <nav aria-label="Main">
          <NavLink href="/inbox" current={path.startsWith('/inbox')}>
            Inbox <UnreadBadge inbox={inbox} />
          </NavLink>
          <NavLink href="/tickets" current={path.startsWith('/tickets')}>Tickets</NavLink>
          <NavLink href="/simulator" current={path === '/simulator'}>Customer simulator</NavLink>
          {user.role === 'admin' && <NavLink href="/settings" current={path.startsWith('/settings')}>Settings</NavLink>}
        </nav>
        <SearchBox />
        <div class="who">
          <PresenceSelect inbox={inbox} />
          <NotificationSwitch />
          <a class="user" href="/account" data-route title={`${user.email}: your account`}>{user.name}</a>
          <span class="role">{user.role}</span>
          <button type="button" class="link" onClick={() => void logout()}>Sign out</button>
        </div>
      </header>
      <QueuedNotices inbox={inbox} />
      <main id="main" tabIndex={-1}>{children}</main>
    </InboxContext.Provider>
  );
}

function NavLink({ href, current, children }: { href: string; current: boolean; children: ComponentChildren }) {
  return (
    <a href={href} data-route aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}

function UnreadBadge({ inbox }: { inbox: Inbox }) {
  const unread = useObservable(inbox.unread);
  const counts = useObservable(inbox.counts);
  let n = 0;
  for (const v of unread.values()) n += v;
  const waiting = counts?.waiting ?? 0;
  return (
    <>
      {waiting > 0 && <span class="badge queue" title={`${waiting} waiting`} data-testid="queue-count">{waiting}</span>}
      {n > 0 && <span class="badge unread" title={`${n} unread`}>{n}</span>}
    </>
  );
}

/** Browser notifications are the agent's choice: a button asks once; refused ones are said so. */
function NotificationSwitch() {
  const state = useObservable(notificationState);
  if (state === 'default') return <button type="button" class="link" onClick={() => void enableNotifications()}>Enable notifications</button>;
  if (state === 'denied') return <span class="muted small" title="Allow them in the browser's site settings">Notifications blocked</span>;
  return null;
}

/** The agent's own availability, as teammates see it: online (taking conversations), away, or offline (as with no dashboard open). */
function PresenceSelect({ inbox }: { inbox: Inbox }) {
  const presence = useObservable(inbox.presence);
  const mine = presence.get(inbox.user.id) ?? 'online';
  return (
    <label class="presence-select" data-status={mine}>
      <span class="sr">Your status</span>
      <select aria-label="Your status" value={mine} onChange={(e) => void inbox.setPresence(e.currentTarget.value as PresenceStatus).catch(() => undefined)}>
        <option value="online">● Online</option>
        <option value="away">◐ Away</option>
        <option value="offline">○ Offline</option>
      </select>
    </label>
  );
}
