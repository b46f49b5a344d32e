import { useState } from 'preact/hooks';
import { api, ok, request } from '../api/client';
import type { ChannelInfo, TemplateInfo } from '../api/types';
import { useAction, useLoad } from './useLoad';

/** Channels and their templates: each template's status and variables; sync from the network. */
export function ChannelsSettings() {
  const channels = useLoad(() => ok(api.GET('/v1/channels')).then((r) => r.channels as ChannelInfo[]));
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section class="panel" aria-labelledby="ch-title">
      <h1 id="ch-title">Channels & templates</h1>
      {channels.error && <p class="error" role="alert">{channels.error}</p>}
      {channels.data?.length === 0 && <p class="empty">This organization has no channel yet (the operator CLI creates them).</p>}
      {channels.data?.map((c) => (
        <article class="card" key={c.id}>
          <header class="row wrap spread">
            <div>
              <strong>{c.name}</strong>
              <div class="muted small">
                {c.kind === 'whatsapp_cloud' ? `WhatsApp ${c.network === 'sandbox' ? '(sandbox network)' : ''}` : 'web chat'} · {c.displayPhoneNumber ?? c.phoneNumberId ?? ''} · <code>{c.id}</code>
              </div>
            </div>
            {c.kind === 'whatsapp_cloud' && (
              <button type="button" onClick={() => setOpen(open === c.id ? null : c.id)} aria-expanded={open === c.id}>Templates</button>
            )}
          </header>
          {open === c.id && <Templates channelId={c.id} />}
        </article>
      ))}
    </section>
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
    let r: { synced?: number; removed?: number } | undefined;
    if (await action.run(async () => {
      r = await request<{ synced?: number; removed?: number }>('POST', `/v1/channels/${encodeURIComponent(channelId)}/templates/sync`);
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
      {list.data && (
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
