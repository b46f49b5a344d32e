import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { ConnectedTool } from '../api/types';
import { CopyButton } from '../components/CopyButton';
import { useAction, useLoad } from './useLoad';

type Integration = ConnectedTool['integration'];

const INTEGRATIONS: { id: Integration; label: string; hint: string }[] = [
  { id: 'email', label: 'Email (Gmail)', hint: 'Read, draft and send mail as the mailbox you sign in with.' },
  { id: 'calendar', label: 'Calendar (Google Calendar)', hint: 'Check free time and book events in the calendar you sign in with.' },
  { id: 'payment', label: 'Payment (Stripe)', hint: 'Payment links and their status, with a Stripe secret key (on the sandbox, a key starting sk_test_sbx_).' },
];

const STATUS_WORDS: Record<ConnectedTool['status'], string> = {
  active: 'connected',
  pending_authorization: 'waiting for sign-in',
  authorization_denied: 'sign-in declined',
  authorization_failed: 'sign-in failed',
  reauthorization_required: 'sign in again',
};

/** Polled while a sign-in is under way in another tab (the callback page cannot tell this one). */
const POLL_MS = 2000;

/**
 * Connected tools: connect an integration (email and calendar by signing in
 * at the provider in a new tab, payment with an API key), list them with
 * their state, sign in again, disconnect.
 */
export function ToolsSettings() {
  const tools = useLoad(() => ok(api.GET('/v1/tools')).then((r) => r.tools));
  const action = useAction();
  const [integration, setIntegration] = useState<Integration>('email');
  /** Sign-in links of this page's connects, by tool id (the API gives them only in the connect answer). */
  const [signIns, setSignIns] = useState<Record<string, string>>({});

  const waiting = tools.data?.some((t) => t.status === 'pending_authorization') ?? false;
  useEffect(() => {
    if (!waiting) return;
    const t = setInterval(() => document.visibilityState === 'visible' && tools.reload(), POLL_MS);
    addEventListener('focus', tools.reload);
    return () => {
      clearInterval(t);
      removeEventListener('focus', tools.reload);
    };
  }, [waiting]);

  const connect = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = Object.fromEntries(new FormData(form)) as Record<string, string>;
    const merchant = f.merchantName?.trim();
    const data = integration === 'payment' ? { data: { api_key: f.apiKey!.trim(), ...(merchant ? { merchant_name: merchant } : {}) } } : {};
    let made: (ConnectedTool & { redirect_url?: string }) | undefined;
    if (await action.run(async () => {
      made = await ok(api.POST('/v1/integrations/{integrationId}/connect', { params: { path: { integrationId: integration } }, body: { name: f.name!.trim(), ...data } }));
    })) {
      if (made?.redirect_url) setSignIns((s) => ({ ...s, [made!.id]: made!.redirect_url! }));
      form.reset();
      tools.reload();
    }
  };
  const signInAgain = async (t: ConnectedTool) => {
    let made: { redirect_url?: string } | undefined;
    if (await action.run(async () => {
      made = await ok(api.POST('/v1/integrations/{integrationId}/connect', { params: { path: { integrationId: t.integration } }, body: { name: t.name, tool_id: t.id } }));
    })) {
      if (made?.redirect_url) setSignIns((s) => ({ ...s, [t.id]: made!.redirect_url! }));
      tools.reload();
    }
  };
  const disconnect = (t: ConnectedTool) => {
    if (!confirm(`Disconnect ${t.name}? Its access is revoked at the provider and its credentials are deleted; bots using its MCP URL stop working.`)) return;
    void action.run(() => ok(api.DELETE('/v1/tools/{toolId}', { params: { path: { toolId: t.id } } }))).then((done) => done && tools.reload());
  };

  const oauth = integration !== 'payment';
  return (
    <section class="panel" aria-labelledby="tools-title">
      <h1 id="tools-title">Connected tools</h1>
      <p class="muted">A connected tool is an MCP server at its own URL that your bots use with an API key carrying <code>mcp:access</code>.</p>
      <form class="card" onSubmit={(e) => void connect(e)} aria-label="Connect a tool">
        <div class="row wrap">
          <label>
            Integration
            <select name="integration" value={integration} onChange={(e) => setIntegration(e.currentTarget.value as Integration)}>
              {INTEGRATIONS.map((i) => (
                <option key={i.id} value={i.id}>{i.label}</option>
              ))}
            </select>
          </label>
          <label class="grow">
            Name
            <input name="name" required maxLength={100} placeholder={oauth ? 'Support mailbox' : 'Shop payments'} />
          </label>
          {!oauth && (
            <>
              <label class="grow">
                Stripe secret key
                <input name="apiKey" type="password" required autocomplete="off" placeholder="sk_live_… or sk_test_…" />
              </label>
              <label>
                Merchant name (optional)
                <input name="merchantName" maxLength={100} />
              </label>
            </>
          )}
          <button type="submit" class="primary" disabled={action.busy}>{oauth ? 'Connect and sign in' : 'Connect'}</button>
        </div>
        <p class="muted small">{INTEGRATIONS.find((i) => i.id === integration)!.hint}</p>
      </form>
      {action.error && <p class="error" role="alert">{action.error}</p>}
      {tools.error && <p class="error" role="alert">{tools.error}</p>}
      {tools.data?.length === 0 && <p class="empty">No tool is connected.</p>}
      {tools.data && tools.data.length > 0 && (
        <div class="table-wrap">
          <table data-testid="tools">
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Integration</th><th scope="col">State</th><th scope="col">Account</th><th scope="col">MCP URL</th><th scope="col"><span class="sr">Actions</span></th></tr>
            </thead>
            <tbody>
              {tools.data.map((t) => (
                <tr key={t.id} data-tool={t.id}>
                  <td>{t.name}{t.sandbox && <span class="pill">sandbox</span>}</td>
                  <td>{t.integration}</td>
                  <td>
                    <span class={`pill ${t.status === 'active' ? 'approved' : t.status === 'pending_authorization' ? 'pending' : 'failed'}`}>{STATUS_WORDS[t.status]}</span>
                    {t.status_reason && t.status !== 'pending_authorization' && <div class="muted small">{t.status_reason}</div>}
                  </td>
                  <td>{t.account ?? '—'}</td>
                  <td><CopyButton value={t.mcp_url} label="Copy URL" /></td>
                  <td><div class="row wrap">
                    {t.status === 'pending_authorization' && signIns[t.id] && (
                      <a class="button primary" href={signIns[t.id]} target="_blank" rel="noopener">Sign in</a>
                    )}
                    {t.integration !== 'payment' && t.status !== 'active' && !(t.status === 'pending_authorization' && signIns[t.id]) && (
                      <button type="button" disabled={action.busy} onClick={() => void signInAgain(t)}>Sign in again</button>
                    )}
                    <button type="button" disabled={action.busy} onClick={() => disconnect(t)}>Disconnect</button>
                  </div></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
