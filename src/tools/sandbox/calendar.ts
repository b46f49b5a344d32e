import { randomBytes } from 'node:crypto';
import type { SandboxProviderRecords } from '../../store/sandbox-providers/port.js';
import { formatInZone, hasOffset, isTimeZone, toEpoch } from '../providers/timezone.js';
import { googleError, type SandboxReply } from './google-errors.js';

interface Time {
  dateTime?: string;
  date?: string;
  timeZone?: string;
}

interface StoredEvent {
  id: string;
  calendarId: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  summary?: string;
  description?: string;
  location?: string;
  start: Time;
  end: Time;
  attendees?: { email: string; responseStatus: string; optional?: boolean; displayName?: string }[];
  organizer: { email: string; self: true };
  created: string;
  updated: string;
  transparency?: 'opaque' | 'transparent';
  startMs: number;
  endMs: number;
}

interface Cal {
  id: string;
  summary: string;
  timeZone: string;
  primary: boolean;
}

const eventId = () => BigInt('0x' + randomBytes(10).toString('hex')).toString(32).padStart(16, '0');

/**
 * The sandbox calendar: Google Calendar API v3 with its shapes and errors:
 * calendar list, free/busy, events list/get/insert/patch/delete (deleted
 * events stay as `cancelled`; a second delete is 410). Times are instants:
 * a `dateTime` without offset is read in its `timeZone` (required then, as
 * Google does), and answers are given in the requested or the calendar's
 * time zone. Each user has a primary calendar (their address, Europe/Berlin)
 * and a "Team" calendar.
 */
export class SandboxCalendar {
  constructor(
    private readonly db: SandboxProviderRecords,
    private readonly publicUrl: () => string,
  ) {}

  async seed(email: string): Promise<void> {
    const cals: Cal[] = [
      { id: email, summary: email, timeZone: 'Europe/Berlin', primary: true },
      { id: `team-${randomBytes(4).toString('hex')}@group.calendar.sandbox`, summary: 'Team', timeZone: 'UTC', primary: false },
    ];
    await this.db.put('sbCalendars', email, cals);
    const day = new Date();
    day.setUTCDate(day.getUTCDate() + 1);
    const d = day.toISOString().slice(0, 10);
    await this.insert(email, email, { summary: 'Team stand-up', start: { dateTime: `${d}T09:30:00`, timeZone: 'Europe/Berlin' }, end: { dateTime: `${d}T10:00:00`, timeZone: 'Europe/Berlin' } }, {});
  }

  private async cals(email: string): Promise<Cal[]> {
    return (await this.db.get<Cal[]>('sbCalendars', email)) ?? [];
  }

  private async cal(email: string, id: string): Promise<Cal | undefined> {
    const want = id === 'primary' ? email : id;
    return (await this.cals(email)).find((c) => c.id === want);
  }

  async calendarList(email: string): Promise<SandboxReply> {
    return {
      status: 200,
      body: { kind: 'calendar#calendarList', items: (await this.cals(email)).map((c) => ({ kind: 'calendar#calendarListEntry', id: c.id, summary: c.summary, timeZone: c.timeZone, accessRole: 'owner', ...(c.primary ? { primary: true } : {}) })) },
    };
  }

  private async events(calId: string): Promise<StoredEvent[]> {
    return (await this.db.values<StoredEvent>('sbEvents')).filter((e) => e.calendarId === calId);
  }

  private render(e: StoredEvent, tz: string): Record<string, unknown> {
    const t = (x: Time, ms: number) => (x.date !== undefined ? { date: x.date } : { dateTime: formatInZone(ms, x.timeZone ?? tz), ...(x.timeZone ? { timeZone: x.timeZone } : {}) });
    const { startMs, endMs, calendarId: _c, ...rest } = e;
    return { kind: 'calendar#event', etag: `"${Date.parse(e.updated)}"`, htmlLink: `${this.publicUrl()}/sandbox/providers/calendar/event?eid=${e.id}`, ...rest, start: t(e.start, startMs), end: t(e.end, endMs), iCalUID: `${e.id}@sandbox` };
  }

