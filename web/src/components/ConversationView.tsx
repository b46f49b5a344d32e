import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok, request } from '../api/client';
import { ApiError, describeError } from '../api/errors';
import type { ChannelInfo, ConversationDetail, ConversationSummary, Label, MessageShape, ReplyMessage, SessionUser, TemplateSend } from '../api/types';
import { directory, loadDirectory, userName } from '../directory';
import { useInbox } from '../inbox/context';
import { displayName } from '../inbox/inbox';
import type { EventFrame } from '../inbox/frames';
import { useObservable } from '../state';
import { Composer } from './Composer';
import { CustomerPanel } from './CustomerPanel';
import { MessageList } from './MessageList';
import { WindowCountdown, windowOpen } from './WindowCountdown';
import { LabelChips } from './LabelChips';
import { SlaFlag } from './SlaFlag';
import { TicketForm } from './TicketForm';
import { usePath } from '../router';
import { ticketPrefill } from '../ticket-prefill';

const STATUS_TEXT: Record<ConversationSummary['status'], string> = { bot: 'with the bot', queued: 'waiting for an agent', assigned: 'with an agent' };

const STATUS_RANK: Record<string, number> = { accepted: 0, sent: 1, delivered: 2, read: 3, failed: 4 };

/**
 * Fetched messages, each at the furthest status seen so far: a status event
 * can overtake the fetch that was started before it, and statuses only move forward.
 */
function mergeStatuses(fetched: MessageShape[], shown: MessageShape[]): MessageShape[] {
  const seen = new Map(shown.filter((m) => m.messageId && m.status).map((m) => [m.messageId, m]));
  return fetched.map((m) => {
    const s = m.messageId ? seen.get(m.messageId) : undefined;
    return s?.status && (STATUS_RANK[s.status] ?? 0) > (STATUS_RANK[m.status ?? 'accepted'] ?? 0) ? { ...m, status: s.status, ...(s.errors ? { errors: s.errors } : {}) } : m;
  });
}

function idempotencyKey(): string {
  return crypto.randomUUID();
}

