import { AppError } from '../../errors.js';
import { ProviderHttp } from './http.js';

/** An event time: `dateTime` (RFC 3339) with an optional IANA `timeZone`, or `date` for all-day events. */
export interface CalendarTime {
  dateTime?: string;
  date?: string;
  timeZone?: string;
}

/** Events resource (the fields the tools use). */
export interface CalendarEvent {
  id: string;
  status?: string;
  htmlLink?: string;
  summary?: string;
  description?: string;
  location?: string;
  start?: CalendarTime;
  end?: CalendarTime;
  attendees?: { email: string; responseStatus?: string; optional?: boolean; displayName?: string }[];
  organizer?: { email?: string; displayName?: string };
  created?: string;
  updated?: string;
}

export interface CalendarListEntry {
  id: string;
  summary?: string;
  description?: string;
  timeZone?: string;
  primary?: boolean;
  accessRole?: string;
}

function shape<T>(v: unknown, check: (o: Record<string, unknown>) => boolean, what: string): T {
  if (v === null || typeof v !== 'object' || !check(v as Record<string, unknown>)) {
    throw new AppError(503, 'provider_bad_response', `Google Calendar answered ${what} in a shape its API does not have; try again later`, undefined, { retryAfterSeconds: 10 });
  }
  return v as T;
}

/** The Google Calendar REST API (v3): calendar list, free/busy, events. */
export class CalendarClient {
  private readonly http: ProviderHttp;
  constructor(
    private readonly baseUrl: () => string,
    timeoutMs: number,
  ) {
    this.http = new ProviderHttp('Google Calendar', timeoutMs);
  }

  private async call(token: string, method: string, path: string, opts: { query?: Record<string, string | undefined>; json?: unknown } = {}): Promise<unknown> {
    const u = new URL(`${this.baseUrl().replace(/\/+$/, '')}/calendar/v3${path}`);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) u.searchParams.set(k, v);
    return (await this.http.send(u.toString(), { method, headers: { authorization: `Bearer ${token}` }, json: opts.json })).json;
  }

  async listCalendars(token: string): Promise<CalendarListEntry[]> {
    const r = shape<{ items?: CalendarListEntry[] }>(await this.call(token, 'GET', '/users/me/calendarList'), (o) => o.items === undefined || Array.isArray(o.items), 'the calendar list');
    return r.items ?? [];
  }

  async freeBusy(token: string, p: { timeMin: string; timeMax: string; timeZone?: string; calendarIds: string[] }): Promise<Record<string, { busy: { start: string; end: string }[]; errors?: { domain?: string; reason: string }[] }>> {
    const r = shape<{ calendars?: Record<string, { busy?: { start: string; end: string }[]; errors?: { reason: string }[] }> }>(
      await this.call(token, 'POST', '/freeBusy', { json: { timeMin: p.timeMin, timeMax: p.timeMax, timeZone: p.timeZone, items: p.calendarIds.map((id) => ({ id })) } }),
      (o) => typeof o.calendars === 'object' && o.calendars !== null,
      'free/busy',
    );
    return Object.fromEntries(Object.entries(r.calendars ?? {}).map(([id, c]) => [id, { busy: c.busy ?? [], ...(c.errors ? { errors: c.errors } : {}) }]));
  }

  async listEvents(token: string, calendarId: string, p: { timeMin?: string; timeMax?: string; q?: string; maxResults: number; pageToken?: string; timeZone?: string }): Promise<{ items: CalendarEvent[]; nextPageToken?: string; timeZone?: string }> {
    const r = shape<{ items?: CalendarEvent[]; nextPageToken?: string; timeZone?: string }>(
      await this.call(token, 'GET', `/calendars/${encodeURIComponent(calendarId)}/events`, {
        query: { timeMin: p.timeMin, timeMax: p.timeMax, q: p.q, maxResults: String(p.maxResults), pageToken: p.pageToken, timeZone: p.timeZone, singleEvents: 'true', orderBy: 'startTime' },
      }),
      (o) => o.items === undefined || Array.isArray(o.items),
      'an event list',
    );
    return { items: r.items ?? [], nextPageToken: r.nextPageToken, timeZone: r.timeZone };
  }

  async getEvent(token: string, calendarId: string, eventId: string, timeZone?: string): Promise<CalendarEvent> {
    return shape(await this.call(token, 'GET', `/calendars/${encodeURIComponent(calendarId)}/events/${encodeURIComponent(eventId)}`, { query: { timeZone } }), (o) => typeof o.id === 'string', 'an event');
  }

  async insertEvent(token: string, calendarId: string, event: Omit<CalendarEvent, 'id'>, sendUpdates: 'all' | 'none'): Promise<CalendarEvent> {
    return shape(await this.call(token, 'POST', `/calendars/${encodeURIComponent(calendarId)}/events`, { query: { sendUpdates }, json: event }), (o) => typeof o.id === 'string', 'a created event');
  }

  async patchEvent(token: string, calendarId: string, eventId: string, patch: Partial<CalendarEvent>, sendUpdates: 'all' | 'none'): Promise<CalendarEvent> {
    return shape(
      await this.call(token, 'PATCH', `/calendars/${encodeURIComponent(calendarId)}/events/${encodeURIComponent(eventId)}`, { query: { sendUpdates }, json: patch }),
      (o) => typeof o.id === 'string',
      'an updated event',
    );
  }

  async deleteEvent(token: string, calendarId: string, eventId: string, sendUpdates: 'all' | 'none'): Promise<void> {
    await this.call(token, 'DELETE', `/calendars/${encodeURIComponent(calendarId)}/events/${encodeURIComponent(eventId)}`, { query: { sendUpdates } });
  }
}
