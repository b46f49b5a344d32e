import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { ChannelDetail } from '../api/types';
import { CopyField } from '../components/CopyButton';
import { useAction } from './useLoad';

type WidgetLook = { title?: string; greeting?: string; color: string; position: 'left' | 'right'; preChatForm: boolean };

/** The widget's look as the form has it now (saved or not). */
function lookOf(form: HTMLFormElement): WidgetLook {
  const f = new FormData(form);
  const text = (k: string) => String(f.get(k) ?? '').trim();
  return {
    ...(text('title') ? { title: text('title') } : {}),
    ...(text('greeting') ? { greeting: text('greeting') } : {}),
    color: text('color') || '#0b6bcb',
    position: text('position') === 'left' ? 'left' : 'right',
    preChatForm: f.get('preChatForm') === 'on',
  };
}

/**
 * A web chat's card: the snippet to paste on the site, the widget's look
 * (title, greeting, colour, position, pre-chat form) and allowed origins,
 * and the identity secret (a new one shown once). Beside them, a live
 * preview: the real widget in a frame of this origin, making no request (no
 * visitor is created), restyled as the fields change, before they are saved.
 */
export function WebChatSettings({ channel, onSaved }: { channel: ChannelDetail; onSaved: () => void }) {
  const action = useAction();
  const [secret, setSecret] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const w = channel.widget ?? {};
  const form = useRef<HTMLFormElement>(null);
  const frame = useRef<HTMLIFrameElement>(null);
  const push = () => {
    if (form.current === null) return;
    frame.current?.contentWindow?.postMessage({ type: 'switchboard-widget-preview', name: channel.name, widget: lookOf(form.current) }, location.origin);
  };
  useEffect(() => {
    // The frame says when its widget listens; it is then given the form's look.
    const ready = (e: MessageEvent) => {
      if (e.origin === location.origin && e.source === frame.current?.contentWindow && (e.data as { type?: string } | null)?.type === 'switchboard-widget-preview-ready') push();
    };
    window.addEventListener('message', ready);
    return () => window.removeEventListener('message', ready);
  }, [channel.id]);
  const snippet = `<script src="${location.origin}/widget.js" data-channel="${channel.id}" async></script>`;

  const save = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const text = (k: string) => String(f.get(k) ?? '').trim();
    const widget = lookOf(e.currentTarget as HTMLFormElement);
    const allowedOrigins = text('allowedOrigins').split(/[\s,]+/).filter(Boolean);
    setSaved(false);
    if (await action.run(() => ok(api.PATCH('/v1/channels/{channelId}/web-chat', { params: { path: { channelId: channel.id } }, body: { widget, allowedOrigins } })))) {
      setSaved(true);
      onSaved();
    }
  };
  const rotate = async () => {
    if (!confirm(`Make a new identity secret for ${channel.name}? Hashes made with the current one stop verifying at once.`)) return;
    let next: string | undefined;
    if (await action.run(async () => {
      next = (await ok(api.POST('/v1/channels/{channelId}/identity-secret', { params: { path: { channelId: channel.id } } }))).identitySecret;
    })) setSecret(next ?? null);
  };

  return (
    <div class="stack" data-testid="web-chat-settings">
      <CopyField label="Snippet: paste it before </body> on the pages of the allowed origins" value={snippet} testId="web-chat-snippet" />
      <div class="row wrap">
      <form class="stack grow" ref={form} onSubmit={(e) => void save(e)} onInput={push} onChange={push}>
        <label>
          Allowed origins (scheme, host and port; comma or space separated)
          <input name="allowedOrigins" defaultValue={(channel.allowedOrigins ?? []).join(', ')} placeholder="https://www.example.com" />
        </label>
        <div class="row wrap">
          <label>
            Title
            <input name="title" maxLength={60} defaultValue={w.title ?? ''} placeholder={channel.name} />
          </label>
          <label>
            Greeting
            <input name="greeting" maxLength={300} defaultValue={w.greeting ?? ''} placeholder="Hi! How can we help?" />
          </label>
          <label>
            Colour
            <input name="color" type="color" defaultValue={w.color ?? '#0b6bcb'} />
          </label>
          <label>
            Position
            <select name="position" defaultValue={w.position ?? 'right'}>
              <option value="right">Bottom right</option>
              <option value="left">Bottom left</option>
            </select>
          </label>
          <label class="row">
            <input name="preChatForm" type="checkbox" defaultChecked={w.preChatForm === true} /> Ask name and email first
          </label>
        </div>
        <div class="row wrap">
          <button type="submit" class="primary" disabled={action.busy}>Save widget settings</button>
          <button type="button" disabled={action.busy} onClick={() => void rotate()}>{channel.identityVerification ? 'Rotate identity secret' : 'Make an identity secret'}</button>
          {saved && <span role="status" class="muted small">Saved.</span>}
        </div>
      </form>
      <figure class="widget-preview">
        <iframe ref={frame} src={`/widget-test?preview&channel=${encodeURIComponent(channel.id)}`} title="Widget preview" data-testid="widget-preview" width="440" height="640" />
        <figcaption class="muted small">Preview: changes show here as you type, before you save. Nothing is sent.</figcaption>
      </figure>
      </div>
      {secret && (
        <div class="secret card" role="status">
          <p>Your server signs each signed-in user's id with it: <code>hex(HMAC-SHA256(secret, userId))</code> as <code>data-user-hash</code>, beside <code>data-user-id</code>. Copy it now: it is shown only this once.</p>
          <CopyField label="Identity secret" value={secret} testId="identity-secret" />
          <button type="button" onClick={() => setSecret(null)}>I have saved it</button>
        </div>
      )}
      {action.error && <p class="error" role="alert">{action.error}</p>}
    </div>
  );
}
