// Durations ("500ms", "3s", "2m", "1h", "1d"), the injectable clock, and wall-clock conversion in a time zone.

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

const DURATION_UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Parses "500ms", "3s", "2m", "1h", "1d" (whole numbers only) into milliseconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return null;
  return Number(match[1]) * DURATION_UNITS_MS[match[2]!]!;
}

/** True when `zone` is an IANA time zone this Node build knows. */
export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const wallClockFormatters = new Map<string, Intl.DateTimeFormat>();

function wallClockFormatter(zone: string): Intl.DateTimeFormat {
  let formatter = wallClockFormatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    wallClockFormatters.set(zone, formatter);
  }
  return formatter;
}

/** What the en-US formatter above prints: `MM/DD/YYYY, HH:mm:ss`. */
const EN_US_READING = /^(\d{2})\/(\d{2})\/(\d{4}), (\d{2}):(\d{2}):(\d{2})$/;

/** The wall-clock reading of `instant` in `zone`, as `YYYY-MM-DD HH:mm:ss`. */
export function formatWallClock(instant: Date, zone: string): string {
  const formatter = wallClockFormatter(zone);
  // `format` is several times cheaper than `formatToParts` (every QR create formats its expiry); its
  // text is only trusted in the exact shape expected, and `formatToParts` decides otherwise.
  const reading = EN_US_READING.exec(formatter.format(instant));
  if (reading) return `${reading[3]}-${reading[1]}-${reading[2]} ${reading[4]}:${reading[5]}:${reading[6]}`;
  const parts = Object.fromEntries(formatter.formatToParts(instant).map((part) => [part.type, part.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

/**
 * The instant whose wall-clock reading in `zone` is `wallClock` (`YYYY-MM-DD HH:mm:ss`), or null when
 * the text is not a real calendar time. Offsets are found by probing, which is exact for every zone
 * whose offset does not change within a day of the instant (true of America/La_Paz, fixed at UTC-4).
 */
export function parseWallClock(wallClock: string, zone: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(wallClock);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [
    number, number, number, number, number, number,
  ];
  const asIfUtc = Date.UTC(year, month - 1, day, hour, minute, second);
  const roundTrip = new Date(asIfUtc);
  if (
    roundTrip.getUTCFullYear() !== year ||
    roundTrip.getUTCMonth() !== month - 1 ||
    roundTrip.getUTCDate() !== day ||
    hour > 23 || minute > 59 || second > 59
  ) {
    return null;
  }
  // Guess the offset at the instant, then correct once for a zone whose offset differs a day later.
  let instant = asIfUtc - zoneOffsetMs(new Date(asIfUtc), zone);
  instant = asIfUtc - zoneOffsetMs(new Date(instant), zone);
  return new Date(instant);
}

/** Offset of `zone` from UTC at `instant`, in milliseconds (La Paz: -4 h). */
function zoneOffsetMs(instant: Date, zone: string): number {
  const wall = formatWallClock(instant, zone);
  const [datePart, timePart] = wall.split(' ') as [string, string];
  const [y, mo, d] = datePart.split('-').map(Number) as [number, number, number];
  const [h, mi, s] = timePart.split(':').map(Number) as [number, number, number];
  const wallAsUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  return wallAsUtc - Math.floor(instant.getTime() / 1000) * 1000;
}

/** The calendar day `delta` days from `day` (yyyy-MM-dd; delta may be negative). */
export function shiftDay(day: string, delta: number): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, date + delta)).toISOString().slice(0, 10);
}
