import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { ChannelDetail, ChannelRouting, RoutingPatch } from '../api/types';
import { FieldError, invalid } from '../components/FieldError';
import { WEEKDAYS, type SlaClock, type Weekday } from '../../../src/domain/routing';
import { TICKET_PRIORITIES, type TicketPriority } from '../../../src/domain/types';
import { errorAt, formErrors, NO_ERRORS, type FormErrors } from './field-errors';

const PRIORITY_NAMES: Record<TicketPriority, string> = { low: 'Low', medium: 'Medium', high: 'High', urgent: 'Urgent' };

const DAY_NAMES: Record<Weekday, string> = { mon: 'Monday', tue: 'Tuesday', wed: 'Wednesday', thu: 'Thursday', fri: 'Friday', sat: 'Saturday', sun: 'Sunday' };

interface Opening {
  from: string;
  to: string;
}

/** The form's state: text as typed, so the API (not the browser) judges it and its refusals stand next to the fields. */
interface Draft {
  firstResponder: 'bot' | 'agents';
  fallbackOn: boolean;
  fallbackSeconds: string;
  autoAssign: boolean;
  capacity: string;
  hoursOn: boolean;
  timeZone: string;
  weekly: Record<Weekday, Opening[]>;
  holidays: string[];
  awayReply: string;
  firstResponse: string;
  nextResponse: string;
  /** Per priority, as typed; both empty: the channel's targets. */
  byPriority: Record<TicketPriority, { first: string; next: string }>;
  slaClock: SlaClock;
}

function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    return 'UTC';
  }
}

function draftOf(r: ChannelRouting): Draft {
  const b = r.businessHours;
  const weekly = Object.fromEntries(WEEKDAYS.map((d) => [d, (b?.weekly[d] ?? []).map((o) => ({ ...o }))])) as Record<Weekday, Opening[]>;
  if (b === null) for (const d of WEEKDAYS.slice(0, 5)) weekly[d] = [{ from: '09:00', to: '17:00' }];
  return {
    firstResponder: r.firstResponder,
    fallbackOn: r.botFallbackSeconds !== null,
    fallbackSeconds: String(r.botFallbackSeconds ?? 120),
    autoAssign: r.autoAssign.enabled,
    capacity: r.autoAssign.capacity === null ? '' : String(r.autoAssign.capacity),
    hoursOn: b !== null,
    timeZone: b?.timeZone ?? browserTimeZone(),
    weekly,
    holidays: [...(b?.holidays ?? [])],
    awayReply: b?.awayReply ?? '',
    firstResponse: r.sla.firstResponseSeconds === null ? '' : String(r.sla.firstResponseSeconds),
    nextResponse: r.sla.nextResponseSeconds === null ? '' : String(r.sla.nextResponseSeconds),
    byPriority: Object.fromEntries(
      TICKET_PRIORITIES.map((p) => {
        const t = r.sla.byPriority[p];
        return [p, { first: t?.firstResponseSeconds == null ? '' : String(t.firstResponseSeconds), next: t?.nextResponseSeconds == null ? '' : String(t.nextResponseSeconds) }];
      }),
    ) as Record<TicketPriority, { first: string; next: string }>,
    slaClock: r.sla.clock,
  };
}

/** A number as typed; anything else goes to the API as typed, which refuses it in words. */
function numberOf(s: string): number | string {
  const t = s.trim();
  return /^-?\d+$/.test(t) ? Number(t) : t;
}

/** Empty: null (no target, no limit). */
function optionalNumber(s: string): number | null {
  return s.trim() === '' ? null : (numberOf(s) as number);
}

function patchOf(d: Draft): RoutingPatch {
  const weekly: Partial<Record<Weekday, Opening[]>> = {};
  for (const day of WEEKDAYS) if (d.weekly[day].length > 0) weekly[day] = d.weekly[day];
  return {
    firstResponder: d.firstResponder,
    botFallbackSeconds: d.fallbackOn ? (numberOf(d.fallbackSeconds) as number) : null,
    autoAssign: { enabled: d.autoAssign, capacity: d.capacity.trim() === '' ? null : (numberOf(d.capacity) as number) },
    businessHours: d.hoursOn ? { timeZone: d.timeZone.trim(), weekly, holidays: d.holidays, awayReply: d.awayReply.trim() === '' ? null : d.awayReply } : null,
    sla: {
      firstResponseSeconds: optionalNumber(d.firstResponse),
      nextResponseSeconds: optionalNumber(d.nextResponse),
      // Every priority is sent: one left empty is removed, so the form is what is stored.
      byPriority: Object.fromEntries(
        TICKET_PRIORITIES.map((p) => {
          const t = d.byPriority[p];
          return [p, t.first.trim() === '' && t.next.trim() === '' ? null : { firstResponseSeconds: optionalNumber(t.first), nextResponseSeconds: optionalNumber(t.next) }];
        }),
      ),
      clock: d.slaClock,
    },
  };
}

