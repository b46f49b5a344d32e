import { useEffect, useState } from 'preact/hooks';
import { request } from '../api/client';
import type { CannedReply, ReplyMessage, TemplateSend } from '../api/types';
import { fillPlaceholders, type CannedPlaceholder } from '../../../src/domain/canned-replies';
import { TemplatePicker } from './TemplatePicker';

type Mode = 'text' | 'buttons' | 'media' | 'file' | 'location' | 'contact' | 'template' | 'note';

const MODE_LABELS: Record<Mode, string> = { text: 'Text', buttons: 'Buttons', media: 'Media', file: 'File', location: 'Location', contact: 'Contact', template: 'Template', note: 'Note' };

/** The `/code` being typed just before the caret (at the start or after a space), or null. */
function slashCode(text: string, caret: number): { start: number; code: string } | null {
  const m = /(^|\s)\/([A-Za-z0-9_-]*)$/.exec(text.slice(0, caret));
  return m ? { start: m.index + m[1]!.length, code: m[2]!.toLowerCase() } : null;
}

/**
 * What the agent may send now, and nothing else: free text, reply buttons,
 * media, a location or a contact card while the 24-hour window is open; outside it an approved template
 * with its variables. Typing `/` and a short code offers the organization's
 * canned replies; choosing one puts its text in place of the code, with its
 * placeholders filled from `placeholders`. With `onNote`, a Note mode writes a
 * private note for the team instead (the only mode when `replyable` is
 * false: a conversation the agent does not hold).
 */
