import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { NewTeam, Team, TeamMember } from '../api/types';
import { FieldError, invalid } from '../components/FieldError';
import { errorAt, formErrors, NO_ERRORS, type FormErrors } from './field-errors';
import { useAction, useLoad } from './useLoad';

interface Draft {
  name: string;
  memberIds: string[];
  autoAssign: boolean;
  capacity: string;
}

function draftOf(t: Team | null): Draft {
  return { name: t?.name ?? '', memberIds: [...(t?.memberIds ?? [])], autoAssign: t?.autoAssign.enabled ?? false, capacity: t?.autoAssign.capacity == null ? '' : String(t.autoAssign.capacity) };
}

function bodyOf(d: Draft): NewTeam {
  const c = d.capacity.trim();
  // Anything but digits goes as typed, for the API to refuse in words next to the field.
  return { name: d.name, memberIds: d.memberIds, autoAssign: { enabled: d.autoAssign, capacity: c === '' ? null : ((/^\d+$/.test(c) ? Number(c) : c) as number) } };
}

/** A team's form: its name, its members (active users), and whether its queue is given out automatically. */
function TeamForm({ team, users, onSaved, onCancel }: { team: Team | null; users: TeamMember[]; onSaved: () => void; onCancel: () => void }) {
  const [d, setD] = useState<Draft>(() => draftOf(team));
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const uid = `team-${team?.id ?? 'new'}`;
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      if (team === null) await ok(api.POST('/v1/teams', { body: bodyOf(d) }));
      else await ok(api.PATCH('/v1/teams/{id}', { params: { path: { id: team.id } }, body: bodyOf(d) }));
      setErrors(NO_ERRORS);
      onSaved();
    } catch (x) {
      setErrors(formErrors(x));
    } finally {
      setBusy(false);
    }
  };
  const nameErr = errorAt(errors, 'name');
  const membersErr = errorAt(errors, 'memberIds', true);
  const capacityErr = errorAt(errors, 'autoAssign', true);
  return (
    <form class="card stack" noValidate onSubmit={(e) => void save(e)} aria-label={team === null ? 'New team' : `Edit team ${team.name}`} data-testid="team-form">
      <label>
        Team name
        <input value={d.name} maxLength={100} onInput={(e) => setD({ ...d, name: e.currentTarget.value })} {...invalid(`${uid}-name-err`, nameErr)} />
      </label>
      <FieldError id={`${uid}-name-err`} message={nameErr} />
      <fieldset class="row wrap" {...invalid(`${uid}-members-err`, membersErr)}>
        <legend>Members</legend>
        {users.map((u) => (
          <label key={u.id} class="check">
            <input type="checkbox" checked={d.memberIds.includes(u.id)} onChange={(e) => setD({ ...d, memberIds: e.currentTarget.checked ? [...d.memberIds, u.id] : d.memberIds.filter((m) => m !== u.id) })} /> {u.name}
          </label>
        ))}
      </fieldset>
      <FieldError id={`${uid}-members-err`} message={membersErr} />
      <div class="row wrap">
        <label class="check">
          <input type="checkbox" checked={d.autoAssign} onChange={(e) => setD({ ...d, autoAssign: e.currentTarget.checked })} /> Give the team's queue out to its online members automatically
        </label>
        <label>
          Capacity per member (empty: no limit)
          <input inputMode="numeric" class="short" value={d.capacity} onInput={(e) => setD({ ...d, capacity: e.currentTarget.value })} {...invalid(`${uid}-capacity-err`, capacityErr)} />
        </label>
        <FieldError id={`${uid}-capacity-err`} message={capacityErr} />
      </div>
      <div class="row wrap">
        <button type="submit" class="primary" disabled={busy}>{team === null ? 'Create team' : 'Save team'}</button>
        <button type="button" disabled={busy} onClick={onCancel}>Cancel</button>
      </div>
      {errors.message && <p class="error" role="alert">{errors.message}</p>}
    </form>
  );
}

/**
 * Teams: named groups of agents, whose queues rules and agents can send
 * conversations to (`/v1/teams`): create, rename, change members and
 * auto-assignment, delete.
 */
export function TeamsSettings() {
  const teams = useLoad(() => ok(api.GET('/v1/teams')).then((r) => r.teams));
  const users = useLoad(() => ok(api.GET('/v1/team')).then((r) => r.members.filter((m) => m.active)));
  const action = useAction();
  const [editing, setEditing] = useState<string | 'new' | null>(null);
  const names = new Map((users.data ?? []).map((u) => [u.id, u.name]));
  const saved = () => {
    setEditing(null);
    teams.reload();
  };
  const remove = (t: Team) => {
    if (!confirm(`Delete the team ${t.name}? Conversations waiting in its queue stay in the organization's queue.`)) return;
    void action.run(() => ok(api.DELETE('/v1/teams/{id}', { params: { path: { id: t.id } } }))).then((done) => done && teams.reload());
  };
  return (
    <section class="panel" aria-labelledby="teams-title">
      <header class="row spread">
        <h1 id="teams-title">Teams</h1>
        {editing !== 'new' && <button type="button" class="primary" onClick={() => setEditing('new')}>New team</button>}
      </header>
      <p class="muted">A conversation can wait in a team's queue (an automation rule's <em>assign</em> to a team, or moved there); the team's members see it.</p>
      {editing === 'new' && <TeamForm team={null} users={users.data ?? []} onSaved={saved} onCancel={() => setEditing(null)} />}
      {action.error && <p class="error" role="alert">{action.error}</p>}
      {teams.error && <p class="error" role="alert">{teams.error}</p>}
      {teams.data?.length === 0 && editing !== 'new' && <p class="empty">No team yet.</p>}
      <ul class="plain" data-testid="teams">
        {teams.data?.map((t) => (
          <li key={t.id} aria-label={`Team ${t.name}`}>
            {editing === t.id ? (
              <TeamForm team={t} users={users.data ?? []} onSaved={saved} onCancel={() => setEditing(null)} />
            ) : (
              <article class="card row wrap spread">
                <div>
                  <strong>{t.name}</strong>
                  <div class="small">{t.memberIds.length === 0 ? <span class="muted">No members</span> : t.memberIds.map((id) => names.get(id) ?? 'a former user').join(', ')}</div>
                  <div class="muted small">{t.autoAssign.enabled ? `Auto-assigns its queue${t.autoAssign.capacity !== null ? `, up to ${t.autoAssign.capacity} open conversations each` : ''}` : 'Its queue is taken by hand'}</div>
                </div>
                <div class="row">
                  <button type="button" disabled={action.busy} onClick={() => setEditing(t.id)}>Edit</button>
                  <button type="button" disabled={action.busy} onClick={() => remove(t)}>Delete</button>
                </div>
              </article>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
