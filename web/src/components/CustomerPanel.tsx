import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { describeError } from '../api/errors';

interface PhoneMessage {
  id: string;
  direction: 'to_customer' | 'from_customer';
  at: string;
  type: string;
  status?: string;
  text?: string;
  buttons?: { id: string; title: string }[];
  quickReplies?: { index: number; text: string }[];
  requestsContactInfo?: boolean;
  media?: { id: string; mimeType: string; filename?: string };
  template?: PhoneTemplate;
}

/** A template message as the customer's phone shows it (filled in by the sandbox network). */
interface PhoneTemplate {
  name: string;
  header?: { text: string } | { media: string; link?: string };
  body?: string;
  footer?: string;
  buttons: { type: string; text: string; url?: string; phoneNumber?: string; code?: string }[];
}

/** A template's header, footer and its buttons that are not quick replies (those are tapped below it). */
function TemplateParts({ t, children }: { t: PhoneTemplate; children: ComponentChildren }) {
  const h = t.header;
  const others = t.buttons.filter((b) => b.type !== 'quick_reply');
  return (
    <div class="template" data-template={t.name}>
      {h && 'text' in h && <p class="template-header">{h.text}</p>}
      {h && 'media' in h && <p class="tag">{h.link ? <a href={h.link} target="_blank" rel="noopener noreferrer">{h.media}</a> : h.media}</p>}
      {children}
      {t.footer && <p class="template-footer">{t.footer}</p>}
      {others.length > 0 && (
        <div class="template-buttons">
          {others.map((b, i) =>
            b.url ? (
              <a key={i} href={b.url} target="_blank" rel="noopener noreferrer">{b.text}</a>
            ) : b.code ? (
              <button key={i} type="button" title={b.code} onClick={() => void navigator.clipboard?.writeText(b.code!)}>{b.text}: {b.code}</button>
            ) : (
              <span key={i} class="tag">{b.text}{b.phoneNumber ? ` (${b.phoneNumber})` : ''}</span>
            ),
          )}
        </div>
      )}
    </div>
  );
}

const POLL_MS = 1500;
/** What the sandbox takes per file (SANDBOX_MEDIA_MAX_BYTES on the server). */
const MAX_FILE_BYTES = 128 * 1024;

type MediaKind = 'image' | 'video' | 'audio' | 'document';
interface PreparedFile {
  kind: MediaKind;
  mimeType: string;
  data: string;
  filename?: string;
}

function base64Of(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
    r.onerror = () => reject(r.error ?? new Error('could not read the file'));
    r.readAsDataURL(blob);
  });
}

/** A photo scaled down and re-encoded as JPEG until it fits what the sandbox takes. */
async function fittedPhoto(file: File): Promise<Blob> {
  const bitmap = await createImageBitmap(file);
  for (const [edge, quality] of [[1280, 0.82], [960, 0.75], [640, 0.7], [400, 0.6]] as const) {
    const scale = Math.min(1, edge / Math.max(bitmap.width, bitmap.height));
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(bitmap.width * scale));
    canvas.height = Math.max(1, Math.round(bitmap.height * scale));
    canvas.getContext('2d')?.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/jpeg', quality));
    if (blob !== null && blob.size <= MAX_FILE_BYTES) return blob;
  }
  throw new Error('this photo could not be made small enough for the sandbox');
}

/** The customer's file as the sandbox takes it: photos made to fit, other files as they are if small enough. */
async function prepare(file: File): Promise<PreparedFile> {
  const type = file.type || 'application/octet-stream';
  if (type.startsWith('image/')) {
    const fits = (type === 'image/jpeg' || type === 'image/png') && file.size <= MAX_FILE_BYTES;
    const blob = fits ? file : await fittedPhoto(file);
    return { kind: 'image', mimeType: fits ? type : 'image/jpeg', data: await base64Of(blob) };
  }
  if (file.size > MAX_FILE_BYTES) throw new Error(`the sandbox takes files up to ${MAX_FILE_BYTES / 1024} KiB (photos are scaled down for you)`);
  const kind: MediaKind = type.startsWith('video/') ? 'video' : type.startsWith('audio/') ? 'audio' : 'document';
  const out: PreparedFile = { kind, mimeType: type, data: await base64Of(file) };
  if (kind === 'document') out.filename = file.name;
  return out;
}

