import { useEffect, useRef } from 'preact/hooks';
import type { MessageShape, SessionUser } from '../api/types';
import { userName } from '../directory';
import { MessageStatus } from './MessageStatus';

// One formatter for every message: `toLocaleTimeString(…, options)` builds a new one per call,
// which costs seconds over a long conversation.
const timeOfDay = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/** Who sent a message, as an agent reads it: customer, bot/API, template, an agent, the system. */
export function senderLabel(m: MessageShape, me: SessionUser): string {
  const template = m.content.type === 'template';
  switch (m.sender) {
    case 'contact':
      return 'Customer';
    case 'agent':
      return `${userName(m.agentId, me)}${template ? ' · template' : ''}`;
    case 'bot':
      return template ? 'Template (API)' : 'Bot (API)';
    default:
      return 'System';
  }
}

/** The parts of a message's content the view shows (the API keeps the rest of each type's fields loose). */
interface ShownContent {
  type: string;
  text?: string;
  mediaUrl?: string;
  mediaId?: string;
  caption?: string;
  filename?: string;
  template?: { name: string };
  buttons?: { id: string; title: string }[];
  buttonId?: string;
  description?: string;
  location?: { latitude: number; longitude: number; name?: string; address?: string; url?: string };
  contacts?: ContactCard[];
  reaction?: { messageId: string; emoji: string };
  referral?: { headline?: string; body?: string; source_url?: string; source_type?: string };
  referredProduct?: { catalogId: string; productRetailerId: string };
  originalType?: string;
}

/** A shared contact card, as the network gives it (the fields shown here). */
interface ContactCard {
  name?: { formatted_name?: string };
  org?: { company?: string };
  phones?: { phone?: string; wa_id?: string; type?: string }[];
  emails?: { email?: string }[];
}

/** The types whose own block says what `text` would (the gist is for lists and search). */
const OWN_BLOCK = new Set(['location', 'contacts', 'reaction', 'unsupported']);

/** A shared location: the place, its coordinates and a map of them. */
function SharedLocation({ loc }: { loc: NonNullable<ShownContent['location']> }) {
  const map = `https://www.openstreetmap.org/?mlat=${loc.latitude}&mlon=${loc.longitude}#map=17/${loc.latitude}/${loc.longitude}`;
  return (
    <div class="location" data-testid="location">
      <span class="tag">location</span>
      {loc.name && <strong>{loc.name}</strong>}
      {loc.address && <p>{loc.address}</p>}
      <p>
        <a href={map} target="_blank" rel="noreferrer noopener">
          {loc.latitude}, {loc.longitude} on the map
        </a>
        {loc.url && (
          <>
            {' · '}
            <a href={loc.url} target="_blank" rel="noreferrer noopener">
              {loc.url}
            </a>
          </>
        )}
      </p>
    </div>
  );
}

function ContactCards({ cards }: { cards: ContactCard[] }) {
  return (
    <ul class="contact-cards" aria-label="contact cards">
      {cards.map((card, i) => (
        <li key={i} data-testid="contact-card">
          <span class="tag">contact</span> <strong>{card.name?.formatted_name ?? 'Unnamed contact'}</strong>
          {card.org?.company && <span class="muted"> · {card.org.company}</span>}
          {(card.phones ?? []).map((ph, j) =>
            ph.phone || ph.wa_id ? (
              <p key={`p${j}`}>
                <a href={`tel:${(ph.phone ?? `+${ph.wa_id ?? ''}`).replace(/[^\d+]/g, '')}`}>{ph.phone ?? `+${ph.wa_id ?? ''}`}</a>
                {ph.type && <span class="muted"> ({ph.type.toLowerCase()})</span>}
              </p>
            ) : null,
          )}
          {(card.emails ?? []).map((e, j) => (e.email ? <p key={`e${j}`}>{e.email}</p> : null))}
        </li>
      ))}
    </ul>
  );
}