  private readTime(x: unknown, which: string): { time: Time; ms: number } | SandboxReply {
    if (x === null || typeof x !== 'object') return googleError(400, `Missing ${which} time.`);
    const t = x as Time;
    if (t.timeZone !== undefined && !isTimeZone(t.timeZone)) return googleError(400, `Invalid time zone definition for ${which} time.`);
    if (typeof t.date === 'string') {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(t.date)) return googleError(400, `Invalid ${which} date.`);
      return { time: { date: t.date }, ms: Date.parse(`${t.date}T00:00:00Z`) };
    }
    if (typeof t.dateTime !== 'string') return googleError(400, `Missing ${which} time.`);
    if (!hasOffset(t.dateTime) && t.timeZone === undefined) return googleError(400, `Missing time zone definition for ${which} time.`);
    const ms = toEpoch(t.dateTime, t.timeZone);
    if (Number.isNaN(ms)) return googleError(400, `Invalid ${which} time.`);
    return { time: { dateTime: t.dateTime, ...(t.timeZone ? { timeZone: t.timeZone } : {}) }, ms };
  }

  async insert(email: string, calendarId: string, body: Record<string, unknown>, _q: Record<string, unknown>): Promise<SandboxReply> {
    const cal = await this.cal(email, calendarId);
    if (cal === undefined) return googleError(404, 'Not Found');
    const s = this.readTime(body?.start, 'start');
    if ('status' in s) return s;
    const e = this.readTime(body?.end, 'end');
    if ('status' in e) return e;
    if (e.ms <= s.ms) return googleError(400, 'The specified time range is empty.');
    const now = new Date().toISOString();
    const attendees = Array.isArray(body.attendees) ? (body.attendees as { email?: unknown; optional?: unknown; displayName?: unknown }[]) : undefined;
    if (attendees?.some((a) => typeof a?.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(a.email))) return googleError(400, 'Invalid attendee email.');
    const ev: StoredEvent = {
      id: eventId(),
      calendarId: cal.id,
      status: body.status === 'tentative' ? 'tentative' : 'confirmed',
      ...(typeof body.summary === 'string' ? { summary: body.summary } : {}),
      ...(typeof body.description === 'string' ? { description: body.description } : {}),
      ...(typeof body.location === 'string' ? { location: body.location } : {}),
      start: s.time,
      end: e.time,
      ...(attendees ? { attendees: attendees.map((a) => ({ email: String(a.email).toLowerCase(), responseStatus: 'needsAction', ...(a.optional === true ? { optional: true } : {}), ...(typeof a.displayName === 'string' ? { displayName: a.displayName } : {}) })) } : {}),
      organizer: { email, self: true },
      created: now,
      updated: now,
      ...(body.transparency === 'transparent' ? { transparency: 'transparent' as const } : {}),
      startMs: s.ms,
      endMs: e.ms,
    };
    await this.db.put('sbEvents', ev.id, ev);
    return { status: 200, body: this.render(ev, cal.timeZone) };
  }

  async list(email: string, calendarId: string, q: Record<string, unknown>): Promise<SandboxReply> {
    const cal = await this.cal(email, calendarId);
    if (cal === undefined) return googleError(404, 'Not Found');
    const tz = typeof q.timeZone === 'string' ? q.timeZone : cal.timeZone;
    if (!isTimeZone(tz)) return googleError(400, 'Invalid time zone.');
    const min = typeof q.timeMin === 'string' ? Date.parse(q.timeMin) : -Infinity;
    const max = typeof q.timeMax === 'string' ? Date.parse(q.timeMax) : Infinity;
    if (Number.isNaN(min) || Number.isNaN(max) || (typeof q.timeMin === 'string' && !hasOffset(q.timeMin)) || (typeof q.timeMax === 'string' && !hasOffset(q.timeMax))) return googleError(400, 'Bad Request');
    if (max < min) return googleError(400, 'The specified time range is empty.');
    const maxResults = q.maxResults === undefined ? 250 : Number(q.maxResults);
    if (!Number.isInteger(maxResults) || maxResults < 1 || maxResults > 2500) return googleError(400, 'Invalid value for maxResults');
    const text = typeof q.q === 'string' ? q.q.toLowerCase() : '';
    const all = (await this.events(cal.id))
      .filter((e) => e.status !== 'cancelled' || q.showDeleted === 'true')
      .filter((e) => e.endMs > min && e.startMs < max)
      .filter((e) => text === '' || `${e.summary ?? ''} ${e.description ?? ''} ${e.location ?? ''} ${(e.attendees ?? []).map((a) => a.email).join(' ')}`.toLowerCase().includes(text))
      .sort((a, b) => a.startMs - b.startMs || a.id.localeCompare(b.id));
    const start = typeof q.pageToken === 'string' && /^\d+$/.test(q.pageToken) ? Number(q.pageToken) : 0;
    return {
      status: 200,
      body: { kind: 'calendar#events', summary: cal.summary, timeZone: tz, items: all.slice(start, start + maxResults).map((e) => this.render(e, tz)), ...(start + maxResults < all.length ? { nextPageToken: String(start + maxResults) } : {}) },
    };
  }

  async get(email: string, calendarId: string, id: string, q: Record<string, unknown>): Promise<SandboxReply> {
    const cal = await this.cal(email, calendarId);
    const e = await this.db.get<StoredEvent>('sbEvents', id);
    if (cal === undefined || e === undefined || e.calendarId !== cal.id) return googleError(404, 'Not Found');
    return { status: 200, body: this.render(e, typeof q.timeZone === 'string' && isTimeZone(q.timeZone) ? q.timeZone : cal.timeZone) };
  }

  async patch(email: string, calendarId: string, id: string, body: Record<string, unknown>): Promise<SandboxReply> {
    const cal = await this.cal(email, calendarId);
    const e = await this.db.get<StoredEvent>('sbEvents', id);
    if (cal === undefined || e === undefined || e.calendarId !== cal.id) return googleError(404, 'Not Found');
    if (e.status === 'cancelled') return googleError(410, 'Resource has been deleted');
    let next: StoredEvent = { ...e, updated: new Date().toISOString() };
    for (const k of ['summary', 'description', 'location'] as const) if (typeof body?.[k] === 'string') next = { ...next, [k]: body[k] };
    if (body?.start !== undefined) {
      const s = this.readTime(body.start, 'start');
      if ('status' in s) return s;
      next = { ...next, start: s.time, startMs: s.ms };
    }
    if (body?.end !== undefined) {
      const t = this.readTime(body.end, 'end');
      if ('status' in t) return t;
      next = { ...next, end: t.time, endMs: t.ms };
    }
    if (next.endMs <= next.startMs) return googleError(400, 'The specified time range is empty.');
    if (Array.isArray(body?.attendees)) {
      const list = body.attendees as { email?: unknown }[];
      if (list.some((a) => typeof a?.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(a.email))) return googleError(400, 'Invalid attendee email.');
      next = { ...next, attendees: list.map((a) => ({ email: String(a.email).toLowerCase(), responseStatus: e.attendees?.find((x) => x.email === String(a.email).toLowerCase())?.responseStatus ?? 'needsAction' })) };
    }
    await this.db.put('sbEvents', id, next);
    return { status: 200, body: this.render(next, cal.timeZone) };
  }

  async remove(email: string, calendarId: string, id: string): Promise<SandboxReply> {
    const cal = await this.cal(email, calendarId);
    const e = await this.db.get<StoredEvent>('sbEvents', id);
    if (cal === undefined || e === undefined || e.calendarId !== cal.id) return googleError(404, 'Not Found');
    if (e.status === 'cancelled') return googleError(410, 'Resource has been deleted');
    await this.db.put('sbEvents', id, { ...e, status: 'cancelled', updated: new Date().toISOString() });
    return { status: 204 };
  }

  async freeBusy(email: string, body: Record<string, unknown>): Promise<SandboxReply> {
    const min = typeof body?.timeMin === 'string' ? Date.parse(body.timeMin) : NaN;
    const max = typeof body?.timeMax === 'string' ? Date.parse(body.timeMax) : NaN;
    if (Number.isNaN(min) || Number.isNaN(max)) return googleError(400, 'Bad Request');
    if (max <= min) return googleError(400, 'The specified time range is empty.');
    if (max - min > 62 * 86_400_000) return googleError(400, 'The requested time range is too long.');
    const tz = typeof body.timeZone === 'string' ? body.timeZone : 'UTC';
    if (!isTimeZone(tz)) return googleError(400, 'Invalid time zone.');
    const items = Array.isArray(body.items) ? (body.items as { id?: unknown }[]) : [];
    const calendars: Record<string, unknown> = {};
    for (const it of items) {
      const id = String(it?.id ?? '');
      const cal = await this.cal(email, id);
      if (cal === undefined) {
        calendars[id] = { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] };
        continue;
      }
      const spans = (await this.events(cal.id))
        .filter((e) => e.status !== 'cancelled' && e.transparency !== 'transparent' && e.endMs > min && e.startMs < max)
        .map((e) => [Math.max(min, e.startMs), Math.min(max, e.endMs)] as [number, number])
        .sort((a, b) => a[0] - b[0]);
      const merged: [number, number][] = [];
      for (const s of spans) {
        const last = merged[merged.length - 1];
        if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
        else merged.push([...s]);
      }
      calendars[id] = { busy: merged.map(([a, b]) => ({ start: formatInZone(a, tz), end: formatInZone(b, tz) })) };
    }
    return { status: 200, body: { kind: 'calendar#freeBusy', timeMin: new Date(min).toISOString(), timeMax: new Date(max).toISOString(), calendars } };
  }
}
