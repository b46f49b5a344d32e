import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ok, request } from '../api/client';
import type { ChannelInfo, ConversationCounts, ConversationSummary, SessionUser, Team } from '../api/types';

type Label = ConversationSummary['labels'][number];
import { ConversationList } from '../components/ConversationList';
import { ConversationView } from '../components/ConversationView';
import { directory, loadDirectory } from '../directory';
import { useInbox } from '../inbox/context';
import type { Inbox } from '../inbox/inbox';
import { ViewList } from '../inbox/view-list';
import { filtersQuery, hasFilters, VIEWS, viewQueryFrom, viewSearch, type ViewQuery } from '../inbox/views';
import { navigate, usePath } from '../router';
import { useObservable } from '../state';

const COUNTS_DELAY_MS = 300;

/** The counts per view with the list's filters: the inbox's own without filters, else fetched and refreshed when a row changed lanes. */
function useCounts(inbox: Inbox, v: ViewQuery): ConversationCounts | null {
  const unfiltered = useObservable(inbox.counts);
  const [filtered, setFiltered] = useState<ConversationCounts | null>(null);
  const filters = filtersQuery(v);
  useEffect(() => {
    setFiltered(null);
    if (!hasFilters(v)) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let live = true;
    const load = () =>
      request<{ counts: ConversationCounts }>('GET', `/v1/conversations/counts?${filters}`)
        .then((r) => live && setFiltered(r.counts))
        .catch(() => undefined);
    void load();
    const later = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void load(), COUNTS_DELAY_MS);
    };
    const offRow = inbox.onCountsChange(later);
    const offResync = inbox.onResync(later);
    return () => {
      live = false;
      clearTimeout(timer);
      offRow();
      offResync();
    };
  }, [filters]);
  return hasFilters(v) ? filtered : unfiltered;
}

function withoutSla(v: ViewQuery): ViewQuery {
  const { sla: _sla, ...rest } = v;
  return rest;
}

