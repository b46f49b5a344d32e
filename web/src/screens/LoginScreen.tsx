import { useState } from 'preact/hooks';
import { ApiError, describeError } from '../api/errors';
import { navigate, usePath } from '../router';
import { login } from '../session';

/** Sign-in with the email and password the operator CLI (or the first-start banner) gave. */
export function LoginScreen() {
  const { query } = usePath();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(email.trim(), password);
      const next = query.get('next');
      // Only paths of this site: a crafted ?next= must not send the person elsewhere.
      navigate(next !== null && /^\/(?!\/)/.test(next) ? next : '/inbox', { replace: true });
    } catch (err) {
      if (err instanceof ApiError && err.status === 429) {
        setError(`Too many attempts. Try again in ${err.retryAfter ?? 60} seconds.`);
      } else if (err instanceof ApiError && err.status === 401) {
        setError('That email and password do not match an active account.');
      } else {
        setError(describeError(err));
      }
      setPassword('');
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
        {error !== null && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
    </main>
  );
}
