import { useState } from 'preact/hooks';
import { ApiError, describeError } from '../api/errors';
import { login } from '../session';

/** Sign-in with the email and password the operator CLI (or the first-start banner) gave. */
export function LoginScreen() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // When the email and password fit users of several organizations, the person picks one.
  const [organizations, setOrganizations] = useState<{ id: string; name: string }[] | null>(null);
  const [organizationId, setOrganizationId] = useState('');

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Signed in: the app moves on to ?next= or the inbox.
      await login(email.trim(), password, organizationId || undefined);
    } catch (err) {
      if (err instanceof ApiError && err.status === 429) {
        setError(`Too many attempts. Try again in ${err.retryAfter ?? 60} seconds.`);
      } else if (err instanceof ApiError && err.code === 'ambiguous_login') {
        const orgs = (err.details as { organizations?: { id: string; name: string }[] } | undefined)?.organizations ?? [];
        setOrganizations(orgs);
        setOrganizationId(orgs[0]?.id ?? '');
        setError('This login belongs to several organizations: pick one and sign in again.');
      } else if (err instanceof ApiError && err.status === 401) {
        setError('That email and password do not match an active account.');
      } else {
        setError(describeError(err));
      }
      if (!(err instanceof ApiError && err.code === 'ambiguous_login')) setPassword('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="login" id="main">
      <form class="panel" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Sign in to Switchboard</h1>
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} autoFocus />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        {organizations && (
          <label>
            Organization
            <select name="organization" value={organizationId} onChange={(e) => setOrganizationId(e.currentTarget.value)}>
              {organizations.map((o) => (
                <option key={o.id} value={o.id}>{o.name}</option>
              ))}
            </select>
          </label>
        )}
        {error !== null && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
    </main>
  );
}