/** A reaction, as a line naming the message reacted to (its text, when that message is in the thread). */
function Reaction({ r, target }: { r: NonNullable<ShownContent['reaction']>; target: MessageShape | undefined }) {
  const gist = target?.content.text;
  const what = gist ? `“${gist.length > 60 ? `${gist.slice(0, 60)}…` : gist}”` : 'a message';
  return (
    <p class="reaction" data-testid="reaction">
      {r.emoji ? (
        <>
          Reacted <span class="emoji">{r.emoji}</span> to {what}
        </>
      ) : (
        <>Took back the reaction to {what}</>
      )}
    </p>
  );
}

/** A file the customer sent, through the service (the network's own URL needs the channel's token). */
function ReceivedFile({ type, url, filename }: { type: string; url: string; filename?: string | undefined }) {
  if (type === 'image' || type === 'sticker') {
    return (
      <a href={url} target="_blank" rel="noreferrer noopener" class="received-file">
        <img src={url} alt={`${type} from the customer`} loading="lazy" />
      </a>
    );
  }
  if (type === 'audio') return <audio controls preload="none" src={url} />;
  if (type === 'video') return <video controls preload="metadata" src={url} />;
  return (
    <a href={url} target="_blank" rel="noreferrer noopener" download={filename}>
      {filename ?? 'Download the document'}
    </a>
  );
}

function Content({ m, channelId, byNetworkId }: { m: MessageShape; channelId: string | null; byNetworkId: Map<string, MessageShape> }) {
  const c = m.content as ShownContent;
  const own = OWN_BLOCK.has(c.type);
  const media = ['image', 'video', 'audio', 'document', 'sticker'].includes(c.type);
  const received = media && c.mediaId !== undefined && channelId !== null ? `/v1/channels/${encodeURIComponent(channelId)}/media/${encodeURIComponent(c.mediaId)}` : null;
  return (
    <div class="content">
      {c.type === 'template' && c.template && <span class="tag">template {c.template.name}</span>}
      {received !== null && <ReceivedFile type={c.type} url={received} filename={c.filename} />}
      {media && received === null && (
        <span class="tag">
          {c.type}
          {c.mediaUrl ? (
            <>
              {' '}
              <a href={c.mediaUrl} target="_blank" rel="noreferrer noopener">
                {c.filename ?? 'open'}
              </a>
            </>
          ) : null}
        </span>
      )}
      {c.type === 'location' && c.location && <SharedLocation loc={c.location} />}
      {c.type === 'contacts' && c.contacts && <ContactCards cards={c.contacts} />}
      {c.type === 'reaction' && c.reaction && <Reaction r={c.reaction} target={byNetworkId.get(c.reaction.messageId)} />}
      {c.type === 'unsupported' && (
        <p class="unsupported" data-testid="unsupported">
          Unsupported message type {c.originalType ?? 'unknown'}
          {c.text ? `: ${c.text}` : ' (kept whole in the API’s content.raw)'}
        </p>
      )}
      {c.type === 'button_reply' && <span class="tag">tapped {c.buttonId ? 'a reply' : 'a template button'}</span>}
      {c.referral && (
        <p class="referral muted" data-testid="referral">
          From {c.referral.source_type === 'post' ? 'a post' : 'an ad'}
          {c.referral.headline ? `: ${c.referral.headline}` : ''}
          {c.referral.body ? ` — ${c.referral.body}` : ''}
          {c.referral.source_url && (
            <>
              {' '}
              <a href={c.referral.source_url} target="_blank" rel="noreferrer noopener">
                open
              </a>
            </>
          )}
        </p>
      )}
      {c.referredProduct && (
        <p class="muted" data-testid="referred-product">
          About product {c.referredProduct.productRetailerId} (catalog {c.referredProduct.catalogId})
        </p>
      )}
      {c.text !== undefined && !own && <p>{c.text}</p>}
      {c.description !== undefined && <p class="muted">{c.description}</p>}
      {c.caption !== undefined && c.text === undefined && <p>{c.caption}</p>}
      {c.buttons && c.buttons.length > 0 && (
        <ul class="buttons" aria-label="buttons">
          {c.buttons.map((b) => (
            <li key={b.id}>{b.title}</li>
          ))}
        </ul>
      )}
      {c.text === undefined && !media && !own && c.type !== 'template' && <p class="muted">({c.type})</p>}
    </div>
  );
}