/** One conversation: its history, its state, what the agent can do with it, and (sandbox) the customer's phone. */
export function ConversationView({ id, user, channels }: { id: string; user: SessionUser; channels: ChannelInfo[] }) {
  const inbox = useInbox();
  const people = useObservable(directory);
  const team = useObservable(inbox.presence);
  const [conv, setConv] = useState<ConversationSummary | null>(null);
  const [messages, setMessages] = useState<MessageShape[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [transferTo, setTransferTo] = useState('');
  const [ticket, setTicket] = useState<'closed' | 'open' | string>('closed');
  const [labels, setLabels] = useState<Label[]>([]);
  const { query } = usePath();
  // A search hit: the session it is in (an earlier one, maybe), and the message to show.
  const focusSession = query.get('session');
  const focusMessage = query.get('message');
  const refetch = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const lastTyping = useRef(0);
  const shown = useRef<MessageShape[]>([]);
  shown.current = messages;

  const loadMessages = async (sessionId: string | null) => {
    if (sessionId === null) return setMessages([]);
    // The agents' timeline: private notes too.
    const all = await ok(api.GET('/v1/sessions/{sessionId}/messages', { params: { path: { sessionId }, query: { include: 'notes' } } }));
    setMessages((shown) => mergeStatuses(all as MessageShape[], shown));
  };

  const load = async () => {
    try {
      const { conversation } = await request<{ conversation: ConversationDetail }>('GET', `/v1/conversations/${encodeURIComponent(id)}`);
      const { messages: recent, ...summary } = conversation;
      setConv(summary);
      inbox.upsert(summary);
      setMissing(false);
      const earlier = focusSession !== null && focusSession !== summary.sessionId;
      if (!earlier) setMessages((shown) => mergeStatuses(recent, shown));
      // The summary carries the last 50; the full history of a session comes from the sessions API
      // (also for a searched message older than those, or in an earlier session).
      const focusMissing = focusMessage !== null && !recent.some((m) => m._id === focusMessage);
      if (earlier || recent.length >= 50 || focusMissing) await loadMessages(earlier ? focusSession : summary.sessionId);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) setMissing(true);
      else setError(describeError(e));
    }
  };

  useEffect(() => {
    setConv(null);
    setMessages([]);
    setError(null);
    inbox.setOpen(id);
    void load();
    void loadDirectory();
    request<{ labels: Label[] }>('GET', '/v1/labels')
      .then((r) => setLabels(r.labels))
      .catch(() => undefined);
    const stop = inbox.watch(id, (f: EventFrame | null) => {
      const d = (f?.data ?? {}) as { messageId?: unknown; status?: unknown };
      if (f !== null && f.type === 'message_status' && typeof d.messageId === 'string' && typeof d.status === 'string') {
        setMessages((ms) => ms.map((m) => (m.messageId === d.messageId ? { ...m, status: d.status as MessageShape['status'], ...(Array.isArray((f.data as { errors?: unknown }).errors) ? { errors: (f.data as { errors: MessageShape['errors'] }).errors } : {}) } : m)));
        // A status of a message not shown yet: fetch, so it is not lost.
        if (shown.current.some((m) => m.messageId === d.messageId)) return;
      }
      clearTimeout(refetch.current);
      refetch.current = setTimeout(() => void load(), 120);
    });
    return () => {
      stop();
      clearTimeout(refetch.current);
      inbox.setOpen(null);
    };
  }, [id, focusSession, focusMessage]);

  if (missing) return <section class="panel" role="alert"><h1>No such conversation</h1><p>It does not exist, or it belongs to another organization.</p></section>;
  if (!conv) return <section class="panel conversation">{error ? <p class="error" role="alert">{error}</p> : <p class="muted">Loading…</p>}</section>;

  const mineOrAdmin = conv.status === 'assigned' && (conv.assigneeId === user.id || user.role === 'admin');
  const channel = channels.find((c) => c.id === conv.channelId);
  const webChat = channel?.kind === 'web_chat';
  const open = webChat || windowOpen(conv.window.closesAt);

  const act = async (what: string, fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      const r = await fn();
      const c = (r as { conversation?: ConversationSummary } | undefined)?.conversation;
      if (c) {
        setConv(c);
        inbox.upsert(c);
      }
      return true;
    } catch (e) {
      setError(`${what}: ${describeError(e)}`);
      if (e instanceof ApiError && (e.code === 'already_taken' || e.code === 'not_assigned_to_you')) void load();
      return false;
    } finally {
      setBusy(false);
    }
  };
  const post = (path: string, body?: unknown) => request<unknown>('POST', `/v1/conversations/${encodeURIComponent(id)}/${path}`, body, { 'Idempotency-Key': idempotencyKey() });
  const reply = (m: ReplyMessage) => act('Reply not sent', () => post('reply', m)).then((done) => (done && void load(), done));
  const template = (t: TemplateSend) => act('Template not sent', () => post('send-template', { template: t })).then((done) => (done && void load(), done));
  const agents = [...people.values()].filter((p) => p.id !== conv.assigneeId && p.active !== false);
  /** A web chat's file: uploaded for this conversation, then sent as the reply that names it. */
  const sendFile = (f: { data: string; mimeType: string; filename: string; caption?: string }) =>
    act('File not sent', async () => {
      const up = await request<{ mediaId: string; type: 'image' | 'document' }>('POST', `/v1/conversations/${encodeURIComponent(id)}/attachments`, { data: f.data, filename: f.filename, ...(f.mimeType ? { mimeType: f.mimeType } : {}) });
      const media = { mediaId: up.mediaId, ...(f.caption ? { caption: f.caption } : {}) };
      return post('reply', { type: 'media', media: up.type === 'image' ? { type: 'image', image: media } : { type: 'document', document: media } });
    }).then((done) => (done && void load(), done));
  const note = (text: string) => act('Note not saved', () => post('notes', { text })).then((done) => (done && void load(), done));
  /** Labels change the conversation's summary: shown here and in the lists at once. */
  const relabel = (what: string, fn: () => Promise<{ labels: Label[] }>) =>
    act(what, async () => {
      const r = await fn();
      return { conversation: { ...conv, labels: r.labels } };
    });

  return (
    <div class="conversation-layout">
      <section class="panel conversation" aria-labelledby="conv-title">
        <header class="conv-head">
          <a href="/inbox" data-route class="back">← Inbox</a>
          <h1 id="conv-title">{displayName(conv)}</h1>
          <p class="sub">
            {webChat ? `Web chat visitor ${conv.phone}` : conv.phone !== null ? `+${conv.phone}` : <span data-testid="phone-hidden">number hidden by the customer</span>}
            {!webChat && conv.username !== null && <span data-testid="conv-username">{' · '}@{conv.username}</span>}
            {!webChat && conv.userId !== null && (
              <span class="muted" title="WhatsApp business-scoped user id">
                {' · '}
                <code data-testid="conv-user-id">{conv.userId}</code>
              </span>
            )}
            {' · '}
            {channel?.name ?? conv.channelId}
            {conv.contactId !== null && (
              <>
                {' · '}
                <a href={`/contacts/${encodeURIComponent(conv.contactId)}`} data-route>Contact page</a>
              </>
            )}
          </p>
          <p class="state" data-testid="conversation-state" data-status={conv.status}>
            {conv.status === 'assigned' ? `Taken by ${userName(conv.assigneeId, user)}` : STATUS_TEXT[conv.status]}
            {conv.sessionStatus === 'resolved' && ' · resolved'}
            {conv.sla && (
              <>
                {' · '}
                <SlaFlag sla={conv.sla} />
              </>
            )}
          </p>
          {!webChat && <WindowCountdown closesAt={conv.window.closesAt} />}
          <div class="actions">
            {conv.status !== 'assigned' && (
              <button type="button" class="primary" disabled={busy} onClick={() => void act('Could not take it', () => post('take'))}>
                Take
              </button>
            )}
            {!webChat && conv.phone === null && mineOrAdmin && (
              <button type="button" disabled={busy || !open} title={open ? undefined : 'only inside the 24-hour window'} onClick={() => void act('Could not ask for the number', () => post('request-phone')).then((done) => (done && void load(), done))}>
                Ask for their number
              </button>
            )}
            {conv.status === 'bot' && (
              <button type="button" disabled={busy} onClick={() => void act('Could not move it to the queue', () => post('queue'))}>
                Move to queue
              </button>
            )}
            {(conv.status === 'queued' || mineOrAdmin) && (
              <button type="button" disabled={busy} onClick={() => void act('Could not hand back', () => post('hand-back'))}>
                Hand back to bot
              </button>
            )}
            {mineOrAdmin && (
              <button type="button" disabled={busy} onClick={() => void act('Could not resolve', () => post('resolve'))}>
                Resolve
              </button>
            )}
            <button type="button" aria-expanded={ticket !== 'closed'} onClick={() => setTicket(ticket === 'closed' ? 'open' : 'closed')}>
              Create ticket
            </button>
            {mineOrAdmin && agents.length > 0 && (
              <form class="inline" onSubmit={(e) => { e.preventDefault(); if (transferTo) void act('Could not transfer', () => post('transfer', { agentId: transferTo })); }}>
                <label>
                  <span class="sr">Transfer to</span>
                  <select value={transferTo} onChange={(e) => setTransferTo(e.currentTarget.value)}>
                    <option value="">Transfer to…</option>
                    {agents.map((a) => (
                      <option key={a.id} value={a.id} data-presence={team.get(a.id) ?? 'offline'}>{a.name} · {team.get(a.id) ?? 'offline'}</option>
                    ))}
                  </select>
                </label>
                <button type="submit" disabled={busy || !transferTo}>Transfer</button>
              </form>
            )}
          </div>
          <LabelChips
            on={conv.labels}
            all={labels}
            busy={busy}
            add={(labelId) => void relabel('Label not added', () => request('POST', `/v1/conversations/${encodeURIComponent(id)}/labels`, { labels: [labelId] }))}
            remove={(l) => void relabel('Label not removed', () => request('DELETE', `/v1/conversations/${encodeURIComponent(id)}/labels/${encodeURIComponent(l.id)}`))}
          />
        </header>
        {error && <p class="error" role="alert">{error}</p>}
        {ticket === 'open' && (
          <TicketForm user={user} contact={conv.audienceExternalId} prefill={ticketPrefill({ contactId: conv.contactId, name: displayName(conv), conversationId: conv.id, messages, me: user })} onCreated={(t) => setTicket(t)} />
        )}
        {ticket !== 'open' && ticket !== 'closed' && (
          <p class="notice-inline" role="status">
            Ticket <a href={`/tickets/${encodeURIComponent(ticket)}`} data-route>{ticket}</a> created.
          </p>
        )}
        {focusSession !== null && focusSession !== conv.sessionId && (
          <p class="notice-inline" data-testid="earlier-session">
            An earlier session of this conversation. <a href={`/inbox/${encodeURIComponent(id)}`} data-route>Show the latest</a>
          </p>
        )}
        <MessageList
          messages={messages}
          me={user}
          channelId={conv.channelId}
          highlight={focusMessage}
          onReact={mineOrAdmin && conv.channelId !== null && !webChat && open ? (messageId, emoji) => void reply({ type: 'reaction', reaction: { messageId, emoji } }) : undefined}
        />
        {!(mineOrAdmin && conv.channelId !== null) && (
          <p class="muted composer-off">
            {conv.channelId === null ? 'The channel of this conversation no longer exists: nothing can be sent.' : conv.status === 'assigned' && !mineOrAdmin ? 'Another agent has this conversation.' : 'Take the conversation to reply.'} You can leave a private note for the team.
          </p>
        )}
        <Composer
          windowIsOpen={open}
          webChat={webChat}
          onFile={webChat ? sendFile : undefined}
          channelId={conv.channelId ?? ''}
          replyable={mineOrAdmin && conv.channelId !== null}
          busy={busy}
          onReply={reply}
          onTemplate={template}
          onNote={note}
          placeholders={{ 'contact.name': displayName(conv), 'contact.phone': conv.phone === null ? '' : `+${conv.phone}`, 'agent.name': user.name }}
          onTyping={() => {
            if (Date.now() - lastTyping.current > 3000) {
              lastTyping.current = Date.now();
              inbox.hint({ type: 'typing', conversationId: id });
            }
          }}
        />
      </section>
      {channel?.network === 'sandbox' && <CustomerPanel channelId={channel.id} phone={conv.phone ?? conv.userId ?? conv.id.slice(0, conv.id.indexOf(':'))} />}
    </div>
  );
}
