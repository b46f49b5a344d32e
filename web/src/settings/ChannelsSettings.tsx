import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { ChannelDetail, CreatedChannel, NewChannel, TemplateInfo } from '../api/types';
import { CopyField } from '../components/CopyButton';
import { NewChannelForm } from './NewChannelForm';
import { RoutingSettings, routingSummary } from './RoutingSettings';
import { WebChatSettings } from './WebChatSettings';
import { useAction, useLoad } from './useLoad';

/** What to show once after a change: a channel's webhook address, with a verify token that is never shown again. */
/** The part of a channel's card that is open: its templates, its web chat widget, or its routing. */
type Panel = 'templates' | 'widget' | 'routing';

interface Reveal {
  channel: ChannelDetail;
  note: string;
}

function kindLabel(c: ChannelDetail): string {
  if (c.kind === 'web_chat') return 'web chat';
  return c.network === 'sandbox' ? 'WhatsApp on the sandbox network' : 'WhatsApp';
}

/**
 * Channels and their templates: create a channel (sandbox number, real
 * WhatsApp number, web chat), each WhatsApp channel's webhook URL to copy (a
 * real number's verify token once, or a new one), each template's status and
 * variables, sync from the network; each channel's routing.
 */
export function ChannelsSettings() {
  const channels = useLoad(() => ok(api.GET('/v1/channels')).then((r) => r.channels));
  const action = useAction();
  const [open, setOpenState] = useState<{ id: string; panel: Panel } | null>(null);
  const isOpen = (id: string, panel: Panel) => open?.id === id && open.panel === panel;
  const toggle = (id: string, panel: Panel) => setOpenState(isOpen(id, panel) ? null : { id, panel });
  const [adding, setAdding] = useState(false);
  const [reveal, setReveal] = useState<Reveal | null>(null);

  const created = (c: CreatedChannel) => {
    const sync = c.templateSync;
    const templates = sync === undefined ? '' : sync.ok ? ` ${sync.synced ?? 0} templates synced from the network.` : ` The first template sync failed (${sync.error ?? 'unknown error'}): sync again once the number is set up.`;
    setReveal({ channel: c, note: `The channel ${c.name} was created.${templates}` });
    setAdding(false);
    setOpenState({ id: c.id, panel: c.kind === 'web_chat' ? 'widget' : 'templates' });
    channels.reload();
  };
  const newToken = async (c: ChannelDetail) => {
    if (!confirm(`Generate a new verify token for ${c.name}? The current one stops verifying the webhook at once.`)) return;
    let next: ChannelDetail | undefined;
    if (await action.run(async () => {
      next = await ok(api.POST('/v1/channels/{channelId}/verify-token', { params: { path: { channelId: c.id } } }));
    })) setReveal({ channel: next!, note: `A new verify token for ${c.name}.` });
  };

  return (
    <section class="panel" aria-labelledby="ch-title">
      <header class="row spread">
        <h1 id="ch-title">Channels & templates</h1>
        {!adding && <button type="button" class="primary" onClick={() => setAdding(true)}>New channel</button>}
      </header>
      {reveal && <Revealed reveal={reveal} onDone={() => setReveal(null)} />}
      {adding && <NewChannelForm onCreated={created} onCancel={() => setAdding(false)} create={(body: NewChannel) => ok(api.POST('/v1/channels', { body }))} />}
      {action.error && <p class="error" role="alert">{action.error}</p>}
      {channels.error && <p class="error" role="alert">{channels.error}</p>}
      {channels.data?.length === 0 && !adding && <p class="empty">This organization has no channel yet.</p>}
      <ul class="plain" data-testid="channels">
        {channels.data?.map((c) => (
          <li key={c.id}>
            <article class="card" data-channel={c.id}>
              <header class="row wrap spread">
                <div>
                  <strong>{c.name}</strong>
                  <div class="muted small">
                    {kindLabel(c)}
                    {c.displayPhoneNumber || c.phoneNumberId ? ` · +${c.displayPhoneNumber ?? c.phoneNumberId}` : ''} · <code>{c.id}</code>
                  </div>
                  {c.kind === 'web_chat' && <div class="muted small">Allowed origins: {c.allowedOrigins?.length ? c.allowedOrigins.join(', ') : 'none yet'}</div>}
                  <div class="muted small" data-testid="routing-summary">Routing: {routingSummary(c.routing)}</div>
                </div>
                <div class="row wrap">
                  {c.kind === 'whatsapp_cloud' && c.network === 'graph' && (
                    <button type="button" disabled={action.busy} onClick={() => void newToken(c)}>New verify token</button>
                  )}
                  <button type="button" onClick={() => toggle(c.id, 'routing')} aria-expanded={isOpen(c.id, 'routing')}>Routing</button>
                  {c.kind === 'whatsapp_cloud' && (
                    <button type="button" onClick={() => toggle(c.id, 'templates')} aria-expanded={isOpen(c.id, 'templates')}>Templates</button>
                  )}
                  {c.kind === 'web_chat' && (
                    <button type="button" onClick={() => toggle(c.id, 'widget')} aria-expanded={isOpen(c.id, 'widget')}>Widget</button>
                  )}
                </div>
              </header>
              {c.webhook && c.network === 'graph' && <CopyField label="Webhook URL" value={c.webhook.url} />}
              {isOpen(c.id, 'routing') && <RoutingSettings channel={c} onSaved={channels.reload} />}
              {isOpen(c.id, 'widget') && <WebChatSettings channel={c} onSaved={channels.reload} />}
              {isOpen(c.id, 'templates') && <Templates channelId={c.id} />}
            </article>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A channel's webhook address and, for a real number, its verify token: what Meta's app dashboard asks for. */
function Revealed({ reveal, onDone }: { reveal: Reveal; onDone: () => void }) {
  const c = reveal.channel;
  const token = c.webhook?.verifyToken;
  return (
    <div class="secret card" role="status" data-testid="channel-created">
      <p>{reveal.note}</p>
      {c.webhook && c.network === 'graph' && (
        <>
          <p>In your Meta app's WhatsApp webhook settings, enter this callback URL and verify token, and subscribe to the <code>messages</code> field.{token ? ' Copy the token now: it is shown only this once.' : ''}</p>
          <CopyField label="Webhook URL" value={c.webhook.url} testId="webhook-url" />
          {token && <CopyField label="Verify token" value={token} testId="verify-token" />}
        </>
      )}
      {c.network === 'sandbox' && <p class="small">The sandbox network already sends this number's webhooks here. Play its customer in the simulator.</p>}
      <button type="button" onClick={onDone}>{token ? 'I have saved it' : 'Done'}</button>
    </div>
  );
}

function variablesOf(t: TemplateInfo): string {
  const parts = t.variables.map((s) => `${s.component}${s.index !== undefined ? ` ${s.index + 1}` : ''}: ${s.params.join(', ')}${s.optional ? ' (optional)' : ''}`);
  return parts.length ? parts.join('; ') : 'none';
}

function Templates({ channelId }: { channelId: string }) {
  const list = useLoad(() => ok(api.GET('/v1/channels/{channelId}/templates', { params: { path: { channelId } } })).then((r) => r.templates as unknown as TemplateInfo[]), [channelId]);
  const action = useAction();
  const [result, setResult] = useState<string | null>(null);
  const sync = async () => {
    let r: { synced: number; removed: number } | undefined;
    if (await action.run(async () => {
      r = await ok(api.POST('/v1/channels/{channelId}/templates/sync', { params: { path: { channelId } } }));
    })) {
      setResult(`Synced ${r?.synced ?? 0} templates${r?.removed ? `, removed ${r.removed}` : ''}.`);
      list.reload();
    }
  };
  return (
    <div class="templates">
      <div class="row">
        <button type="button" disabled={action.busy} onClick={() => void sync()}>Sync from the network</button>
        {result && <span role="status">{result}</span>}
      </div>
      {action.error && <p class="error" role="alert">{action.error}</p>}
      {list.error && <p class="error" role="alert">{list.error}</p>}
      {list.data?.length === 0 && <p class="empty">No template yet: sync from the network.</p>}
      {list.data && list.data.length > 0 && (
        <div class="table-wrap">
          <table data-testid="templates">
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Language</th><th scope="col">Category</th><th scope="col">Status</th><th scope="col">Variables</th></tr>
            </thead>
            <tbody>
              {list.data.map((t) => (
                <tr key={`${t.name}|${t.language}`}>
                  <td>{t.name}</td>
                  <td>{t.language}</td>
                  <td>{t.category.toLowerCase()}</td>
                  <td><span class={`pill ${t.status.toLowerCase()}`}>{t.status.toLowerCase()}</span></td>
                  <td class="small">{variablesOf(t)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
