import { useState } from 'preact/hooks';
import { request } from '../api/client';
import type { DashboardUser, Role, SessionUser } from '../api/types';
import { loadDirectory } from '../directory';
import { useAction, useLoad } from './useLoad';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../../src/domain/password-rule';

/** Dashboard users: create (with a first password), change role and auto-assignment capacity, deactivate and reactivate. */
export function UsersSettings({ user }: { user: SessionUser }) {
  const users = useLoad(() => request<{ users: DashboardUser[] }>('GET', '/v1/users').then((r) => r.users));
  const action = useAction();
  const [form, setForm] = useState({ email: '', name: '', role: 'agent' as Role, password: '' });
  const changed = () => {
    users.reload();
    void loadDirectory(true);
  };

  const create = async (e: Event) => {
    e.preventDefault();
    if (await action.run(() => request('POST', '/v1/users', { ...form, email: form.email.trim(), name: form.name.trim() }))) {
      setForm({ email: '', name: '', role: 'agent', password: '' });
      changed();
    }
  };
  const patch = (id: string, body: Partial<Pick<DashboardUser, 'name' | 'role' | 'active'>> | { capacity: number | null | string }) => void action.run(() => request('PATCH', `/v1/users/${encodeURIComponent(id)}`, body)).then((ok) => ok && changed());

  return (
    <section class="panel" aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <form class="card row wrap" onSubmit={create} aria-label="New user">
        <label>
          Name
          <input name="name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        </label>
        <label>
          Email
          <input name="email" type="email" required value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />
        </label>
        <label>
          Role
          <select name="role" value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value as Role })}>
            <option value="agent">agent</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <label>
          First password
          <input name="password" type="password" autocomplete="new-password" required minLength={PASSWORD_MIN_LENGTH} maxLength={PASSWORD_MAX_LENGTH} value={form.password} onInput={(e) => setForm({ ...form, password: e.currentTarget.value })} />
        </label>
        <button type="submit" class="primary" disabled={action.busy}>Create user</button>
      </form>
      {action.error && <p class="error" role="alert">{action.error}</p>}
      {users.error && <p class="error" role="alert">{users.error}</p>}
      {users.data && (
        <div class="table-wrap">
          <table data-testid="users">
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Capacity</th><th scope="col">State</th><th scope="col"><span class="sr">Actions</span></th></tr>
            </thead>
            <tbody>
              {users.data.map((u) => (
                <tr key={u.id} data-user={u.email}>
                  <td>{u.name}</td>
                  <td>{u.email}</td>
                  <td>
                    <select aria-label={`Role of ${u.name}`} value={u.role} disabled={u.id === user.id || action.busy} onChange={(e) => patch(u.id, { role: e.currentTarget.value as Role })}>
                      <option value="agent">agent</option>
                      <option value="admin">admin</option>
                    </select>
                  </td>
                  <td>
                    <CapacityField user={u} disabled={action.busy} onSave={(capacity) => patch(u.id, { capacity })} />
                  </td>
                  <td>{u.active === false ? 'deactivated' : 'active'}</td>
                  <td>
                    {u.id !== user.id && (
                      <button type="button" disabled={action.busy} onClick={() => patch(u.id, { active: u.active === false })}>
                        {u.active === false ? 'Reactivate' : 'Deactivate'}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/**
 * An agent's own auto-assignment capacity: saved when the field is left or
 * Enter is pressed; empty is no limit of their own. Anything but a whole
 * number goes to the API as typed, which refuses it in words.
 */
function CapacityField({ user, disabled, onSave }: { user: DashboardUser; disabled: boolean; onSave: (capacity: number | null | string) => void }) {
  const stored = user.capacity === null ? '' : String(user.capacity);
  const [text, setText] = useState(stored);
  const commit = () => {
    const t = text.trim();
    if (t === stored) return;
    onSave(t === '' ? null : /^\d+$/.test(t) ? Number(t) : t);
  };
  return (
    <input
      aria-label={`Capacity of ${user.name} (open conversations auto-assigned at most; empty: no limit of their own)`}
      inputMode="numeric"
      class="short"
      placeholder="no limit"
      value={text}
      disabled={disabled}
      onInput={(e) => setText(e.currentTarget.value)}
      onChange={commit}
    />
  );
}
