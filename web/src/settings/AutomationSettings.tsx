import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { AutomationRule, ChannelDetail, Label, Team, TeamMember } from '../api/types';
import { describeAction, describeCondition, type Names } from './rule-words';
import { RuleEditor } from './RuleEditor';
import { useAction, useLoad } from './useLoad';

/**
 * The organization's automation rules, in the order each customer message
 * runs them: create, edit, switch on and off, move up and down, delete
 * (`/v1/automation-rules`; see docs/routing.md).
 */
export function AutomationSettings() {
  const rules = useLoad(() => ok(api.GET('/v1/automation-rules')).then((r) => r.rules));
  const channels = useLoad(() => ok(api.GET('/v1/channels')).then((r) => r.channels));
  const members = useLoad(() => ok(api.GET('/v1/team')).then((r) => r.members));
  const teams = useLoad(() => ok(api.GET('/v1/teams')).then((r) => r.teams));
  const labels = useLoad(() => ok(api.GET('/v1/labels')).then((r) => r.labels));
  const names: Names = useMemo(
    () => ({
      channels: new Map((channels.data ?? []).map((c: ChannelDetail) => [c.id, c])),
      members: new Map((members.data ?? []).map((m: TeamMember) => [m.id, m])),
      teams: new Map((teams.data ?? []).map((t: Team) => [t.id, t])),
      labels: new Map((labels.data ?? []).map((l: Label) => [l.id, l])),
    }),
    [channels.data, members.data, teams.data, labels.data],
  );
  const action = useAction();
  const [editing, setEditing] = useState<string | 'new' | null>(null);

  // A switched box shows its new state at once, until the list is fetched again (or the change is refused).
  const [switching, setSwitching] = useState<ReadonlyMap<string, boolean>>(new Map());
  useEffect(() => setSwitching(new Map()), [rules.data]);
  const patch = (r: AutomationRule, body: { enabled?: boolean; position?: number }) => {
    if (body.enabled !== undefined) setSwitching(new Map([...switching, [r.id, body.enabled]]));
    void action.run(() => ok(api.PATCH('/v1/automation-rules/{id}', { params: { path: { id: r.id } }, body }))).then((done) => (done ? rules.reload() : setSwitching(new Map())));
  };
  const remove = (r: AutomationRule) => {
    if (!confirm(`Delete the rule “${r.name}”?`)) return;
    void action.run(() => ok(api.DELETE('/v1/automation-rules/{id}', { params: { path: { id: r.id } } }))).then((done) => done && rules.reload());
  };
  const saved = () => {
    setEditing(null);
    rules.reload();
  };
  const list = rules.data ?? [];

  return (
    <section class="panel" aria-labelledby="rules-title">
      <header class="row spread">
        <h1 id="rules-title">Automation rules</h1>
        {editing !== 'new' && <button type="button" class="primary" onClick={() => setEditing('new')}>New rule</button>}
      </header>
      <p class="muted">
        Each customer message runs the enabled rules from the top: every rule whose conditions all hold fires its actions, and a rule marked <em>stop</em> ends the list for that message. Each firing shows in the conversation's timeline.
      </p>
      {editing === 'new' && <RuleEditor rule={null} names={names} onSaved={saved} onCancel={() => setEditing(null)} />}
      {action.error && <p class="error" role="alert">{action.error}</p>}
      {rules.error && <p class="error" role="alert">{rules.error}</p>}
      {rules.data?.length === 0 && editing !== 'new' && <p class="empty">No rule yet: customer messages go where each channel's routing sends them.</p>}
      <ol class="rules" data-testid="rules">
        {list.map((r, i) =>
          editing === r.id ? (
            <li key={r.id} data-rule={r.id}>
              <RuleEditor rule={r} names={names} onSaved={saved} onCancel={() => setEditing(null)} />
            </li>
          ) : (
            <li key={r.id} data-rule={r.id} class={r.enabled ? undefined : 'disabled'} aria-label={`Rule ${i + 1}: ${r.name}`}>
              <div class="row wrap spread">
                <div>
                  <span class="position">{i + 1}.</span>
                  <strong>{r.name}</strong>
                  {!r.enabled && <span class="pill"> off</span>}
                  {r.stop && <span class="pill" title="When it fires, the rules after it are skipped"> stops</span>}
                </div>
                <div class="row wrap">
                  <label class="check">
                    <input type="checkbox" checked={switching.get(r.id) ?? r.enabled} disabled={action.busy} onChange={(e) => patch(r, { enabled: e.currentTarget.checked })} /> Enabled
                  </label>
                  <button type="button" disabled={action.busy || i === 0} aria-label={`Move ${r.name} up`} onClick={() => patch(r, { position: i - 1 })}>↑</button>
                  <button type="button" disabled={action.busy || i === list.length - 1} aria-label={`Move ${r.name} down`} onClick={() => patch(r, { position: i + 1 })}>↓</button>
                  <button type="button" disabled={action.busy} onClick={() => setEditing(r.id)}>Edit</button>
                  <button type="button" disabled={action.busy} onClick={() => remove(r)}>Delete</button>
                </div>
              </div>
              <p class="small">
                <span class="muted">When </span>
                {r.conditions.length === 0 ? 'any customer message' : r.conditions.map((c) => describeCondition(c, names)).join(' and ')}
                <span class="muted">, then </span>
                {r.actions.map((a) => describeAction(a, names)).join('; ')}
              </p>
            </li>
          ),
        )}
      </ol>
    </section>
  );
}
