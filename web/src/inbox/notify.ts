import { navigate } from '../router';
import { Observable } from '../state';

export type NotificationState = 'unsupported' | 'default' | 'granted' | 'denied';

function current(): NotificationState {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

/** Whether the browser shows this tab's notifications: asked once, by the agent's click. */
export const notificationState = new Observable<NotificationState>(current());

export async function enableNotifications(): Promise<void> {
  if (typeof Notification === 'undefined') return;
  notificationState.set(await Notification.requestPermission());
}

/** The agent is not looking at this tab: it is hidden, or another window has the focus. */
export function away(): boolean {
  return document.visibilityState === 'hidden' || !document.hasFocus();
}

/**
 * A browser notification, when the agent allowed them and is not looking at
 * the tab (the page shows its own notices otherwise); a click on it brings
 * the tab forward at `path`. `tag` replaces an earlier one about the same thing.
 */
export function notify(title: string, body: string, tag: string, path: string): void {
  if (current() !== 'granted' || !away()) return;
  let n: Notification;
  try {
    n = new Notification(title, { body, tag });
  } catch {
    // Some mobile browsers allow notifications only from a service worker: the page's notices remain.
    return;
  }
  n.onclick = () => {
    window.focus();
    navigate(path);
    n.close();
  };
}

const BASE_TITLE = document.title || 'Switchboard';

/** The tab's title with what waits for the agent in front: `(3) Switchboard`. */
export function setTitleCount(n: number): void {
  const next = n > 0 ? `(${n}) ${BASE_TITLE}` : BASE_TITLE;
  if (document.title !== next) document.title = next;
}