/** The views of the team inbox with their counts, filters and order, and the open conversation beside them. */
export function InboxScreen({ user, conversationId }: { user: SessionUser; conversationId: string | null }) {
  const inbox = useInbox();
  const { query } = usePath();
  const v = viewQueryFrom(query);
  const search = viewSearch(v);
  const list = useMemo(() => new ViewList(inbox, v), [inbox, search]);
  useEffect(() => list.start(), [list]);
  const state = useObservable(list.state);
  const unread = useObservable(inbox.unread);
  const connection = useObservable(inbox.connection);
  const people = useObservable(directory);
  const counts = useCounts(inbox, v);
  const [channels, setChannels] = useState<ChannelInfo[]>([]);
  const [labels, setLabels] = useState<Label[]>([]);
  const [teams, setTeams] = useState<Team[]>([]);
  const myTeams = useMemo(() => new Set(teams.filter((t) => t.memberIds.includes(user.id)).map((t) => t.id)), [teams, user.id]);
  useEffect(() => {
    list.myTeams = myTeams;
  }, [list, myTeams]);

  useEffect(() => {
    void loadDirectory();
    request<{ labels: Label[] }>('GET', '/v1/labels')
      .then((r) => setLabels(r.labels))
      .catch(() => undefined);
    ok(api.GET('/v1/teams'))
      .then((r) => setTeams(r.teams))
      .catch(() => undefined);
    ok(api.GET('/v1/channels'))
      .then((r) => setChannels(r.channels as ChannelInfo[]))
      .catch(() => undefined);
  }, []);

  const base = `/inbox${conversationId ? `/${encodeURIComponent(conversationId)}` : ''}`;
  const go = (next: ViewQuery) => navigate(`${base}${viewSearch(next)}`);
  const set = (k: 'channelId' | 'assigneeId' | 'contact' | 'label' | 'team', value: string) => {
    const next = { ...v };
    if (value) next[k] = value;
    else delete next[k];
    go(next);
  };
  const label = VIEWS.find((x) => x.id === v.view)!.label;

  return (
    <div class={`inbox ${conversationId ? 'has-open' : ''}`}>
      <div class="inbox-lists">
        <p class={`connection ${connection}`} role="status" data-testid="connection">
          {connection === 'open' ? 'Live' : connection === 'reconnecting' ? 'Reconnecting…' : connection === 'closed' ? 'Offline' : 'Connecting…'}
        </p>
        <nav class="views" aria-label="Views">
          {VIEWS.map((x) => (
            <a key={x.id} href={`${base}${viewSearch({ ...v, view: x.id, sort: x.id === 'waiting' ? 'waiting' : 'activity' })}`} data-route aria-current={x.id === v.view ? 'page' : undefined} data-view={x.id}>
              {x.label} <span class="count" data-testid={`count-${x.id}`}>{counts ? counts[x.id] : '…'}</span>
            </a>
          ))}
        </nav>
        <form class="view-filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
          <label>
            Channel
            <select name="channel" value={v.channelId ?? ''} onChange={(e) => set('channelId', e.currentTarget.value)}>
              <option value="">all channels</option>
              {channels.map((c) => (
                <option key={c.id} value={c.id}>{c.name}</option>
              ))}
            </select>
          </label>
          <label>
            Assignee
            <select name="assignee" value={v.assigneeId ?? ''} onChange={(e) => set('assigneeId', e.currentTarget.value)}>
              <option value="">anyone</option>
              <option value={user.id}>me</option>
              {[...people.values()]
                .filter((p) => p.id !== user.id)
                .sort((a, b) => a.name.localeCompare(b.name))
                .map((p) => (
                  <option key={p.id} value={p.id}>{p.name}</option>
                ))}
            </select>
          </label>
          <label>
            Label
            <select name="label" value={v.label ?? ''} onChange={(e) => set('label', e.currentTarget.value)}>
              <option value="">any label</option>
              {labels.map((l) => (
                <option key={l.id} value={l.id}>{l.name}</option>
              ))}
            </select>
          </label>
          {teams.length > 0 && (
            <label>
              Team
              <select name="team" value={v.team ?? ''} onChange={(e) => set('team', e.currentTarget.value)}>
                <option value="">all teams</option>
                <option value="mine">my teams</option>
                {[...teams]
                  .sort((a, b) => a.name.localeCompare(b.name))
                  .map((t) => (
                    <option key={t.id} value={t.id}>{t.name}</option>
                  ))}
              </select>
            </label>
          )}
          <label>
            Response time
            <select name="sla" value={v.sla ?? ''} onChange={(e) => go(e.currentTarget.value === 'breached' ? { ...v, sla: 'breached' } : withoutSla(v))}>
              <option value="">any</option>
              <option value="breached">overdue only</option>
            </select>
          </label>
          <label>
            Order
            <select name="sort" value={v.sort} onChange={(e) => go({ ...v, sort: e.currentTarget.value === 'waiting' ? 'waiting' : 'activity' })}>
              <option value="activity">last activity</option>
              <option value="waiting">longest waiting</option>
            </select>
          </label>
          {v.contact && (
            <p class="small">
              One contact only <button type="button" class="link" onClick={() => set('contact', '')}>show everyone</button>
            </p>
          )}
        </form>
        {!state.loaded ? (
          <p class="muted">Loading conversations…</p>
        ) : (
          <>
            {state.error && <p class="error" role="alert">{state.error}</p>}
            <ConversationList
              label={label}
              conversations={state.rows}
              unread={unread}
              selected={conversationId}
              empty={hasFilters(v) ? 'No conversation matches.' : 'Nothing here.'}
              more={state.nextCursor !== null}
              loadingMore={state.loadingMore}
              onMore={() => void list.more()}
              linkSearch={search}
            />
          </>
        )}
      </div>
      <div class="inbox-detail">
        {conversationId ? <ConversationView key={conversationId} id={conversationId} user={user} channels={channels} /> : <p class="muted pick">Pick a conversation.</p>}
      </div>
    </div>
  );
}
