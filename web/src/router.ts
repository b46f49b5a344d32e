import { Observable, useObservable } from './state';

/** The page's path, kept in step with the history (pushState, back/forward). */
export const currentPath = new Observable<string>(location.pathname + location.search);

addEventListener('popstate', () => currentPath.set(location.pathname + location.search));

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  currentPath.set(to);
}

export function usePath(): { path: string; query: URLSearchParams } {
  const full = useObservable(currentPath);
  const i = full.indexOf('?');
  return { path: i < 0 ? full : full.slice(0, i), query: new URLSearchParams(i < 0 ? '' : full.slice(i + 1)) };
}

/** Follows same-origin link clicks without a page load (modifier clicks keep their browser meaning). */
export function onLinkClick(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest('a');
  if (!a || a.target === '_blank' || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !a.hasAttribute('data-route')) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
}
