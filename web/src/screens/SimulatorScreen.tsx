import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { describeError } from '../api/errors';
import type { ChannelInfo } from '../api/types';
import { CustomerPanel } from '../components/CustomerPanel';

/** Plays a customer on a sandbox channel, so the whole loop can be seen in one browser window. */
export function SimulatorScreen() {
  const [channels, setChannels] = useState<ChannelInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [channelId, setChannelId] = useState('');
  const [phone, setPhone] = useState('15550001111');
  const [name, setName] = useState('Test Customer');
  const [started, setStarted] = useState<{ channelId: string; phone: string; name: string } | null>(null);

  useEffect(() => {
    ok(api.GET('/v1/channels'))
      .then((r) => {
        const sandbox = (r.channels as ChannelInfo[]).filter((c) => c.network === 'sandbox');
        setChannels(sandbox);
        if (sandbox[0]) setChannelId(sandbox[0].id);
      })
      .catch((e: unknown) => setError(describeError(e)));
  }, []);

  if (error) return <section class="panel"><p class="error" role="alert">{error}</p></section>;
  if (channels === null) return <section class="panel"><p class="muted">Loading…</p></section>;
  if (channels.length === 0) return <section class="panel"><h1>Customer simulator</h1><p>There is no channel on the sandbox network in this organization.</p></section>;
  const channel = channels.find((c) => c.id === started?.channelId);

  return (
    <div class="simulator">
      <section class="panel">
        <h1>Customer simulator</h1>
        <p class="muted">Write as a customer of a sandbox channel: the message reaches the service as a real, signed network webhook.</p>
        <form class="row wrap" onSubmit={(e) => { e.preventDefault(); setStarted({ channelId, phone: phone.replace(/\D/g, ''), name: name.trim() }); }}>
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
            <input name="phone" inputMode="numeric" pattern="[0-9]{6,15}" value={phone} onInput={(e) => setPhone(e.currentTarget.value)} required />
          </label>
          <label>
            Profile name
            <input name="profile" value={name} onInput={(e) => setName(e.currentTarget.value)} maxLength={100} />
          </label>
          <button type="submit" class="primary">Open the phone</button>
        </form>
        {started && channel?.phoneNumberId && (
          <p>
            In the inbox this is <a href={`/inbox/${encodeURIComponent(`${started.phone}:${channel.phoneNumberId}`)}`} data-route>conversation +{started.phone}</a>.
          </p>
        )}
      </section>
      {started && <CustomerPanel key={`${started.channelId}/${started.phone}`} channelId={started.channelId} phone={started.phone} profileName={started.name || undefined} />}
    </div>
  );
}