type SystemEntry = NonNullable<MessageShape['system']>;

/** Who did what a system entry records, with names for the ids the dashboard knows. */
function actorText(by: SystemEntry['by'], me: SessionUser): string {
  switch (by?.type) {
    case 'agent':
      return userName(by.userId, me);
    case 'bot':
      return 'the bot';
    case 'api':
      return by.keyName ? `the API (key ${by.keyName})` : 'the API';
    case 'automation':
      return 'automation';
    case 'contact':
      return 'the customer';
    default:
      return 'someone';
  }
}

/** A system entry in words, as an agent reads it (the entry's own text names ids). */
export function systemText(e: SystemEntry, me: SessionUser): string {
  const by = actorText(e.by, me);
  switch (e.event) {
    case 'handover_requested':
      return `Handover requested by ${by}`;
    case 'taken':
      return `Taken by ${by}`;
    case 'transferred':
      return `Transferred from ${userName(e.from, me)} to ${userName(e.to, me)}`;
    case 'handed_back':
      return `Handed back to the bot by ${by}`;
    case 'resolved':
      return `Resolved by ${by}`;
    case 'reopened':
      return e.by?.type === 'contact' ? 'Reopened: the customer wrote again' : `Reopened by ${by}`;
    case 'ticket_created':
      return `Ticket ${e.ticketId ?? ''} created by ${by}${e.subject ? `: ${e.subject}` : ''}`;
    case 'assigned':
      if (e.reason === 'auto_assign') return `Assigned automatically to ${userName(e.to, me)}`;
      return `Assigned to ${userName(e.to, me)} by ${by}${e.ruleName ? ` (rule “${e.ruleName}”)` : ''}`;
    case 'team_assigned':
      return `Queued for team ${e.teamId ?? ''} by ${by}${e.ruleName ? ` (rule “${e.ruleName}”)` : ''}`;
    case 'rule_fired':
      return `Automation rule “${e.ruleName ?? e.ruleId ?? ''}” fired`;
    case 'contact_merged':
      return `Merged with ${e.from ?? 'another contact'}: the same person, found by another of their ids`;
    case 'automation_failed':
      return `Automation rule “${e.ruleName ?? e.ruleId ?? ''}” could not ${e.action === 'auto_reply' ? 'send its auto-reply' : 'carry out an action'}: ${e.reason ?? 'unknown reason'}`;
    case 'waiting_for_opening':
      return `Outside business hours: queued for an agent at the next opening${e.until ? ` (${new Date(e.until).toLocaleString()})` : ''}`;
    case 'sla_breached':
      return `Response-time target missed: the ${e.target === 'next_response' ? 'next' : 'first'} response was due${e.until ? ` at ${new Date(e.until).toLocaleString()}` : ''}`;
    case 'label_added':
      return `Label “${e.label ?? ''}” added by ${by}${e.ruleName ? ` (rule “${e.ruleName}”)` : ''}`;
    case 'priority_set':
      return `Ticket ${e.ticketId ?? ''} priority set to ${e.priority ?? ''} by ${by}${e.ruleName ? ` (rule “${e.ruleName}”)` : ''}`;
  }
}

