/*
 * IANA time zones without a library: the offset of a zone at an instant,
 * from Intl. Pure functions.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Minutes the zone is ahead of UTC at `epochMs`. */
export function zoneOffsetMinutes(tz: string, epochMs: number): number {
  let f = formatters.get(tz);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(tz, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(epochMs)).map((x) => [x.type, x.value]));
  const asUtc = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return Math.round((asUtc - Math.floor(epochMs / 1000) * 1000) / 60_000);
}

/** A wall-clock time (`2026-11-24T10:00:00`, no offset) in `tz`, as epoch milliseconds. */
export function wallTimeToEpoch(local: string, tz: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(local);
  if (!m) return NaN;
  const guess = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  // Two passes settle the offset across a DST change.
  let t = guess - zoneOffsetMinutes(tz, guess) * 60_000;
  t = guess - zoneOffsetMinutes(tz, t) * 60_000;
  return t;
}

/** True when the RFC 3339 text carries its own offset (`Z` or `+01:00`). */
export function hasOffset(dateTime: string): boolean {
  return /(Z|[+-]\d{2}:\d{2})$/i.test(dateTime);
}

/** An instant as RFC 3339 in `tz` (`2026-11-24T10:00:00+01:00`). */
export function formatInZone(epochMs: number, tz: string): string {
  const off = zoneOffsetMinutes(tz, epochMs);
  const local = new Date(epochMs + off * 60_000).toISOString().slice(0, 19);
  const sign = off >= 0 ? '+' : '-';
  const a = Math.abs(off);
  return `${local}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

/** An RFC 3339 date-time, or a wall time with `tz`, as epoch ms (NaN when neither reads). */
export function toEpoch(dateTime: string, tz: string | undefined): number {
  if (hasOffset(dateTime)) return Date.parse(dateTime);
  return tz !== undefined && isTimeZone(tz) ? wallTimeToEpoch(dateTime, tz) : NaN;
}
