import { useEffect, useState } from 'preact/hooks';
import { api, ok, request } from '../api/client';
import { describeError } from '../api/errors';
import type { ChannelDetail, ChannelInfo } from '../api/types';
import { CustomerPanel } from '../components/CustomerPanel';

type Mode = 'whatsapp' | 'web_chat';

/**
 * Plays a customer, so the whole loop can be seen in one browser window: a
 * WhatsApp customer of a sandbox channel (a real, signed network webhook), or
 * a web chat visitor on a test page of this origin with the real widget.
 */
export function SimulatorScreen() {
  const [channels, setChannels] = useState<ChannelDetail[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [mode, setMode] = useState<Mode>('whatsapp');

  const load = () =>
    ok(api.GET('/v1/channels'))
      .then((r) => setChannels(r.channels))
      .catch((e: unknown) => setError(describeError(e)));
  useEffect(() => void load(), []);

  if (error) return <section class="panel"><p class="error" role="alert">{error}</p></section>;
  if (channels === null) return <section class="panel"><p class="muted">Loading…</p></section>;
  const sandbox = (channels as ChannelInfo[]).filter((c) => c.network === 'sandbox');
  const webChats = channels.filter((c) => c.kind === 'web_chat');

  return (
    <div class="simulator">
      <section class="panel">
        <h1>Customer simulator</h1>
        <div class="modes" role="tablist" aria-label="Who to play">
          <button type="button" role="tab" aria-selected={mode === 'whatsapp'} onClick={() => setMode('whatsapp')}>WhatsApp customer</button>
          <button type="button" role="tab" aria-selected={mode === 'web_chat'} onClick={() => setMode('web_chat')}>Web chat visitor</button>
        </div>
      </section>
      {mode === 'whatsapp' ? <WhatsAppSimulator channels={sandbox} /> : <WebChatSimulator channels={webChats} onChanged={() => void load()} />}
    </div>
  );
}

function WhatsAppSimulator({ channels }: { channels: ChannelInfo[] }) {
  const [channelId, setChannelId] = useState(channels[0]?.id ?? '');
  const [phone, setPhone] = useState('15550001111');
  const [name, setName] = useState('Test Customer');
  const [username, setUsername] = useState('');
  const [hidePhone, setHidePhone] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);
  // `phone`: how the simulated phone is named, their number or (a customer with a username) their business-scoped user id.
  const [started, setStarted] = useState<{ channelId: string; phone: string; name: string } | null>(null);
  /** A customer with a username is made on the sandbox network first: it gives them their BSUID. */
  const start = async () => {
    setFailed(null);
    const digits = phone.replace(/\D/g, '');
    if (username.trim() === '') return setStarted({ channelId, phone: digits, name: name.trim() });
    try {
      const made = await request<{ customer: { userId: string } }>('POST', `/v1/sandbox/channels/${encodeURIComponent(channelId)}/customers`, {
        ...(digits === '' ? {} : { phone: digits }),
        username: username.trim(),
        hidePhone,
        ...(name.trim() === '' ? {} : { profileName: name.trim() }),
      });
      setStarted({ channelId, phone: made.customer.userId, name: name.trim() });
    } catch (e) {
      setFailed(describeError(e));
    }
  };
  if (channels.length === 0) return <section class="panel"><p>There is no channel on the sandbox network in this organization.</p></section>;
  const channel = channels.find((c) => c.id === started?.channelId);
  return (
    <>
      <section class="panel">
        <p class="muted">Write as a customer of a sandbox channel: the message reaches the service as a real, signed network webhook.</p>
        <form class="row wrap" onSubmit={(e) => { e.preventDefault(); void start(); }}>
          <label>
            Channel
            <select value={channelId} onChange={(e) => setChannelId(e.currentTarget.value)} name="channel">
              {channels.map((c) => (
                <option key={c.id} value={c.id}>{c.name}</option>
              ))}
            </select>
          </label>
          <label>
            Customer phone (digits)
            <input name="phone" inputMode="numeric" pattern="[0-9]{6,15}" value={phone} onInput={(e) => setPhone(e.currentTarget.value)} required={username.trim() === ''} />
          </label>
          <label>
            WhatsApp username (optional)
            <input name="username" value={username} maxLength={35} onInput={(e) => setUsername(e.currentTarget.value)} />
          </label>
          <label class="check">
            <input type="checkbox" name="hidePhone" checked={hidePhone} disabled={username.trim() === ''} onChange={(e) => setHidePhone(e.currentTarget.checked)} />
            Hide the number
          </label>
          <label>
            Profile name
            <input name="profile" value={name} onInput={(e) => setName(e.currentTarget.value)} maxLength={100} />
          </label>
          <button type="submit" class="primary">Open the phone</button>
        </form>
        {failed && <p class="error" role="alert">{failed}</p>}
        {started && channel?.phoneNumberId && (
          <p>
            In the inbox this is <a href={`/inbox/${encodeURIComponent(`${started.phone}:${channel.phoneNumberId}`)}`} data-route>conversation {/^\d/.test(started.phone) ? `+${started.phone}` : started.phone}</a>.
          </p>
        )}
      </section>
      {started && <CustomerPanel key={`${started.channelId}/${started.phone}`} channelId={started.channelId} phone={started.phone} profileName={started.name || undefined} />}
    </>
  );
}

/**
 * A web chat's visitor: the real widget on a test page served by this
 * service (`/widget-test`), so it talks to the channel as on the business's
 * site, origin check included: the channel must allow this dashboard's
 * origin, which an admin can add from here.
 */
function WebChatSimulator({ channels, onChanged }: { channels: ChannelDetail[]; onChanged: () => void }) {
  const [channelId, setChannelId] = useState(channels[0]?.id ?? '');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (channels.length === 0) return <section class="panel"><p>There is no web chat channel in this organization: an admin makes one in Settings → Channels.</p></section>;
  const channel = channels.find((c) => c.id === channelId) ?? channels[0]!;
  const here = location.origin;
  const allowed = (channel.allowedOrigins ?? []).includes(here);
  const allow = async () => {
    setBusy(true);
    setError(null);
    try {
      await ok(api.PATCH('/v1/channels/{channelId}/web-chat', { params: { path: { channelId: channel.id } }, body: { allowedOrigins: [...(channel.allowedOrigins ?? []), here] } }));
      onChanged();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel stack">
      <p class="muted">Write as a visitor of your site: below is a test page with the real widget. Its conversation appears in the inbox like any other.</p>
      <label>
        Web chat
        <select value={channel.id} onChange={(e) => setChannelId(e.currentTarget.value)} name="webchat">
          {channels.map((c) => (
            <option key={c.id} value={c.id}>{c.name}</option>
          ))}
        </select>
      </label>
      {allowed ? (
        <iframe key={channel.id} class="simulator-page" src={`/widget-test?channel=${encodeURIComponent(channel.id)}`} title="Test page with the web chat widget" data-testid="web-chat-test-page" />
      ) : (
        <div class="stack">
          <p>The widget answers only on the channel's allowed origins, and the test page is on this dashboard's origin, <code>{here}</code>, which {channel.name} does not allow.</p>
          <div>
            <button type="button" class="primary" disabled={busy} onClick={() => void allow()}>Allow {here} for this channel</button>
          </div>
        </div>
      )}
      {error && <p class="error" role="alert">{error}</p>}
    </section>
  );
}
