import { z } from 'zod';
import { AppError } from '../errors.js';
import { defineTool, type ToolDef } from '../mcp/index.js';
import type { CalendarEvent, CalendarTime } from './providers/gcal.js';
import { formatInZone, hasOffset, isTimeZone } from './providers/timezone.js';
import { sessionOf } from './session.js';

/*
 * The calendar tools: Google Calendar through the connected account's OAuth
 * grant. Times are RFC 3339; a time without offset is read in `timeZone`.
 */

const calendarId = z.string().trim().min(1).max(300).default('primary').describe('Calendar id from list_calendars; "primary" (default) is the user\'s main calendar.');
const eventId = z.string().regex(/^[A-Za-z0-9_-]{1,1024}$/, 'an event id from list_events').describe('The event id from list_events or create_event.');
const timeZone = z.string().max(100).refine(isTimeZone, 'an IANA time zone such as Europe/Berlin or America/New_York').describe('IANA time zone, e.g. "Europe/Berlin". Answers are given in it; times without an offset are read in it.');
const instant = z.string().refine((v) => hasOffset(v) && !Number.isNaN(Date.parse(v)), 'an RFC 3339 date-time with offset, e.g. 2026-11-24T10:00:00+01:00 or 2026-11-24T09:00:00Z');
const when = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/i, 'a date (2026-11-24, all-day) or date-time (2026-11-24T10:00:00, with +01:00 or Z, or with timeZone)');

const timeSchema = z.object({ dateTime: z.string().nullable(), date: z.string().nullable().describe('Set for all-day events.'), timeZone: z.string().nullable() });
const eventSchema = z.object({
  id: z.string(),
  status: z.string(),
  summary: z.string(),
  description: z.string().nullable(),
  location: z.string().nullable(),
  start: timeSchema,
  end: timeSchema,
  attendees: z.array(z.object({ email: z.string(), responseStatus: z.string() })),
  organizer: z.string().nullable(),
  htmlLink: z.string().nullable(),
});

function eventView(e: CalendarEvent): z.input<typeof eventSchema> {
  const t = (x: CalendarTime | undefined) => ({ dateTime: x?.dateTime ?? null, date: x?.date ?? null, timeZone: x?.timeZone ?? null });
  return {
    id: e.id,
    status: e.status ?? 'confirmed',
    summary: e.summary ?? '(no title)',
    description: e.description ?? null,
    location: e.location ?? null,
    start: t(e.start),
    end: t(e.end),
    attendees: (e.attendees ?? []).map((a) => ({ email: a.email, responseStatus: a.responseStatus ?? 'needsAction' })),
    organizer: e.organizer?.email ?? null,
    htmlLink: e.htmlLink ?? null,
  };
}

/** A tool argument as the API's time: all-day `date`, or `dateTime` with the offset or the time zone it needs. */
function toTime(v: string, tz: string | undefined, field: string): CalendarTime {
  if (/^\d{4}-\d{2}-\d{2}$/.test(v)) return { date: v };
  const dt = /T\d{2}:\d{2}$/.test(v) ? `${v}:00` : v;
  if (!hasOffset(dt) && tz === undefined) throw new AppError(400, 'validation_failed', `${field} "${v}" has no UTC offset: add one (e.g. +01:00 or Z) or give timeZone`, [{ field, message: 'needs an offset or timeZone' }]);
  return { dateTime: dt, ...(tz ? { timeZone: tz } : {}) };
}

const notify = z.boolean().default(true).describe('Email the attendees about the change (default true).');

