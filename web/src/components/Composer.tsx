import { useState } from 'preact/hooks';
import type { ReplyMessage, TemplateSend } from '../api/types';
import { TemplatePicker } from './TemplatePicker';

type Mode = 'text' | 'buttons' | 'media' | 'template';

/**
 * What the agent may send now, and nothing else: free text, reply buttons and
 * media while the 24-hour window is open; outside it an approved template
 * with its variables.
 */
export function Composer({ windowIsOpen, channelId, onReply, onTemplate, onTyping, busy }: {
  windowIsOpen: boolean;
  channelId: string;
  onReply: (m: ReplyMessage) => Promise<boolean>;
  onTemplate: (t: TemplateSend) => Promise<boolean>;
  onTyping: () => void;
  busy: boolean;
}) {
  const [mode, setMode] = useState<Mode>('text');
  const [text, setText] = useState('');
  const [buttons, setButtons] = useState(['', '', '']);
  const [mediaType, setMediaType] = useState<'image' | 'video' | 'audio' | 'document'>('image');
  const [url, setUrl] = useState('');
  const current: Mode = windowIsOpen ? mode : 'template';
  const modes: Mode[] = windowIsOpen ? ['text', 'buttons', 'media', 'template'] : ['template'];

  const send = async (e: Event) => {
    e.preventDefault();
    let m: ReplyMessage;
    if (current === 'text') m = { type: 'text', text: text.trim() };
    else if (current === 'buttons') {
      const titles = buttons.map((b) => b.trim()).filter((b) => b !== '');
      m = { type: 'buttons', interactive: { body: { text: text.trim() }, buttons: titles.map((title, i) => ({ id: `b${i + 1}`, title })) } };
    } else m = { type: 'media', media: { type: mediaType, [mediaType]: { link: url.trim(), ...(text.trim() ? { caption: text.trim() } : {}) } } };
    if (await onReply(m)) {
      setText('');
      setUrl('');
      setButtons(['', '', '']);
    }
  };

  const buttonCount = buttons.filter((b) => b.trim() !== '').length;
  const canSend = current === 'text' ? text.trim() !== '' : current === 'buttons' ? text.trim() !== '' && buttonCount > 0 : url.trim() !== '';

  return (
    <div class="composer" data-testid="composer">
      <div class="modes" role="tablist" aria-label="Message kind">
        {modes.map((m) => (
          <button key={m} type="button" role="tab" aria-selected={current === m} onClick={() => setMode(m)}>
            {m === 'text' ? 'Text' : m === 'buttons' ? 'Buttons' : m === 'media' ? 'Media' : 'Template'}
          </button>
        ))}
      </div>
      {!windowIsOpen && <p class="muted">The customer has not written in the last 24 hours: only an approved template can reach them.</p>}
      {current === 'template' ? (
        <TemplatePicker channelId={channelId} busy={busy} onSend={(t) => void onTemplate(t)} />
      ) : (
        <form onSubmit={send}>
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
            {current === 'media' ? 'Caption (optional)' : current === 'buttons' ? 'Question' : 'Message'}
            <textarea
              name="message"
              rows={2}
              value={text}
              maxLength={4096}
              onInput={(e) => {
                setText(e.currentTarget.value);
                onTyping();
              }}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !e.shiftKey && current === 'text' && canSend) {
                  e.preventDefault();
                  (e.currentTarget.form as HTMLFormElement).requestSubmit();
                }
              }}
            />
          </label>
          {current === 'buttons' && (
            <fieldset class="row">
              <legend>Reply buttons (up to 3, 20 characters each)</legend>
              {buttons.map((b, i) => (
                <input key={i} aria-label={`Button ${i + 1}`} maxLength={20} value={b} onInput={(e) => setButtons(buttons.map((x, j) => (j === i ? e.currentTarget.value : x)))} />
              ))}
            </fieldset>
          )}
          <button type="submit" class="primary" disabled={busy || !canSend}>
            Send
          </button>
        </form>
      )}
    </div>
  );
}
