import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { useAction, useLoad } from './useLoad';

type Registration = { id: string; url: string; events: string[]; status: 'active' | 'disabled'; disabledReason: string | null; createdAt: string };
type Delivery = { id: string; eventType: string; status: 'pending' | 'succeeded' | 'failed'; attemptCount: number; nextAttemptAt: string | null; attempts: { at: string; status: number | null; latencyMs: number; error: string | null }[]; createdAt: string };

/** Webhook registrations: register (the URL must answer the challenge), deliveries with every attempt, resend, rotate the secret. */
export function WebhooksSettings() {
  const list = useLoad(() => ok(api.GET('/api/v1/webhooks')).then((r) => r.webhooks as Registration[]));
  const action = useAction();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [secret, setSecret] = useState<{ id: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);

  const register = async (e: Event) => {
    e.preventDefault();
    let made: { id: string; secret: string } | undefined;
    if (await action.run(async () => {
      made = (await ok(api.POST('/api/v1/webhooks', { body: { url: url.trim(), events: events.split(',').map((x) => x.trim()).filter(Boolean) } }))) as { id: string; secret: string };
    })) {
      setSecret(made!);
      setUrl('');
      list.reload();
    }
  };
  const rotate = async (id: string) => {
    let r: { id: string; secret: string } | undefined;
    if (await action.run(async () => {
      r = (await ok(api.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path: { id } } }))) as { id: string; secret: string };
    })) setSecret(r!);
  };
  const toggle = (w: Registration) => void action.run(() => ok(api.PATCH('/api/v1/webhooks/{id}', { params: { path: { id: w.id } }, body: { enabled: w.status !== 'active' } }))).then((done) => done && list.reload());
  const remove = (w: Registration) => {
    if (!confirm(`Delete the webhook to ${w.url} with its delivery log?`)) return;
    void action.run(() => ok(api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: w.id } } }))).then((done) => done && list.reload());
  };

  return (
    <section class="panel" aria-labelledby="wh-title">
      <h1 id="wh-title">Webhooks</h1>
      {secret && (
        <div class="secret card" role="status" data-testid="webhook-secret">
          <p>The signing secret of this webhook. Copy it now: it is shown only this once.</p>
          <code class="copyable">{secret.secret}</code>
          <button type="button" onClick={() => setSecret(null)}>I have saved it</button>
        </div>
      )}
      <form class="card row wrap" onSubmit={register} aria-label="Register a webhook">
        <label class="grow">
          URL (answers GET ?challenge=… with the value)
          <input name="url" type="url" required value={url} placeholder="https://example.com/hooks/switchboard" onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <label>
          Events (comma-separated, * for all)
          <input name="events" value={events} onInput={(e) => setEvents(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={action.busy}>Register</button>
      </form>
      {action.error && <p class="error" role="alert">{action.error}</p>}
      {list.error && <p class="error" role="alert">{list.error}</p>}
      {list.data?.length === 0 && <p class="empty">No webhook is registered.</p>}
      {list.data?.map((w) => (
        <article class="card webhook" key={w.id}>
          <header class="row wrap spread">
            <div>
              <strong class="mono">{w.url}</strong>
              <div class="muted small">
                {w.events.join(', ')} · {w.status}
                {w.disabledReason ? ` (${w.disabledReason})` : ''}
              </div>
            </div>
            <div class="row wrap">
              <button type="button" onClick={() => setOpen(open === w.id ? null : w.id)} aria-expanded={open === w.id}>Deliveries</button>
              <button type="button" disabled={action.busy} onClick={() => void rotate(w.id)}>Rotate secret</button>
              <button type="button" disabled={action.busy} onClick={() => toggle(w)}>{w.status === 'active' ? 'Disable' : 'Enable'}</button>
              <button type="button" disabled={action.busy} onClick={() => remove(w)}>Delete</button>
            </div>
          </header>
          {open === w.id && <Deliveries id={w.id} />}
        </article>
      ))}
    </section>
  );
}

function Deliveries({ id }: { id: string }) {
  const [page, setPage] = useState(1);
  const list = useLoad(() => ok(api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: { page, limit: 20 } } })).then((r) => r as unknown as { deliveries: Delivery[]; totalPages: number; total: number }), [page]);
  const action = useAction();
  const resend = (d: Delivery) => void action.run(() => ok(api.POST('/api/v1/webhooks/{id}/deliveries/{deliveryId}/resend', { params: { path: { id, deliveryId: d.id } } }))).then((done) => done && list.reload());
  if (list.error) return <p class="error" role="alert">{list.error}</p>;
  if (!list.data) return <p class="muted">Loading…</p>;
  const refresh = (
    <button type="button" onClick={list.reload}>
      Refresh
    </button>
  );
  if (list.data.deliveries.length === 0) return <div class="deliveries"><p class="empty">No delivery yet.</p>{refresh}</div>;
  return (
    <div class="deliveries" data-testid="deliveries">
      {refresh}
      {action.error && <p class="error" role="alert">{action.error}</p>}
      <div class="table-wrap">
        <table>
          <thead>
            <tr><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempts (status, time)</th><th scope="col"><span class="sr">Actions</span></th></tr>
          </thead>
          <tbody>
            {list.data.deliveries.map((d) => (
              <tr key={d.id}>
                <td>{d.eventType}<div class="muted small">{new Date(d.createdAt).toLocaleString()}</div></td>
                <td><span class={`pill ${d.status}`}>{d.status}</span>{d.nextAttemptAt && <div class="muted small">next {new Date(d.nextAttemptAt).toLocaleTimeString()}</div>}</td>
                <td class="small">
                  <ol class="attempts">
                    {d.attempts.map((a, i) => (
                      <li key={i}>
                        {a.status ?? 'no answer'} · {Math.round(a.latencyMs)} ms · {new Date(a.at).toLocaleTimeString()}
                        {a.error ? ` · ${a.error}` : ''}
                      </li>
                    ))}
                  </ol>
                </td>
                <td>{d.status !== 'pending' && <button type="button" disabled={action.busy} onClick={() => resend(d)}>Resend</button>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data.totalPages > 1 && (
        <nav class="pager row" aria-label="Delivery pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
          <span>Page {page} of {list.data.totalPages}</span>
          <button type="button" disabled={page >= list.data.totalPages} onClick={() => setPage(page + 1)}>Next</button>
        </nav>
      )}
    </div>
  );
}