/**
 * The simulated customer's phone on a sandbox channel: what reached them, and
 * what they write or tap goes back to the service as a real inbound webhook.
 * The phone has no live feed, so it is polled while on screen.
 */
export function CustomerPanel({ channelId, phone, profileName }: { channelId: string; phone: string; profileName?: string }) {
  const [messages, setMessages] = useState<PhoneMessage[]>([]);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const path = { channelId, phone };

  const load = async () => {
    try {
      const r = await ok(api.GET('/v1/sandbox/channels/{channelId}/customers/{phone}/messages', { params: { path } }));
      setMessages(r.messages as PhoneMessage[]);
    } catch (e) {
      setError(describeError(e));
    }
  };

  useEffect(() => {
    void load();
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') void load();
    }, POLL_MS);
    return () => clearInterval(t);
  }, [channelId, phone]);

  const act = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      await load();
      return true;
    } catch (e) {
      setError(describeError(e));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const name = profileName ? { profileName } : {};
  const write = async (e: Event) => {
    e.preventDefault();
    const body = text.trim();
    if (body === '') return;
    if (await act(() => ok(api.POST('/v1/sandbox/channels/{channelId}/customers/{phone}/messages', { params: { path }, body: { text: body, ...name } })))) setText('');
  };

  const attach = async (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    let prepared: PreparedFile;
    try {
      prepared = await prepare(file);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      return;
    }
    const caption = text.trim() !== '' && prepared.kind !== 'audio' ? { caption: text.trim() } : {};
    const body = { ...prepared, ...caption, ...name };
    if (await act(() => ok(api.POST('/v1/sandbox/channels/{channelId}/customers/{phone}/media', { params: { path }, body })))) setText('');
  };

  return (
    <aside class="customer-panel" aria-label="Customer simulator" data-testid="customer-panel">
      <h2>Customer's phone <span class="muted">{/^\d/.test(phone) ? `+${phone}` : phone}</span></h2>
      <ol class="phone">
        {messages.map((m) => (
          <li key={m.id} class={m.direction === 'from_customer' ? 'mine' : 'theirs'} data-direction={m.direction}>
            {m.media && <p class="tag">{m.media.filename ?? m.type}</p>}
            {m.template ? (
              <TemplateParts t={m.template}>{m.template.body !== undefined && <p>{m.template.body}</p>}</TemplateParts>
            ) : (
              (m.text !== undefined || !m.media) && <p>{m.text ?? `(${m.type})`}</p>
            )}
            {m.buttons?.map((b) => (
              <button key={b.id} type="button" disabled={busy} onClick={() => void act(() => ok(api.POST('/v1/sandbox/channels/{channelId}/customers/{phone}/button-replies', { params: { path }, body: { messageId: m.id, buttonId: b.id, ...name } })))}>
                {b.title}
              </button>
            ))}
            {m.quickReplies?.map((q) => (
              <button key={q.index} type="button" disabled={busy} onClick={() => void act(() => ok(api.POST('/v1/sandbox/channels/{channelId}/customers/{phone}/quick-replies', { params: { path }, body: { messageId: m.id, index: q.index, ...name } })))}>
                {q.text}
              </button>
            ))}
            {m.requestsContactInfo && (
              <button type="button" disabled={busy} onClick={() => void act(() => ok(api.POST('/v1/sandbox/channels/{channelId}/customers/{phone}/contact-shares', { params: { path }, body: { messageId: m.id } })))}>
                Share my number
              </button>
            )}
            {m.direction === 'to_customer' && m.status && <span class="status">{m.status}</span>}
          </li>
        ))}
      </ol>
      {error && <p class="error" role="alert">{error}</p>}
      <form onSubmit={write} class="row">
        <label class="grow">
          Write as the customer
          <input name="customer-message" value={text} onInput={(e) => setText(e.currentTarget.value)} maxLength={4096} />
        </label>
        <button type="submit" disabled={busy || text.trim() === ''}>Send</button>
        <label class="button">
          Attach
          <input class="sr" type="file" name="customer-file" aria-label="Send a file as the customer" disabled={busy} onChange={(e) => void attach(e)} />
        </label>
      </form>
    </aside>
  );
}
