// Durations of docs/api-reference.md#configuration and wall-clock times in the service time zone (America/La_Paz, UTC-4 all year).
import { describe, expect, it } from 'vitest';
import { formatWallClock, isKnownTimeZone, parseDuration, parseWallClock } from '../../src/time.ts';

const LA_PAZ = 'America/La_Paz';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['3s', 3_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['0s', 0],
    ['120m', 7_200_000],
    [' 10s ', 10_000],
    ['999999999ms', 999_999_999],
  ])('reads %j as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', '5x', 'ms', '1.5s', '-1s', '+1s', '5 s', '5S', '1h30m', '10sec', 's10', '1e3ms', '1000000000ms'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});

describe('wall clock in America/La_Paz (UTC-4)', () => {
  it.each([
    ['2026-11-22 18:30:00', '2026-11-22T22:30:00.000Z'],
    ['2026-11-22 00:00:00', '2026-11-22T04:00:00.000Z'],
    ['2026-11-22 23:59:59', '2026-11-23T03:59:59.000Z'],
    ['2026-12-31 22:00:00', '2027-01-01T02:00:00.000Z'],
    ['2028-02-29 12:00:00', '2028-02-29T16:00:00.000Z'],
    ['2026-07-01 12:00:00', '2026-07-01T16:00:00.000Z'],
  ])('reads %s as %s', (wallClock, iso) => {
    expect(parseWallClock(wallClock, LA_PAZ)?.toISOString()).toBe(iso);
  });

  it.each([
    ['2026-11-22T22:30:00.000Z', '2026-11-22 18:30:00'],
    ['2026-11-23T04:00:00.000Z', '2026-11-23 00:00:00'],
    ['2026-11-23T03:59:59.999Z', '2026-11-22 23:59:59'],
    ['2027-01-01T02:00:00.000Z', '2026-12-31 22:00:00'],
  ])('shows %s as %s', (iso, wallClock) => {
    expect(formatWallClock(new Date(iso), LA_PAZ)).toBe(wallClock);
  });

  it.each([
    '2026-02-30 10:00:00',
    '2026-02-29 10:00:00',
    '2026-04-31 10:00:00',
    '2026-13-01 10:00:00',
    '2026-00-10 10:00:00',
    '2026-11-00 10:00:00',
    '2026-11-22 24:00:00',
    '2026-11-22 18:60:00',
    '2026-11-22 18:30:60',
    '2026-11-22T18:30:00',
    '2026-11-22 18:30',
    '2026-11-22',
    '26-11-22 18:30:00',
    '2026-11-22 18:30:00Z',
    ' 2026-11-22 18:30:00',
    '',
  ])('refuses %j', (wallClock) => {
    expect(parseWallClock(wallClock, LA_PAZ)).toBeNull();
  });

  it('round-trips every hour of a year', () => {
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    for (let hour = 0; hour < 366 * 24; hour++) {
      const instant = new Date(start + hour * 3_600_000 + 17 * 60_000 + 5_000);
      const wallClock = formatWallClock(instant, LA_PAZ);
      if (!/^\d{4}-\d{2}-\d{2} (0\d|1\d|2[0-3]):[0-5]\d:[0-5]\d$/.test(wallClock)) throw new Error(`malformed ${wallClock}`);
      const back = parseWallClock(wallClock, LA_PAZ);
      if (back?.getTime() !== instant.getTime()) throw new Error(`${instant.toISOString()} → ${wallClock} → ${back?.toISOString()}`);
      // La Paz is UTC-4 all year.
      if (instant.getTime() - Date.parse(`${wallClock.replace(' ', 'T')}Z`) !== 4 * 3_600_000) throw new Error(`offset at ${wallClock}`);
    }
  });

  it('also converts in other zones (UTC, and New York on both sides of DST)', () => {
    expect(parseWallClock('2026-11-22 18:30:00', 'UTC')?.toISOString()).toBe('2026-11-22T18:30:00.000Z');
    expect(parseWallClock('2026-07-01 12:00:00', 'America/New_York')?.toISOString()).toBe('2026-07-01T16:00:00.000Z');
    expect(parseWallClock('2026-01-15 12:00:00', 'America/New_York')?.toISOString()).toBe('2026-01-15T17:00:00.000Z');
    expect(formatWallClock(new Date('2026-07-01T16:00:00.000Z'), 'America/New_York')).toBe('2026-07-01 12:00:00');
  });
});

describe('formatWallClock', () => {
  it('reads the same as Intl formatToParts at midnight, across DST, and in zones with odd offsets', () => {
    const reference = (instant: Date, zone: string) => {
      const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', {
        timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
      }).formatToParts(instant).map((part) => [part.type, part.value]));
      return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
    };
    const zones = [LA_PAZ, 'UTC', 'America/New_York', 'Europe/London', 'Asia/Kathmandu', 'Pacific/Chatham', 'Australia/Adelaide'];
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    for (const zone of zones) {
      for (let step = 0; step < 800; step++) {
        const instant = new Date(start + step * 11 * 3_600_000 + step * 7_919); // every hour of the day, all year
        expect(formatWallClock(instant, zone), `${zone} ${instant.toISOString()}`).toBe(reference(instant, zone));
      }
    }
    expect(formatWallClock(new Date('2026-11-23T04:00:00.000Z'), LA_PAZ)).toBe('2026-11-23 00:00:00');
  });
});

describe('isKnownTimeZone', () => {
  it('knows IANA zones and refuses made-up ones', () => {
    expect(isKnownTimeZone(LA_PAZ)).toBe(true);
    expect(isKnownTimeZone('UTC')).toBe(true);
    expect(isKnownTimeZone('Mars/Base')).toBe(false);
    expect(isKnownTimeZone('')).toBe(false);
  });
});