export function Composer({ windowIsOpen, channelId, onReply, onTemplate, onTyping, busy, placeholders = {}, onNote, replyable = true, webChat = false, onFile }: {
  windowIsOpen: boolean;
  /** A web chat takes text and files, at any time (no 24-hour window, no templates). */
  webChat?: boolean;
  /** Sends a picture or document (a web chat): uploaded for the conversation, then replied with. */
  onFile?: (f: { data: string; mimeType: string; filename: string; caption?: string }) => Promise<boolean>;
  channelId: string;
  onNote?: (text: string) => Promise<boolean>;
  replyable?: boolean;
  onReply: (m: ReplyMessage) => Promise<boolean>;
  onTemplate: (t: TemplateSend) => Promise<boolean>;
  onTyping: () => void;
  busy: boolean;
  placeholders?: Partial<Record<CannedPlaceholder, string>>;
}) {
  const [mode, setMode] = useState<Mode>('text');
  const [text, setText] = useState('');
  const [buttons, setButtons] = useState(['', '', '']);
  const [mediaType, setMediaType] = useState<'image' | 'video' | 'audio' | 'document'>('image');
  const [url, setUrl] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [fileKey, setFileKey] = useState(0);
  const [place, setPlace] = useState({ latitude: '', longitude: '', name: '', address: '' });
  const [card, setCard] = useState({ name: '', phone: '', company: '' });
  const [canned, setCanned] = useState<CannedReply[]>([]);
  const [slash, setSlash] = useState<{ start: number; code: string; end: number } | null>(null);
  const [pick, setPick] = useState(0);
  useEffect(() => {
    // Fetched when a composer opens, so a reply an admin just added is there; without it the composer works as before.
    request<{ cannedReplies: CannedReply[] }>('GET', '/v1/canned-replies')
      .then((r) => setCanned(r.cannedReplies))
      .catch(() => undefined);
  }, []);
  const matches = slash === null ? [] : canned.filter((c) => c.shortCode.startsWith(slash.code)).slice(0, 8);
  const suggesting = matches.length > 0;
  const follow = (el: HTMLTextAreaElement) => {
    const at = slashCode(el.value, el.selectionStart ?? el.value.length);
    setSlash(at === null ? null : { ...at, end: el.selectionStart ?? el.value.length });
    if (at?.code !== slash?.code) setPick(0);
  };
  const insert = (c: CannedReply, el: HTMLTextAreaElement | null) => {
    if (slash === null) return;
    const filled = fillPlaceholders(c.text, placeholders);
    const next = text.slice(0, slash.start) + filled + text.slice(slash.end);
    setText(next.slice(0, 4096));
    setSlash(null);
    if (el) {
      const caret = slash.start + filled.length;
      // After the render that puts the text in: the caret goes to the end of what was inserted.
      requestAnimationFrame(() => {
        el.focus();
        el.setSelectionRange(caret, caret);
      });
    }
  };
  const noting = onNote !== undefined && (mode === 'note' || !replyable);
  const current: Mode = noting ? 'note' : webChat ? (mode === 'file' && onFile ? 'file' : 'text') : windowIsOpen ? mode : 'template';
  const modes: Mode[] = [...(!replyable ? [] : webChat ? (onFile ? (['text', 'file'] as Mode[]) : (['text'] as Mode[])) : windowIsOpen ? (['text', 'buttons', 'media', 'location', 'contact', 'template'] as Mode[]) : (['template'] as Mode[])), ...(onNote ? (['note'] as Mode[]) : [])];

  const send = async (e: Event) => {
    e.preventDefault();
    if (current === 'note') {
      if (await onNote!(text.trim())) setText('');
      return;
    }
    if (current === 'file') {
      if (file === null || !onFile) return;
      const data = await new Promise<string>((resolve, reject) => {
        const r = new FileReader();
        r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
        r.onerror = () => reject(new Error('unreadable'));
        r.readAsDataURL(file);
      });
      if (await onFile({ data, mimeType: file.type, filename: file.name, ...(text.trim() ? { caption: text.trim() } : {}) })) {
        setText('');
        setFile(null);
        setFileKey((k) => k + 1);
      }
      return;
    }
    let m: ReplyMessage;
    if (current === 'text') m = { type: 'text', text: text.trim() };
    else if (current === 'buttons') {
      const titles = buttons.map((b) => b.trim()).filter((b) => b !== '');
      m = { type: 'buttons', interactive: { body: { text: text.trim() }, buttons: titles.map((title, i) => ({ id: `b${i + 1}`, title })) } };
    } else if (current === 'location') {
      const optional = (v: string) => (v.trim() === '' ? undefined : v.trim());
      m = { type: 'location', location: { latitude: Number(place.latitude), longitude: Number(place.longitude), name: optional(place.name), address: optional(place.address) } };
    } else if (current === 'contact') {
      const phone = card.phone.trim();
      m = { type: 'contacts', contacts: [{ name: { formatted_name: card.name.trim() }, ...(phone ? { phones: [{ phone, ...(/^\+?[0-9 ()-]+$/.test(phone) ? { wa_id: phone.replace(/\D/g, '') } : {}) }] } : {}), ...(card.company.trim() ? { org: { company: card.company.trim() } } : {}) }] };
    } else m = { type: 'media', media: { type: mediaType, [mediaType]: { link: url.trim(), ...(text.trim() ? { caption: text.trim() } : {}) } } };
    if (await onReply(m)) {
      setText('');
      setUrl('');
      setButtons(['', '', '']);
      setPlace({ latitude: '', longitude: '', name: '', address: '' });
      setCard({ name: '', phone: '', company: '' });
    }
  };

  const buttonCount = buttons.filter((b) => b.trim() !== '').length;
  const coordinate = (v: string, limit: number) => v.trim() !== '' && Number.isFinite(Number(v)) && Math.abs(Number(v)) <= limit;
  const canSend =
    current === 'text' || current === 'note'
      ? text.trim() !== ''
      : current === 'file'
        ? file !== null
      : current === 'buttons'
        ? text.trim() !== '' && buttonCount > 0
        : current === 'location'
          ? coordinate(place.latitude, 90) && coordinate(place.longitude, 180)
          : current === 'contact'
            ? card.name.trim() !== ''
            : url.trim() !== '';

  return (
    <div class={`composer${current === 'note' ? ' noting' : ''}`} data-testid="composer">
      <div class="modes" role="tablist" aria-label="Message kind">
        {modes.map((m) => (
          <button key={m} type="button" role="tab" aria-selected={current === m} onClick={() => setMode(m)}>
            {MODE_LABELS[m]}
          </button>
        ))}
      </div>
      {!windowIsOpen && current !== 'note' && <p class="muted">The customer has not written in the last 24 hours: only an approved template can reach them.</p>}
      {current === 'note' && <p class="muted">A private note: your team sees it in the conversation, the customer never does.</p>}
      {current === 'template' ? (
        <TemplatePicker channelId={channelId} busy={busy} onSend={(t) => void onTemplate(t)} />
      ) : current === 'location' || current === 'contact' ? (
        <form onSubmit={send}>
          {current === 'location' ? (
            <fieldset class="row">
              <legend>A place the customer can open on their map</legend>
              <label>
                Latitude
                <input inputMode="decimal" required value={place.latitude} placeholder="52.5219" onInput={(e) => setPlace({ ...place, latitude: e.currentTarget.value })} />
              </label>
              <label>
                Longitude
                <input inputMode="decimal" required value={place.longitude} placeholder="13.4132" onInput={(e) => setPlace({ ...place, longitude: e.currentTarget.value })} />
              </label>
              <label class="grow">
                Place name (optional)
                <input maxLength={1000} value={place.name} onInput={(e) => setPlace({ ...place, name: e.currentTarget.value })} />
              </label>
              <label class="grow">
                Address (optional)
                <input maxLength={1000} value={place.address} onInput={(e) => setPlace({ ...place, address: e.currentTarget.value })} />
              </label>
            </fieldset>
          ) : (
            <fieldset class="row">
              <legend>A contact card</legend>
              <label class="grow">
                Name
                <input required maxLength={1000} value={card.name} onInput={(e) => setCard({ ...card, name: e.currentTarget.value })} />
              </label>
              <label>
                Phone (optional)
                <input type="tel" maxLength={100} value={card.phone} placeholder="+49 151 2345678" onInput={(e) => setCard({ ...card, phone: e.currentTarget.value })} />
              </label>
              <label>
                Company (optional)
                <input maxLength={1000} value={card.company} onInput={(e) => setCard({ ...card, company: e.currentTarget.value })} />
              </label>
            </fieldset>
          )}
          <button type="submit" class="primary" disabled={busy || !canSend}>
            Send
          </button>
        </form>
      ) : (
        <form onSubmit={send}>
          {current === 'file' && (
            <label>
              Picture or document (PNG, JPEG, GIF, WebP, PDF, text, Word, Excel, PowerPoint)
              <input key={fileKey} type="file" name="file" accept="image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain,.docx,.xlsx,.pptx" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
            </label>
          )}
          {current === 'media' && (
            <div class="row">
              <label>
                Kind
                <select value={mediaType} onChange={(e) => setMediaType(e.currentTarget.value as typeof mediaType)}>
                  <option value="image">image</option>
                  <option value="video">video</option>
                  <option value="audio">audio</option>
                  <option value="document">document</option>
                </select>
              </label>
              <label class="grow">
                Link (https)
                <input type="url" value={url} required placeholder="https://…" onInput={(e) => setUrl(e.currentTarget.value)} />
              </label>
            </div>
          )}
          <label>
            {current === 'media' || current === 'file' ? 'Caption (optional)' : current === 'buttons' ? 'Question' : current === 'note' ? 'Note' : 'Message'}
            <textarea
              name="message"
              rows={2}
              value={text}
              maxLength={4096}
              placeholder={canned.length > 0 ? 'Type / for a canned reply' : undefined}
              aria-controls={suggesting ? 'canned-replies' : undefined}
              aria-activedescendant={suggesting ? `canned-${matches[Math.min(pick, matches.length - 1)]!.id}` : undefined}
              onInput={(e) => {
                setText(e.currentTarget.value);
                follow(e.currentTarget);
                onTyping();
              }}
              onClick={(e) => follow(e.currentTarget)}
              onKeyDown={(e) => {
                if (suggesting) {
                  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
                    e.preventDefault();
                    setPick((p) => (p + (e.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length);
                    return;
                  }
                  if (e.key === 'Enter' || e.key === 'Tab') {
                    e.preventDefault();
                    insert(matches[Math.min(pick, matches.length - 1)]!, e.currentTarget);
                    return;
                  }
                  if (e.key === 'Escape') {
                    e.preventDefault();
                    setSlash(null);
                    return;
                  }
                }
                if (e.key === 'Enter' && !e.shiftKey && (current === 'text' || current === 'note') && canSend) {
                  e.preventDefault();
                  (e.currentTarget.form as HTMLFormElement).requestSubmit();
                }
              }}
            />
          </label>
          {suggesting && (
            <ul id="canned-replies" class="canned-list" role="listbox" aria-label="Canned replies">
              {matches.map((c, i) => (
                <li
                  key={c.id}
                  id={`canned-${c.id}`}
                  role="option"
                  aria-selected={i === Math.min(pick, matches.length - 1)}
                  onMouseDown={(e) => {
                    // Keeps the focus (and the caret) in the message while choosing.
                    e.preventDefault();
                    insert(c, (e.currentTarget.closest('form') as HTMLFormElement | null)?.querySelector('textarea') ?? null);
                  }}
                >
                  <strong>/{c.shortCode}</strong> <span class="muted">{fillPlaceholders(c.text, placeholders).slice(0, 90)}</span>
                </li>
              ))}
            </ul>
          )}
          {current === 'buttons' && (
            <fieldset class="row">
              <legend>Reply buttons (up to 3, 20 characters each)</legend>
              {buttons.map((b, i) => (
                <input key={i} aria-label={`Button ${i + 1}`} maxLength={20} value={b} onInput={(e) => setButtons(buttons.map((x, j) => (j === i ? e.currentTarget.value : x)))} />
              ))}
            </fieldset>
          )}
          <button type="submit" class="primary" disabled={busy || !canSend}>
            {current === 'note' ? 'Add note' : 'Send'}
          </button>
        </form>
      )}
    </div>
  );
}
