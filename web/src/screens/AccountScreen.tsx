import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ApiError, describeError } from '../api/errors';
import type { SessionUser } from '../api/types';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_RULE } from '../../../src/domain/password-rule';

/** The signed-in user's own account: change the password (other sessions of theirs end). */
export function AccountScreen({ user }: { user: SessionUser }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setDone(false);
    if (next !== again) return setError('The new password and its repetition differ.');
    setBusy(true);
    try {
      await ok(api.POST('/v1/auth/password', { body: { currentPassword: current, newPassword: next } }));
      setDone(true);
      setCurrent('');
      setNext('');
      setAgain('');
    } catch (err) {
      setError(err instanceof ApiError && err.code === 'invalid_current_password' ? 'The current password is not right.' : describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel account" aria-labelledby="account-title">
      <h1 id="account-title">Your account</h1>
      <p>
        {user.name} · {user.email} · {user.role}
      </p>
      <form onSubmit={submit} aria-label="Change password" class="narrow">
        <h2>Change password</h2>
        <label>
          Current password
          <input type="password" name="current-password" autocomplete="current-password" required value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
        </label>
        <label>
          New password ({PASSWORD_RULE})
          <input type="password" name="new-password" autocomplete="new-password" required minLength={PASSWORD_MIN_LENGTH} maxLength={PASSWORD_MAX_LENGTH} value={next} onInput={(e) => setNext(e.currentTarget.value)} />
        </label>
        <label>
          New password again
          <input type="password" name="new-password-again" autocomplete="new-password" required minLength={PASSWORD_MIN_LENGTH} maxLength={PASSWORD_MAX_LENGTH} value={again} onInput={(e) => setAgain(e.currentTarget.value)} />
        </label>
        {error && <p class="error" role="alert">{error}</p>}
        {done && <p class="ok" role="status">Password changed. Your other sessions were signed out.</p>}
        <button type="submit" class="primary" disabled={busy}>Change password</button>
      </form>
    </section>
  );
}