/** One line saying how a channel is routed, for its card. */
export function routingSummary(r: ChannelRouting): string {
  const parts = [r.firstResponder === 'agents' ? 'agents first' : r.botFallbackSeconds !== null ? `bot first, queued after ${r.botFallbackSeconds} s without an answer` : 'bot first'];
  if (r.autoAssign.enabled) parts.push(`auto-assign${r.autoAssign.capacity !== null ? ` (up to ${r.autoAssign.capacity} each)` : ''}`);
  if (r.businessHours !== null) parts.push(`business hours (${r.businessHours.timeZone})`);
  const { firstResponseSeconds: first, nextResponseSeconds: next } = r.sla;
  if (first !== null || next !== null) parts.push(`response targets ${first ?? '–'} s / ${next ?? '–'} s`);
  const priorities = TICKET_PRIORITIES.filter((p) => r.sla.byPriority[p] !== undefined);
  if (priorities.length > 0) parts.push(`targets by priority (${priorities.join(', ')})`);
  if (r.sla.clock === 'business_hours' && (first !== null || next !== null || priorities.length > 0)) parts.push('targets count business hours only');
  return parts.join(' · ');
}

let zones: string[] | null = null;
function timeZones(): string[] {
  if (zones === null) {
    try {
      zones = Intl.supportedValuesOf('timeZone');
    } catch {
      zones = [];
    }
  }
  return zones;
}

/**
 * A channel's routing: who answers first, the bot's fallback to the queue,
 * auto-assignment and business hours (`PATCH /v1/channels/{id}` with
 * `routing`; see docs/routing.md). The API's refusals stand next to the
 * fields they name.
 */