/** A conversation's messages, oldest first, kept scrolled to the newest; or to `highlight` (a message's `_id`), marked, while it is given. */
export function MessageList({
  messages,
  me,
  channelId,
  highlight = null,
  onReact,
}: {
  messages: MessageShape[];
  me: SessionUser;
  channelId: string | null;
  highlight?: string | null;
  /** Given when the agent may react now (holds the conversation, window open, a chat-network channel): a 👍 on each customer message. */
  onReact?: (messageId: string, emoji: string) => void;
}) {
  const end = useRef<HTMLLIElement>(null);
  const list = useRef<HTMLOListElement>(null);
  const last = messages[messages.length - 1]?._id;
  const found = highlight !== null && messages.some((m) => m._id === highlight);
  // Reactions name the network's id of the message reacted to; the newest reaction of each side shows on that message too.
  const byNetworkId = new Map<string, MessageShape>();
  const reactions = { inbound: new Map<string, string>(), outbound: new Map<string, string>() };
  for (const m of messages) {
    if (m.messageId) byNetworkId.set(m.messageId, m);
    const r = (m.content as ShownContent).reaction;
    if (m.content.type === 'reaction' && r && m.direction !== 'internal') reactions[m.direction].set(r.messageId, r.emoji);
  }
  useEffect(() => {
    if (highlight === null) end.current?.scrollIntoView({ block: 'end' });
  }, [last, highlight]);
  useEffect(() => {
    if (found && highlight !== null) list.current?.querySelector(`[data-entry="${CSS.escape(highlight)}"]`)?.scrollIntoView({ block: 'center' });
  }, [found, highlight]);
  return (
    <ol class="messages" aria-label="Messages" data-testid="messages" ref={list}>
      {messages.map((m) =>
        m.system ? (
          <li key={m._id} class="system-entry" data-sender="system" data-event={m.system.event} data-entry={m._id}>
            <span>{systemText(m.system, me)}</span> <time dateTime={m.sentAt}>{timeOfDay.format(new Date(m.sentAt))}</time>
          </li>
        ) : m.note ? (
          <li key={m._id} class={`msg note${m._id === highlight ? ' highlight' : ''}`} data-sender="agent" data-note="true" data-entry={m._id}>
            <div class="from">
              <span class="sender">{userName(m.agentId, me)} · private note</span>
              <time dateTime={m.sentAt}>{timeOfDay.format(new Date(m.sentAt))}</time>
            </div>
            <div class="content">
              <p>{m.content.text}</p>
            </div>
          </li>
        ) : (
        <li key={m._id} class={`msg ${m.direction}${m._id === highlight ? ' highlight' : ''}`} data-sender={m.sender} data-message-id={m.messageId ?? undefined} data-entry={m._id} aria-current={m._id === highlight ? 'true' : undefined}>
          <div class="from">
            <span class="sender">{senderLabel(m, me)}</span>
            <time dateTime={m.sentAt}>{timeOfDay.format(new Date(m.sentAt))}</time>
          </div>
          <Content m={m} channelId={channelId} byNetworkId={byNetworkId} />
          {m.messageId && reactions.inbound.get(m.messageId) ? (
            <span class="reacted" data-testid="reacted" aria-label={`the customer reacted ${reactions.inbound.get(m.messageId)}`}>
              {reactions.inbound.get(m.messageId)}
            </span>
          ) : null}
          {m.messageId && reactions.outbound.get(m.messageId) ? (
            <span class="reacted mine" data-testid="reacted-by-agent" aria-label={`reacted ${reactions.outbound.get(m.messageId)}`}>
              {reactions.outbound.get(m.messageId)}
            </span>
          ) : null}
          {onReact && m.direction === 'inbound' && m.messageId && m.content.type !== 'reaction' ? (
            <button type="button" class="react" aria-pressed={reactions.outbound.get(m.messageId) === '👍'} onClick={() => onReact(m.messageId!, reactions.outbound.get(m.messageId!) === '👍' ? '' : '👍')}>
              {reactions.outbound.get(m.messageId) === '👍' ? 'Take back 👍' : 'React 👍'}
            </button>
          ) : null}
          <MessageStatus message={m} />
        </li>
        ),
      )}
      <li ref={end} class="end" aria-hidden="true" />
    </ol>
  );
}