export function calendarTools(): ToolDef[] {
  return [
    defineTool({
      name: 'list_calendars',
      title: 'List calendars',
      description: 'List the calendars of the connected account with their ids, names, time zones and which is primary. Use an id as calendarId in the other tools; "primary" always means the main calendar.',
      scopes: [],
      input: z.object({}).strict(),
      output: z.object({ calendars: z.array(z.object({ id: z.string(), name: z.string(), timeZone: z.string().nullable(), primary: z.boolean(), accessRole: z.string().nullable() })) }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx) => {
        const s = sessionOf(ctx);
        const cals = await s.withToken((t) => s.calendar.listCalendars(t));
        return { calendars: cals.map((c) => ({ id: c.id, name: c.summary ?? c.id, timeZone: c.timeZone ?? null, primary: c.primary === true, accessRole: c.accessRole ?? null })) };
      },
    }),
    defineTool({
      name: 'check_availability',
      title: 'Check availability',
      description:
        'Find when the user is busy and free between two instants, from the calendars\' free/busy data (event details are not shown). Returns the busy intervals per calendar and the free intervals common to all of them, ' +
        'in timeZone (default UTC). Use it before proposing or creating a meeting. The window may be at most 62 days.',
      scopes: [],
      input: z
        .object({
          timeMin: instant.describe('Start of the window, RFC 3339 with offset.'),
          timeMax: instant.describe('End of the window, RFC 3339 with offset.'),
          calendarIds: z.array(z.string().trim().min(1).max(300)).min(1).max(20).default(['primary']).describe('Calendars to check (default the primary one).'),
          timeZone: timeZone.optional(),
          minimumFreeMinutes: z.number().int().min(1).max(1440).default(15).describe('Leave out free gaps shorter than this (default 15).'),
        })
        .strict()
        .refine((v) => Date.parse(v.timeMax) > Date.parse(v.timeMin), { message: 'timeMax must be after timeMin', path: ['timeMax'] }),
      output: z.object({
        timeZone: z.string(),
        calendars: z.array(z.object({ calendarId: z.string(), busy: z.array(z.object({ start: z.string(), end: z.string() })), error: z.string().nullable() })),
        free: z.array(z.object({ start: z.string(), end: z.string() })),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        const tz = a.timeZone ?? 'UTC';
        const fb = await s.withToken((t) => s.calendar.freeBusy(t, { timeMin: a.timeMin, timeMax: a.timeMax, timeZone: tz, calendarIds: a.calendarIds }));
        const calendars = a.calendarIds.map((id) => {
          const c = fb[id];
          return { calendarId: id, busy: c?.busy ?? [], error: c?.errors?.[0]?.reason ?? (c === undefined ? 'notFound' : null) };
        });
        const busy = calendars.flatMap((c) => c.busy.map((b) => [Date.parse(b.start), Date.parse(b.end)] as const)).sort((x, y) => x[0] - y[0]);
        const free: { start: string; end: string }[] = [];
        let cursor = Date.parse(a.timeMin);
        const end = Date.parse(a.timeMax);
        const fmt = (ms: number) => formatInZone(ms, tz);
        for (const [bs, be] of busy) {
          if (bs - cursor >= a.minimumFreeMinutes * 60_000) free.push({ start: fmt(cursor), end: fmt(bs) });
          cursor = Math.max(cursor, be);
        }
        if (end - cursor >= a.minimumFreeMinutes * 60_000) free.push({ start: fmt(cursor), end: fmt(end) });
        return { timeZone: tz, calendars, free };
      },
    }),
    defineTool({
      name: 'list_events',
      title: 'List events',
      description:
        'List events of a calendar in time order (recurring events expanded into single occurrences), optionally between timeMin and timeMax and matching a text query (title, description, location, attendees). ' +
        'Times are given in timeZone (default: the calendar\'s). Ask for more with nextPageToken.',
      scopes: [],
      input: z
        .object({
          calendarId,
          timeMin: instant.optional().describe('Only events ending after this instant.'),
          timeMax: instant.optional().describe('Only events starting before this instant.'),
          query: z.string().trim().min(1).max(200).optional().describe('Free-text search.'),
          maxResults: z.number().int().min(1).max(100).default(25).describe('1 to 100 (default 25).'),
          pageToken: z.string().max(200).optional(),
          timeZone: timeZone.optional(),
        })
        .strict(),
      output: z.object({ timeZone: z.string().nullable(), events: z.array(eventSchema), nextPageToken: z.string().nullable() }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        const r = await s.withToken((t) => s.calendar.listEvents(t, a.calendarId, { timeMin: a.timeMin, timeMax: a.timeMax, q: a.query, maxResults: a.maxResults, pageToken: a.pageToken, timeZone: a.timeZone }));
        return { timeZone: r.timeZone ?? null, events: r.items.map(eventView), nextPageToken: r.nextPageToken ?? null };
      },
    }),
    defineTool({
      name: 'get_event',
      title: 'Get an event',
      description: 'Read one event with its times, attendees and their responses, location and description.',
      scopes: [],
      input: z.object({ calendarId, eventId, timeZone: timeZone.optional() }).strict(),
      output: eventSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        return eventView(await s.withToken((t) => s.calendar.getEvent(t, a.calendarId, a.eventId, a.timeZone)));
      },
    }),
    defineTool({
      name: 'create_event',
      title: 'Create an event',
      description:
        'Create an event. start and end are dates (2026-11-24, an all-day event; end is the day after the last day) or date-times: with an offset (2026-11-24T10:00:00+01:00) or as wall-clock times with timeZone ' +
        '(2026-11-24T10:00:00 + "Europe/Berlin"). Attendees get an invitation email unless notifyAttendees is false. Check availability first; each call creates another event.',
      scopes: [],
      input: z
        .object({
          calendarId,
          summary: z.string().trim().min(1).max(500).describe('The event title.'),
          start: when.describe('Start: date or date-time.'),
          end: when.describe('End: date or date-time, after start.'),
          timeZone: timeZone.optional(),
          description: z.string().max(8000).optional(),
          location: z.string().max(1000).optional(),
          attendees: z.array(z.email()).max(100).optional().describe('Email addresses to invite.'),
          notifyAttendees: notify,
        })
        .strict(),
      output: eventSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        const event = {
          summary: a.summary,
          start: toTime(a.start, a.timeZone, 'start'),
          end: toTime(a.end, a.timeZone, 'end'),
          ...(a.description !== undefined ? { description: a.description } : {}),
          ...(a.location !== undefined ? { location: a.location } : {}),
          ...(a.attendees ? { attendees: a.attendees.map((email) => ({ email })) } : {}),
        };
        return eventView(await s.withToken((t) => s.calendar.insertEvent(t, a.calendarId, event, a.notifyAttendees ? 'all' : 'none')));
      },
    }),
    defineTool({
      name: 'update_event',
      title: 'Update an event',
      description:
        'Change an event: only the fields given change (attendees, when given, replaces the whole list). Moving an event: give both start and end. Attendees are told unless notifyAttendees is false. Returns the event as it is now.',
      scopes: [],
      input: z
        .object({
          calendarId,
          eventId,
          summary: z.string().trim().min(1).max(500).optional(),
          start: when.optional(),
          end: when.optional(),
          timeZone: timeZone.optional(),
          description: z.string().max(8000).optional(),
          location: z.string().max(1000).optional(),
          attendees: z.array(z.email()).max(100).optional(),
          notifyAttendees: notify,
        })
        .strict()
        .refine((v) => ['summary', 'start', 'end', 'description', 'location', 'attendees'].some((k) => k in v), { message: 'give at least one field to change', path: [] }),
      output: eventSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        const patch = {
          ...(a.summary !== undefined ? { summary: a.summary } : {}),
          ...(a.start !== undefined ? { start: toTime(a.start, a.timeZone, 'start') } : {}),
          ...(a.end !== undefined ? { end: toTime(a.end, a.timeZone, 'end') } : {}),
          ...(a.description !== undefined ? { description: a.description } : {}),
          ...(a.location !== undefined ? { location: a.location } : {}),
          ...(a.attendees ? { attendees: a.attendees.map((email) => ({ email })) } : {}),
        };
        return eventView(await s.withToken((t) => s.calendar.patchEvent(t, a.calendarId, a.eventId, patch, a.notifyAttendees ? 'all' : 'none')));
      },
    }),
    defineTool({
      name: 'delete_event',
      title: 'Delete an event',
      description: 'Delete (cancel) an event; attendees are told unless notifyAttendees is false. An event already deleted answers not_found. Confirm with the user before deleting events with attendees.',
      scopes: [],
      input: z.object({ calendarId, eventId, notifyAttendees: notify }).strict(),
      output: z.object({ eventId: z.string(), deleted: z.literal(true) }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      run: async (ctx, a) => {
        const s = sessionOf(ctx);
        await s.withToken((t) => s.calendar.deleteEvent(t, a.calendarId, a.eventId, a.notifyAttendees ? 'all' : 'none'));
        return { eventId: a.eventId, deleted: true as const };
      },
    }),
  ];
}