export function RoutingSettings({ channel, onSaved }: { channel: ChannelDetail; onSaved: () => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(channel.routing));
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const set = (patch: Partial<Draft>) => {
    setDraft({ ...draft, ...patch });
    setSaved(false);
  };
  const err = (field: string, nested = false) => errorAt(errors, `routing.${field}`, nested);
  const uid = `routing-${channel.id}`;

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setSaved(false);
    try {
      await ok(api.PATCH('/v1/channels/{channelId}', { params: { path: { channelId: channel.id } }, body: { routing: patchOf(draft) } }));
      setErrors(NO_ERRORS);
      setSaved(true);
      onSaved();
    } catch (x) {
      setErrors(formErrors(x));
    } finally {
      setBusy(false);
    }
  };

  const fallbackErr = err('botFallbackSeconds');
  const capacityErr = err('autoAssign', true);
  const zoneErr = err('businessHours.timeZone');
  const awayErr = err('businessHours.awayReply');
  const firstErr = err('sla.firstResponseSeconds');
  const nextErr = err('sla.nextResponseSeconds');
  return (
    <form class="stack routing" onSubmit={(e) => void save(e)} noValidate aria-label={`Routing of ${channel.name}`} data-testid="routing-settings">
      <fieldset>
        <legend>Who answers first</legend>
        <label class="check">
          <input type="radio" name={`${uid}-first`} checked={draft.firstResponder === 'bot'} onChange={() => set({ firstResponder: 'bot' })} /> The bot (events go to your webhooks and MCP clients; a person gets the conversation on a handover)
        </label>
        <label class="check">
          <input type="radio" name={`${uid}-first`} checked={draft.firstResponder === 'agents'} onChange={() => set({ firstResponder: 'agents' })} /> Agents (every new conversation goes straight to the queue)
        </label>
        <FieldError id={`${uid}-first-err`} message={err('firstResponder')} />
        <div class="row wrap">
          <label class="check">
            <input type="checkbox" checked={draft.fallbackOn} disabled={draft.firstResponder !== 'bot'} onChange={(e) => set({ fallbackOn: e.currentTarget.checked })} /> Queue the conversation when the bot has not answered
          </label>
          <label>
            Bot fallback (seconds)
            <input inputMode="numeric" class="short" value={draft.fallbackSeconds} disabled={draft.firstResponder !== 'bot' || !draft.fallbackOn} onInput={(e) => set({ fallbackSeconds: e.currentTarget.value })} {...invalid(`${uid}-fallback-err`, fallbackErr)} />
          </label>
          <FieldError id={`${uid}-fallback-err`} message={fallbackErr} />
        </div>
      </fieldset>

      <fieldset>
        <legend>Auto-assignment</legend>
        <div class="row wrap">
          <label class="check">
            <input type="checkbox" checked={draft.autoAssign} onChange={(e) => set({ autoAssign: e.currentTarget.checked })} /> Assign queued conversations automatically
          </label>
          <label>
            Capacity per agent (empty: no limit)
            <input inputMode="numeric" class="short" value={draft.capacity} onInput={(e) => set({ capacity: e.currentTarget.value })} {...invalid(`${uid}-capacity-err`, capacityErr)} />
          </label>
          <FieldError id={`${uid}-capacity-err`} message={capacityErr} />
        </div>
        <p class="muted small">Online agents get queued conversations in turn, up to this many open ones each; an agent's own capacity (Settings → Users) can lower it for them.</p>
      </fieldset>

      <fieldset>
        <legend>Business hours</legend>
        <label class="check">
          <input type="checkbox" checked={draft.hoursOn} onChange={(e) => set({ hoursOn: e.currentTarget.checked })} /> Use business hours (otherwise always open)
        </label>
        {draft.hoursOn && (
          <div class="stack">
            <label>
              Time zone
              <input list={`${uid}-zones`} value={draft.timeZone} onInput={(e) => set({ timeZone: e.currentTarget.value })} {...invalid(`${uid}-zone-err`, zoneErr)} />
            </label>
            <datalist id={`${uid}-zones`}>
              {timeZones().map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
            <FieldError id={`${uid}-zone-err`} message={zoneErr} />
            <WeeklyHours uid={uid} weekly={draft.weekly} errors={errors} onChange={(weekly) => set({ weekly })} />
            <Holidays uid={uid} holidays={draft.holidays} errors={errors} onChange={(holidays) => set({ holidays })} />
            <label>
              Away reply (sent once per conversation to a customer who writes outside the hours; empty: none)
              <textarea rows={2} maxLength={1024} value={draft.awayReply} onInput={(e) => set({ awayReply: e.currentTarget.value })} {...invalid(`${uid}-away-err`, awayErr)} />
            </label>
            <FieldError id={`${uid}-away-err`} message={awayErr} />
          </div>
        )}
      </fieldset>

      <fieldset>
        <legend>Response-time targets (SLA)</legend>
        <div class="row wrap">
          <label>
            First response (seconds; empty: none)
            <input inputMode="numeric" class="short" value={draft.firstResponse} onInput={(e) => set({ firstResponse: e.currentTarget.value })} {...invalid(`${uid}-first-response-err`, firstErr)} />
          </label>
          <FieldError id={`${uid}-first-response-err`} message={firstErr} />
          <label>
            Next response (seconds; empty: none)
            <input inputMode="numeric" class="short" value={draft.nextResponse} onInput={(e) => set({ nextResponse: e.currentTarget.value })} {...invalid(`${uid}-next-response-err`, nextErr)} />
          </label>
          <FieldError id={`${uid}-next-response-err`} message={nextErr} />
        </div>
        <fieldset>
          <legend>By priority (the priority of the contact's open ticket; empty: the channel's targets above)</legend>
          <table class="by-priority">
            <thead>
              <tr>
                <th scope="col">Priority</th>
                <th scope="col">First response (s)</th>
                <th scope="col">Next response (s)</th>
              </tr>
            </thead>
            <tbody>
              {TICKET_PRIORITIES.map((p) => {
                const t = draft.byPriority[p];
                const edit = (patch: Partial<{ first: string; next: string }>) => set({ byPriority: { ...draft.byPriority, [p]: { ...t, ...patch } } });
                const pFirstErr = err(`sla.byPriority.${p}.firstResponseSeconds`) ?? err(`sla.byPriority.${p}`);
                const pNextErr = err(`sla.byPriority.${p}.nextResponseSeconds`);
                return (
                  <tr key={p} data-priority={p}>
                    <th scope="row">{PRIORITY_NAMES[p]}</th>
                    <td>
                      <input aria-label={`${PRIORITY_NAMES[p]} first response (seconds)`} inputMode="numeric" class="short" value={t.first} onInput={(e) => edit({ first: e.currentTarget.value })} {...invalid(`${uid}-${p}-first-err`, pFirstErr)} />
                      <FieldError id={`${uid}-${p}-first-err`} message={pFirstErr} />
                    </td>
                    <td>
                      <input aria-label={`${PRIORITY_NAMES[p]} next response (seconds)`} inputMode="numeric" class="short" value={t.next} onInput={(e) => edit({ next: e.currentTarget.value })} {...invalid(`${uid}-${p}-next-err`, pNextErr)} />
                      <FieldError id={`${uid}-${p}-next-err`} message={pNextErr} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </fieldset>
        <label class="check">
          <input type="checkbox" checked={draft.slaClock === 'business_hours'} onChange={(e) => set({ slaClock: e.currentTarget.checked ? 'business_hours' : 'calendar' })} /> Count only business hours (time while the channel is closed does not count; without business hours every second counts)
        </label>
        <FieldError id={`${uid}-sla-clock-err`} message={err('sla.clock')} />
        <p class="muted small">A conversation whose customer waits longer for an agent's answer is flagged in the views and announced once (<code>conversation.sla_breached</code>).</p>
      </fieldset>

      <div class="row wrap">
        <button type="submit" class="primary" disabled={busy}>Save routing</button>
        {saved && <span role="status" class="muted small">Saved.</span>}
      </div>
      {errors.message && <p class="error" role="alert">{errors.message}</p>}
    </form>
  );
}

function WeeklyHours({ uid, weekly, errors, onChange }: { uid: string; weekly: Record<Weekday, Opening[]>; errors: FormErrors; onChange: (w: Record<Weekday, Opening[]>) => void }) {
  const setDay = (day: Weekday, openings: Opening[]) => onChange({ ...weekly, [day]: openings });
  const copyMonday = () => onChange({ ...weekly, ...Object.fromEntries(WEEKDAYS.slice(1, 5).map((d) => [d, weekly.mon.map((o) => ({ ...o }))])) });
  return (
    <fieldset class="weekly">
      <legend>Weekly hours (local time, HH:MM; 24:00 is the end of the day)</legend>
      <table>
        <tbody>
          {WEEKDAYS.map((day) => {
            const dayErr = errorAt(errors, `routing.businessHours.weekly.${day}`);
            return (
              <tr key={day} data-day={day}>
                <th scope="row">{DAY_NAMES[day]}</th>
                <td>
                  {weekly[day].length === 0 && <span class="muted">Closed</span>}
                  {weekly[day].map((o, i) => {
                    const fromErr = errorAt(errors, `routing.businessHours.weekly.${day}.${i}.from`);
                    const toErr = errorAt(errors, `routing.businessHours.weekly.${day}.${i}.to`) ?? errorAt(errors, `routing.businessHours.weekly.${day}.${i}`);
                    const edit = (patch: Partial<Opening>) => setDay(day, weekly[day].map((x, j) => (j === i ? { ...x, ...patch } : x)));
                    const label = `${DAY_NAMES[day]} opening ${i + 1}`;
                    return (
                      <div key={i} class="row opening">
                        <input aria-label={`${label} from`} class="time" placeholder="09:00" value={o.from} onInput={(e) => edit({ from: e.currentTarget.value })} {...invalid(`${uid}-${day}-${i}-from-err`, fromErr)} />
                        <span aria-hidden="true">–</span>
                        <input aria-label={`${label} to`} class="time" placeholder="17:00" value={o.to} onInput={(e) => edit({ to: e.currentTarget.value })} {...invalid(`${uid}-${day}-${i}-to-err`, toErr)} />
                        <button type="button" class="link" aria-label={`Remove ${label}`} onClick={() => setDay(day, weekly[day].filter((_, j) => j !== i))}>×</button>
                        <FieldError id={`${uid}-${day}-${i}-from-err`} message={fromErr} />
                        <FieldError id={`${uid}-${day}-${i}-to-err`} message={toErr} />
                      </div>
                    );
                  })}
                  <FieldError id={`${uid}-${day}-err`} message={dayErr} />
                </td>
                <td>
                  <button type="button" aria-label={`Add an opening on ${DAY_NAMES[day]}`} onClick={() => setDay(day, [...weekly[day], weekly[day].length === 0 ? { from: '09:00', to: '17:00' } : { from: '', to: '' }])}>
                    Add opening
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <button type="button" onClick={copyMonday}>Copy Monday to Tuesday–Friday</button>
    </fieldset>
  );
}

function Holidays({ uid, holidays, errors, onChange }: { uid: string; holidays: string[]; errors: FormErrors; onChange: (h: string[]) => void }) {
  const [date, setDate] = useState('');
  const add = () => {
    if (date === '' || holidays.includes(date)) return;
    onChange([...holidays, date].sort());
    setDate('');
  };
  return (
    <fieldset class="holidays">
      <legend>Holidays (closed all day)</legend>
      {holidays.length === 0 && <p class="muted small">None.</p>}
      <ul class="plain" data-testid="holidays">
        {holidays.map((h, i) => {
          const e = errorAt(errors, `routing.businessHours.holidays.${i}`);
          return (
            <li key={h} class="row">
              <span {...invalid(`${uid}-holiday-${i}-err`, e)}>{h}</span>
              <button type="button" class="link" aria-label={`Remove holiday ${h}`} onClick={() => onChange(holidays.filter((x) => x !== h))}>×</button>
              <FieldError id={`${uid}-holiday-${i}-err`} message={e} />
            </li>
          );
        })}
      </ul>
      <div class="row">
        <label>
          Holiday
          <input type="date" value={date} onInput={(e) => setDate(e.currentTarget.value)} />
        </label>
        <button type="button" onClick={add} disabled={date === ''}>Add holiday</button>
      </div>
      <FieldError id={`${uid}-holidays-err`} message={errorAt(errors, 'routing.businessHours.holidays')} />
    </fieldset>
  );
}
