import type { TicketPriority } from './types.js';

/*
 * Who answers a channel's customers first, and when: plain data kept with
 * the channel, read by the conversation actor on each customer message.
 */

export const FIRST_RESPONDERS = ['bot', 'agents'] as const;
export type FirstResponder = (typeof FIRST_RESPONDERS)[number];

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** One opening of a weekday, local time of the channel's time zone: `"09:00"`–`"17:30"` (`to` after `from`; `"24:00"` is the day's end). */
export interface OpeningHours {
  from: string;
  to: string;
}

export interface BusinessHours {
  /** An IANA time zone (`Europe/Berlin`): the weekly hours and holidays are its local time. */
  timeZone: string;
  /** Openings per weekday; a day left out is closed all day. */
  weekly: Partial<Record<Weekday, OpeningHours[]>>;
  /** Local dates (`YYYY-MM-DD`) closed all day. */
  holidays: string[];
  /** Sent once per conversation to a customer who writes outside the hours; null sends nothing. */
  awayReply: string | null;
}

export interface ChannelRouting {
  /** `bot`: the business's bot answers and a human only gets the conversation on a handover. `agents`: every new conversation goes straight to the queue. */
  firstResponder: FirstResponder;
  /** With `bot`: a customer message the bot has not answered within this many seconds queues the conversation. Null: never. */
  botFallbackSeconds: number | null;
  /** Opt-in: queued conversations are given to an online agent under `capacity` open conversations. */
  autoAssign: { enabled: boolean; capacity: number | null };
  /** Null: always open. */
  businessHours: BusinessHours | null;
  /** Response-time targets: how soon an agent should answer a customer's message. */
  sla: ResponseTargets;
}

/** Seconds within which a customer's message should have an answer; null: no target. */
export interface ResponseSeconds {
  /** The first answer by an agent in a conversation. */
  firstResponseSeconds: number | null;
  /** Each answer after that, from the customer's next message. */
  nextResponseSeconds: number | null;
}

/** How a response target's seconds are counted: every second, or only the seconds the channel's business hours are open. */
export const SLA_CLOCKS = ['calendar', 'business_hours'] as const;
export type SlaClock = (typeof SLA_CLOCKS)[number];

/** A channel's response-time targets. */
export interface ResponseTargets extends ResponseSeconds {
  /**
   * Targets of conversations of a priority (the priority of the contact's
   * open ticket): a number replaces the channel's seconds for that kind of
   * answer, null keeps the channel's.
   */
  byPriority: Partial<Record<TicketPriority, ResponseSeconds>>;
  /** `business_hours`: the seconds count only while the channel's business hours are open (a channel without hours counts every second). */
  clock: SlaClock;
}

/** What a channel without routing settings does: today's behaviour (the bot answers, nothing else). */
export const DEFAULT_ROUTING: ChannelRouting = {
  firstResponder: 'bot',
  botFallbackSeconds: null,
  autoAssign: { enabled: false, capacity: null },
  businessHours: null,
  sla: { firstResponseSeconds: null, nextResponseSeconds: null, byPriority: {}, clock: 'calendar' },
};

/** A channel's routing, with the defaults of fields stored before they existed. */
export function routingOf(c: { routing?: Partial<ChannelRouting> }): ChannelRouting {
  if (c.routing === undefined) return DEFAULT_ROUTING;
  const sla = c.routing.sla;
  if (sla?.byPriority !== undefined && sla.clock !== undefined && c.routing.autoAssign !== undefined) return c.routing as ChannelRouting;
  return { ...DEFAULT_ROUTING, ...c.routing, sla: { ...DEFAULT_ROUTING.sla, ...sla } };
}

/** The seconds of a target of `kind` for a conversation of `priority` (null: no priority): the priority's own, else the channel's. */
export function targetSeconds(targets: ResponseTargets, kind: 'first_response' | 'next_response', priority: TicketPriority | null): number | null {
  const key = kind === 'first_response' ? 'firstResponseSeconds' : 'nextResponseSeconds';
  const own = priority === null ? null : (targets.byPriority[priority]?.[key] ?? null);
  return own ?? targets[key];
}

