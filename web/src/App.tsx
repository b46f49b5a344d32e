import { useEffect } from 'preact/hooks';
import { navigate, onLinkClick, usePath } from './router';
import { loadSession, session } from './session';
import { useObservable } from './state';
import { LoginScreen } from './screens/LoginScreen';
import { AppShell } from './components/AppShell';
import { InboxScreen } from './screens/InboxScreen';
import { TicketsScreen } from './screens/TicketsScreen';
import { SettingsScreen } from './screens/SettingsScreen';
import { SimulatorScreen } from './screens/SimulatorScreen';
import { NotFound } from './components/NotFound';
import { AccountScreen } from './screens/AccountScreen';
import { ContactScreen } from './screens/ContactScreen';

export function App() {
  const user = useObservable(session);
  const { path } = usePath();

  useEffect(() => {
    void loadSession();
    document.addEventListener('click', onLinkClick);
    return () => document.removeEventListener('click', onLinkClick);
  }, []);

  useEffect(() => {
    if (user === null && !path.startsWith('/login')) {
      const next = path === '/' ? '' : `?next=${encodeURIComponent(location.pathname + location.search)}`;
      navigate(`/login${next}`, { replace: true });
    }
    if (user && (path === '/' || path.startsWith('/login'))) {
      // Only paths of this site: a crafted ?next= must not send the person elsewhere.
      const next = new URLSearchParams(location.search).get('next');
      navigate(next !== null && /^\/(?!\/)/.test(next) ? next : '/inbox', { replace: true });
    }
  }, [user, path]);

  if (user === undefined) return <p class="loading" role="status">Loading…</p>;
  if (user === null || path.startsWith('/login')) return <LoginScreen />;

  let screen;
  if (path === '/inbox' || path.startsWith('/inbox/')) screen = <InboxScreen user={user} conversationId={path.startsWith('/inbox/') ? decodeURIComponent(path.slice(7)) : null} />;
  else if (path === '/tickets' || path.startsWith('/tickets/')) screen = <TicketsScreen user={user} ticketId={path.startsWith('/tickets/') ? decodeURIComponent(path.slice(9)) : null} />;
  else if (path === '/settings' || path.startsWith('/settings/')) screen = <SettingsScreen user={user} section={path.slice(10) || 'users'} />;
  else if (path.startsWith('/contacts/') && path.length > 10) screen = <ContactScreen key={path} user={user} contactId={decodeURIComponent(path.slice(10))} />;
  else if (path === '/simulator') screen = <SimulatorScreen />;
  else if (path === '/account') screen = <AccountScreen user={user} />;
  else screen = <NotFound />;
  return <AppShell user={user} path={path}>{screen}</AppShell>;
}
