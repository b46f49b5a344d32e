import { useState } from 'preact/hooks';
import { request } from '../api/client';
import type { ApiKeyInfo } from '../api/types';
import { SCOPES } from '../../../src/domain/scopes';
import { directory, loadDirectory } from '../directory';
import { useObservable } from '../state';
import { useAction, useLoad } from './useLoad';

/** API keys: create with scopes (the secret is shown once, here), list with last use, revoke. */
export function ApiKeysSettings() {
  const keys = useLoad(() => request<{ apiKeys?: ApiKeyInfo[]; keys?: ApiKeyInfo[] }>('GET', '/v1/api-keys').then((r) => r.apiKeys ?? r.keys ?? []));
  const people = useObservable(directory);
  const action = useAction();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(new Set(['tickets:create', 'tickets:read']));
  const [owner, setOwner] = useState('');
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  void loadDirectory();

  const create = async (e: Event) => {
    e.preventDefault();
    let made: { secret: string } | undefined;
    const ok = await action.run(async () => {
      made = await request<{ secret: string }>('POST', '/v1/api-keys', { name: name.trim(), scopes: [...scopes], ...(owner ? { userId: owner } : {}) });
    });
    if (ok && made) {
      setSecret({ name: name.trim(), secret: made.secret });
      setName('');
      keys.reload();
    }
  };
  const revoke = (k: ApiKeyInfo) => {
    if (!confirm(`Revoke the key "${k.name}"? Programs using it stop working at once.`)) return;
    void action.run(() => request('DELETE', `/v1/api-keys/${encodeURIComponent(k.id)}`)).then((ok) => ok && keys.reload());
  };

  return (
    <section class="panel" aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {secret && (
        <div class="secret card" role="status" data-testid="new-secret">
          <p>
            The key <strong>{secret.name}</strong> was created. Copy it now: it is shown only this once.
          </p>
          <code class="copyable">{secret.secret}</code>
          <div class="row">
            <button type="button" onClick={() => void navigator.clipboard?.writeText(secret.secret)}>Copy</button>
            <button type="button" onClick={() => setSecret(null)}>I have saved it</button>
          </div>
        </div>
      )}
      <form class="card" onSubmit={create} aria-label="New API key">
        <div class="row wrap">
          <label>
            Name
            <input name="key-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Acts as
            <select name="owner" value={owner} onChange={(e) => setOwner(e.currentTarget.value)}>
              <option value="">me</option>
              {[...people.values()].map((p) => (
                <option key={p.id} value={p.id}>{p.name} ({p.role})</option>
              ))}
            </select>
          </label>
        </div>
        <fieldset class="scopes">
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label key={s} class="check">
              <input
                type="checkbox"
                name="scope"
                value={s}
                checked={scopes.has(s)}
                onChange={(e) => {
                  const next = new Set(scopes);
                  if (e.currentTarget.checked) next.add(s);
                  else next.delete(s);
                  setScopes(next);
                }}
              />
              {s}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary" disabled={action.busy || scopes.size === 0}>Create key</button>
      </form>
      {action.error && <p class="error" role="alert">{action.error}</p>}
      {keys.error && <p class="error" role="alert">{keys.error}</p>}
      {keys.data && (
        <div class="table-wrap">
          <table data-testid="api-keys">
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Owner</th><th scope="col">Last used</th><th scope="col"><span class="sr">Actions</span></th></tr>
            </thead>
            <tbody>
              {keys.data.map((k) => (
                <tr key={k.id} data-key={k.name} class={k.revokedAt ? 'revoked' : undefined}>
                  <td>{k.name}</td>
                  <td><code>{k.prefix ? `${k.prefix}…` : '—'}</code></td>
                  <td class="small">{k.scopes.join(', ')}</td>
                  <td>{k.userId ? (people.get(k.userId)?.name ?? k.userId) : ''}</td>
                  <td>{k.lastUsedAt ? new Date(k.lastUsedAt).toLocaleString() : 'never'}</td>
                  <td>{k.revokedAt ? 'revoked' : <button type="button" disabled={action.busy} onClick={() => revoke(k)}>Revoke</button>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
