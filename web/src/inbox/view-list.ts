import { request } from '../api/client';
import { describeError } from '../api/errors';
import type { ConversationSummary, ConversationViewPage } from '../api/types';
import { Observable } from '../state';
import type { Inbox } from './inbox';
import { apiQuery, compareFor, inView, type ViewQuery } from './views';

export const PAGE_SIZE = 50;

export interface ViewState {
  rows: ConversationSummary[];
  /** Where the next page starts; null after the last. */
  nextCursor: string | null;
  loaded: boolean;
  loadingMore: boolean;
  error: string | null;
}

/**
 * One view of the inbox on screen (`GET /v1/conversations?view=…`), a page at
 * a time by cursor, kept live: a row that changed joins the list at its place
 * in the view's order when it now belongs there (unless it sorts past the
 * last loaded row while more pages follow: that page brings it), leaves it
 * when it no longer does, and moves when its sort key changed. Reloaded from
 * the first page at every reconnect of the inbox socket.
 */
export class ViewList {
  readonly state = new Observable<ViewState>({ rows: [], nextCursor: null, loaded: false, loadingMore: false, error: null });
  private generation = 0;
  private readonly compare;
  /** The signed-in agent's teams (ids), for the `mine` team filter; null until known. */
  myTeams: ReadonlySet<string> | null = null;

  constructor(
    private readonly inbox: Inbox,
    readonly query: ViewQuery,
  ) {
    this.compare = compareFor(query.sort);
  }

  /** Loads the first page and follows the inbox; returns the stop. */
  start(): () => void {
    void this.load();
    const offRow = this.inbox.onRow((c) => this.onRow(c));
    const offResync = this.inbox.onResync(() => void this.load());
    return () => {
      offRow();
      offResync();
      this.generation++;
    };
  }

  private async load(): Promise<void> {
    const g = ++this.generation;
    try {
      const page = await request<ConversationViewPage>('GET', `/v1/conversations?${apiQuery(this.query, PAGE_SIZE)}`);
      if (g !== this.generation) return;
      // Loaded before it is recorded: the rows it announces are placed by the new page, not the old one.
      this.state.set({ ...this.state.value, loaded: false });
      for (const c of page.conversations) this.inbox.upsert(c);
      const rows = page.conversations.map((c) => this.inbox.get(c.id) ?? c);
      this.state.set({ rows, nextCursor: page.nextCursor, loaded: true, loadingMore: false, error: null });
    } catch (e) {
      if (g === this.generation) this.state.set({ ...this.state.value, loaded: true, error: describeError(e) });
    }
  }

  async more(): Promise<void> {
    const s = this.state.value;
    if (s.nextCursor === null || s.loadingMore) return;
    const g = this.generation;
    this.state.set({ ...s, loadingMore: true });
    try {
      const page = await request<ConversationViewPage>('GET', `/v1/conversations?${apiQuery(this.query, PAGE_SIZE, s.nextCursor)}`);
      if (g !== this.generation) return;
      for (const c of page.conversations) this.inbox.upsert(c);
      const cur = this.state.value;
      const have = new Set(cur.rows.map((r) => r.id));
      // A conversation that moved since the first pages can come again: it stays where it is.
      const added = page.conversations.filter((c) => !have.has(c.id)).map((c) => this.inbox.get(c.id) ?? c);
      this.state.set({ ...cur, rows: [...cur.rows, ...added], nextCursor: page.nextCursor, loadingMore: false, error: null });
    } catch (e) {
      if (g === this.generation) this.state.set({ ...this.state.value, loadingMore: false, error: describeError(e) });
    }
  }

  private onRow(c: ConversationSummary): void {
    const s = this.state.value;
    if (!s.loaded) return;
    const i = s.rows.findIndex((r) => r.id === c.id);
    if (!inView(c, this.query, this.inbox.user.id, this.myTeams)) {
      if (i >= 0) this.state.set({ ...s, rows: s.rows.filter((r) => r.id !== c.id) });
      return;
    }
    const rows = i < 0 ? [...s.rows, c] : s.rows.map((r) => (r.id === c.id ? c : r));
    rows.sort(this.compare);
    // Past the last loaded row, with pages still to load: that page brings it.
    if (i < 0 && s.nextCursor !== null && rows[rows.length - 1] === c) return;
    this.state.set({ ...s, rows });
  }
}