/** A time zone the runtime knows (checked once, when the setting is made). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const minutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', weekday: 'short', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The local date, weekday and minute of the day of `at` in `timeZone` (daylight saving included, by the runtime's zone data). */
export function localTime(at: Date, timeZone: string): { date: string; weekday: Weekday; minute: number } {
  const parts: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(at)) parts[p.type] = p.value;
  const weekday = parts.weekday!.toLowerCase().slice(0, 3) as Weekday;
  return { date: `${parts.year}-${parts.month}-${parts.day}`, weekday, minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

/** True when `at` falls in an opening of `hours` (null hours: always open). */
export function isWithinBusinessHours(hours: BusinessHours | null, at: Date): boolean {
  if (hours === null) return true;
  const local = localTime(at, hours.timeZone);
  if (hours.holidays.includes(local.date)) return false;
  return (hours.weekly[local.weekday] ?? []).some((o) => local.minute >= minutes(o.from) && local.minute < minutes(o.to));
}

/** How far ahead the next opening is looked for; a channel that opens later than this (or never) counts as never opening. */
const OPENING_HORIZON_DAYS = 400;

/** The offset of `timeZone` from UTC at `at`, in minutes (local = UTC + offset). */
function offsetMinutes(at: number, timeZone: string): number {
  const parts: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(at))) parts[p.type] = p.value;
  const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute));
  return Math.round((local - Math.floor(at / 60_000) * 60_000) / 60_000);
}

/**
 * The instant of a local date and minute of the day in `timeZone`. A local
 * time the clocks skip (the hour a daylight-saving change jumps over) moves
 * forward by the jump; one they repeat is taken after the change.
 */
export function localInstant(date: string, minute: number, timeZone: string): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d) + minute * 60_000;
  // Two rounds: the offset at a guess, then at the instant it gives (they differ only near a change).
  const guess = wall - offsetMinutes(wall, timeZone) * 60_000;
  return new Date(wall - offsetMinutes(guess, timeZone) * 60_000);
}

/**
 * When the channel next opens at or after `at`: `at` itself while it is
 * open, null when its hours never open (no openings, or none within about a
 * year). Null hours: always open.
 */
export function nextOpening(hours: BusinessHours | null, at: Date): Date | null {
  if (hours === null || isWithinBusinessHours(hours, at)) return at;
  const today = localTime(at, hours.timeZone);
  const [y, m, d] = today.date.split('-').map(Number) as [number, number, number];
  for (let i = 0; i < OPENING_HORIZON_DAYS; i++) {
    const day = new Date(Date.UTC(y, m - 1, d + i));
    const date = day.toISOString().slice(0, 10);
    if (hours.holidays.includes(date)) continue;
    const weekday = WEEKDAYS[(day.getUTCDay() + 6) % 7]!;
    const starts = (hours.weekly[weekday] ?? []).map((o) => minutes(o.from)).filter((from) => i > 0 || from > today.minute);
    if (starts.length === 0) continue;
    const opens = localInstant(date, Math.min(...starts), hours.timeZone);
    if (opens.getTime() > at.getTime()) return opens;
  }
  return null;
}

/** Openings walked at most for one deadline; past that (tiny openings and a long target) the rest counts calendar time. */
const MAX_OPENINGS_WALKED = 5000;

/** When the opening of `hours` that `at` falls in closes (`at` is within the hours). */
function closingOf(hours: BusinessHours, at: Date): Date {
  const local = localTime(at, hours.timeZone);
  const ends = (hours.weekly[local.weekday] ?? []).filter((o) => local.minute >= minutes(o.from) && local.minute < minutes(o.to)).map((o) => minutes(o.to));
  return localInstant(local.date, Math.max(local.minute + 1, ...ends), hours.timeZone);
}

/**
 * The instant `seconds` of open time after `from`: the time outside the
 * channel's business hours (nights, closed days, holidays) does not count.
 * Walks the openings in local time, so a daylight-saving change inside or
 * between openings is counted as the clocks on the wall show it. Null hours,
 * or hours that never open: calendar time.
 */
export function afterOpenSeconds(hours: BusinessHours | null, from: Date, seconds: number): Date {
  let left = seconds * 1000;
  let at = from;
  if (hours === null) return new Date(at.getTime() + left);
  for (let i = 0; i < MAX_OPENINGS_WALKED; i++) {
    const opens = nextOpening(hours, at);
    if (opens === null) break;
    // Past a closing whose wall time the clocks skipped, at least a minute goes by, so the walk always moves on.
    const closes = Math.max(closingOf(hours, opens).getTime(), opens.getTime() + 60_000);
    if (closes - opens.getTime() >= left) return new Date(opens.getTime() + left);
    left -= closes - opens.getTime();
    at = new Date(closes);
  }
  return new Date(at.getTime() + left);
}
