// The days of scheduled payouts (src/payouts/calendar.ts): which day's PAYOUT_TIME has come, the weekdays,
// and the days a schedule owes — pure rules, checked without a clock or a database.
import { describe, expect, it } from 'vitest';
import { dueDays, isoWeekday, latestPayoutDay, latestScheduledDay, nextPayoutDay, scheduledDaysBetween } from '../../src/payouts/calendar.ts';

const SIX_PM = { hour: 18, minute: 0 };
const DAILY = { interval: 'daily', weekday: null } as const;
const MONDAYS = { interval: 'weekly', weekday: 1 } as const;
const SUNDAYS = { interval: 'weekly', weekday: 7 } as const;

describe('latestPayoutDay', () => {
  it('is today from PAYOUT_TIME on in the service\'s zone, yesterday before', () => {
    // La Paz is UTC−4: 18:00 there is 22:00 UTC.
    expect(latestPayoutDay(new Date('2026-12-01T21:59:59.999Z'), SIX_PM, 'America/La_Paz')).toBe('2026-11-30');
    expect(latestPayoutDay(new Date('2026-12-01T22:00:00.000Z'), SIX_PM, 'America/La_Paz')).toBe('2026-12-01');
    // 02:00 UTC on the 2nd is still the 1st in La Paz.
    expect(latestPayoutDay(new Date('2026-12-02T02:00:00.000Z'), SIX_PM, 'America/La_Paz')).toBe('2026-12-01');
    expect(latestPayoutDay(new Date('2026-12-02T04:00:00.000Z'), SIX_PM, 'America/La_Paz')).toBe('2026-12-01');
    expect(latestPayoutDay(new Date('2026-12-02T04:00:00.000Z'), { hour: 0, minute: 0 }, 'America/La_Paz')).toBe('2026-12-02');
    expect(latestPayoutDay(new Date('2026-12-01T13:29:00.000Z'), { hour: 9, minute: 30 }, 'America/La_Paz')).toBe('2026-11-30');
    expect(latestPayoutDay(new Date('2026-12-01T13:30:00.000Z'), { hour: 9, minute: 30 }, 'America/La_Paz')).toBe('2026-12-01');
  });
});

describe('weekdays', () => {
  it('numbers days as ISO does: 1 = Monday … 7 = Sunday', () => {
    expect(['2026-11-23', '2026-11-24', '2026-11-28', '2026-11-29', '2024-02-29'].map(isoWeekday)).toEqual([1, 2, 6, 7, 4]);
  });

  it('finds the latest scheduled day on or before a day', () => {
    expect(latestScheduledDay(DAILY, '2026-12-02')).toBe('2026-12-02');
    expect(latestScheduledDay(MONDAYS, '2026-11-30')).toBe('2026-11-30'); // a Monday
    expect(latestScheduledDay(MONDAYS, '2026-12-06')).toBe('2026-11-30'); // the Sunday after
    expect(latestScheduledDay(SUNDAYS, '2026-11-30')).toBe('2026-11-29');
  });

  it('lists the scheduled days between two days, both included', () => {
    expect(scheduledDaysBetween(DAILY, '2026-12-30', '2027-01-02')).toEqual(['2026-12-30', '2026-12-31', '2027-01-01', '2027-01-02']);
    expect(scheduledDaysBetween(MONDAYS, '2026-11-30', '2026-12-14')).toEqual(['2026-11-30', '2026-12-07', '2026-12-14']);
    expect(scheduledDaysBetween(MONDAYS, '2026-12-01', '2026-12-13')).toEqual(['2026-12-07']);
    expect(scheduledDaysBetween(MONDAYS, '2026-12-01', '2026-12-06')).toEqual([]);
    expect(scheduledDaysBetween(DAILY, '2026-12-02', '2026-12-01')).toEqual([]);
  });
});

describe('dueDays', () => {
  it('owes nothing before the day the schedule took effect', () => {
    expect(dueDays(DAILY, '2026-12-02', null, '2026-12-01')).toEqual([]);
    expect(dueDays(MONDAYS, '2026-12-01', null, '2026-12-06')).toEqual([]);
  });

  it('owes the day whose PAYOUT_TIME came, once: not again after its run', () => {
    expect(dueDays(DAILY, '2026-12-01', null, '2026-12-01')).toEqual(['2026-12-01']);
    expect(dueDays(DAILY, '2026-12-01', '2026-12-01', '2026-12-01')).toEqual([]);
    expect(dueDays(MONDAYS, '2026-12-01', null, '2026-12-08')).toEqual(['2026-12-07']);
    expect(dueDays(MONDAYS, '2026-12-01', '2026-12-07', '2026-12-13')).toEqual([]);
  });

  it('owes every day missed since the last run, oldest first; the last of them is the one paid out', () => {
    expect(dueDays(DAILY, '2026-11-01', '2026-12-01', '2026-12-04')).toEqual(['2026-12-02', '2026-12-03', '2026-12-04']);
    expect(dueDays(MONDAYS, '2026-11-01', '2026-11-30', '2026-12-22')).toEqual(['2026-12-07', '2026-12-14', '2026-12-21']);
  });

  it('counts from the day it took effect when its last run is older (a schedule switched back on after a manual spell)', () => {
    expect(dueDays(DAILY, '2026-12-10', '2026-12-01', '2026-12-11')).toEqual(['2026-12-10', '2026-12-11']);
  });
});

describe('nextPayoutDay', () => {
  const zone = 'America/La_Paz';
  it('is the first scheduled day from the next PAYOUT_TIME and from the day the schedule took effect', () => {
    // Tuesday 2026-12-01, 17:59 in La Paz: today's PAYOUT_TIME is still to come.
    const before = new Date('2026-12-01T21:59:00.000Z');
    const after = new Date('2026-12-01T22:00:00.000Z');
    expect(nextPayoutDay(DAILY, '2026-11-01', before, SIX_PM, zone)).toBe('2026-12-01');
    expect(nextPayoutDay(DAILY, '2026-11-01', after, SIX_PM, zone)).toBe('2026-12-02');
    expect(nextPayoutDay(DAILY, '2026-12-05', after, SIX_PM, zone)).toBe('2026-12-05');
    expect(nextPayoutDay(MONDAYS, '2026-11-01', before, SIX_PM, zone)).toBe('2026-12-07');
    expect(nextPayoutDay(MONDAYS, '2026-12-08', after, SIX_PM, zone)).toBe('2026-12-14');
    expect(nextPayoutDay(SUNDAYS, '2026-11-01', after, SIX_PM, zone)).toBe('2026-12-06');
  });
});
