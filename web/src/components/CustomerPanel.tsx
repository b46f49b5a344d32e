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
}

const POLL_MS = 1500;

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

  return (
    <aside class="customer-panel" aria-label="Customer simulator" data-testid="customer-panel">
      <h2>Customer's phone <span class="muted">+{phone}</span></h2>
      <ol class="phone">
        {messages.map((m) => (
          <li key={m.id} class={m.direction === 'from_customer' ? 'mine' : 'theirs'} data-direction={m.direction}>
            <p>{m.text ?? `(${m.type})`}</p>
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
      </form>
    </aside>
  );
}
