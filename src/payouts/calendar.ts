// The days of scheduled payouts (docs/payouts.md): which business days (yyyy-MM-dd in SERVICE_TIMEZONE) a
// schedule pays out on, which of them have come by a given instant, and which a merchant is owed. Pure
// functions of dates, so the rules are tested without a clock or a database.
import type { TimeOfDay } from '../config.ts';
import { formatWallClock, shiftDay } from '../time.ts';

/** A schedule that is switched on: every day, or one weekday (ISO: 1 = Monday … 7 = Sunday). */
export type PayoutDays = { interval: 'daily'; weekday: null } | { interval: 'weekly'; weekday: number };

/**
 * The latest business day whose PAYOUT_TIME has come by `now`: today from PAYOUT_TIME on, yesterday before.
 * The day after it is the day of the next PAYOUT_TIME.
 */
export function latestPayoutDay(now: Date, payoutTime: TimeOfDay, zone: string): string {
  const wallClock = formatWallClock(now, zone); // yyyy-MM-dd HH:mm:ss
  const today = wallClock.slice(0, 10);
  const time = `${String(payoutTime.hour).padStart(2, '0')}:${String(payoutTime.minute).padStart(2, '0')}`;
  return wallClock.slice(11, 16) >= time ? today : shiftDay(today, -1);
}

/** The ISO weekday of a calendar day: 1 = Monday … 7 = Sunday. */
export function isoWeekday(day: string): number {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return ((new Date(Date.UTC(year, month - 1, date)).getUTCDay() + 6) % 7) + 1;
}

/** The latest day on or before `day` the schedule pays out on. */
export function latestScheduledDay(days: PayoutDays, day: string): string {
  if (days.interval === 'daily') return day;
  return shiftDay(day, -((isoWeekday(day) - days.weekday + 7) % 7));
}

/** The days from `from` to `to` (both included) the schedule pays out on, oldest first. */
export function scheduledDaysBetween(days: PayoutDays, from: string, to: string): string[] {
  const step = days.interval === 'daily' ? 1 : 7;
  const result: string[] = [];
  // The first scheduled day on or after `from`: the latest one on or before the day 6 days later, for weekly.
  let day = days.interval === 'daily' ? from : latestScheduledDay(days, shiftDay(from, 6));
  for (; day <= to; day = shiftDay(day, step)) result.push(day);
  return result;
}

/**
 * The days a schedule owes runs for when the latest day whose PAYOUT_TIME has come is `latest`: its days
 * after the last one run (`lastRun`) and from the day it took effect, up to `latest`. More than one means
 * days were missed (no worker ran at their PAYOUT_TIME); the run of the last of them makes them up.
 */
export function dueDays(days: PayoutDays, effectiveFrom: string, lastRun: string | null, latest: string): string[] {
  const from = lastRun === null || lastRun < effectiveFrom ? effectiveFrom : shiftDay(lastRun, 1);
  return scheduledDaysBetween(days, from, latestScheduledDay(days, latest));
}

/**
 * The day of a switched-on schedule's next run, as the merchant is told it: its first day from the day of
 * the next PAYOUT_TIME after `now` and from the day it took effect (`effectiveFrom`). Days owed from before
 * (missed runs) are made up by that run, so they do not come before it.
 */
export function nextPayoutDay(days: PayoutDays, effectiveFrom: string, now: Date, payoutTime: TimeOfDay, zone: string): string {
  const upcoming = shiftDay(latestPayoutDay(now, payoutTime, zone), 1);
  const from = upcoming > effectiveFrom ? upcoming : effectiveFrom;
  return scheduledDaysBetween(days, from, shiftDay(from, 6))[0]!;
}
