import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Inbox } from './inbox';

export const InboxContext = createContext<Inbox | null>(null);

export function useInbox(): Inbox {
  const inbox = useContext(InboxContext);
  if (!inbox) throw new Error('useInbox outside the signed-in shell');
  return inbox;
}
