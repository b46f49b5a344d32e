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
}

/** What a channel without routing settings does: today's behaviour (the bot answers, nothing else). */
export const DEFAULT_ROUTING: ChannelRouting = {
  firstResponder: 'bot',
  botFallbackSeconds: null,
  autoAssign: { enabled: false, capacity: null },
  businessHours: null,
};

export function routingOf(c: { routing?: ChannelRouting }): ChannelRouting {
  return c.routing ?? DEFAULT_ROUTING;
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
