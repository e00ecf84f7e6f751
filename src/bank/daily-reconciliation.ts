// The daily reconciliation (docs/operators.md, "Daily reconciliation"): from 01:00 SERVICE_TIMEZONE, once
// the previous day is swept, that day is reconciled once per set of processes on one database — a claim in
// rail_reconciliation_days decides which process — and its run stored; /metrics reports it. A run with
// breaks logs one warning with the counts by kind: never an amount, a payer, or an account.
import type { FastifyBaseLogger } from 'fastify';
import { formatWallClock } from '../time.ts';
import { breakCounts, reconcileDay, recordRun, shiftDay, type ReconcileContext, type ReconcileOutcome } from './reconciliation.ts';
import * as store from './reconciliation-store.ts';
import { sweptDays } from './store.ts';

/** The time of day the previous day is reconciled, in SERVICE_TIMEZONE: after the sweep's 00:30. */
export const RECONCILIATION_TIME = '01:00';
/**
 * How long a process holds a day: long enough for the bank's two calls and the reads; also the wait before a
 * day the bank refused or did not answer is asked again (so a bank that is down is not asked every minute).
 */
export const DAY_CLAIM_MS = 10 * 60_000;

export type DailyLog = Pick<FastifyBaseLogger, 'info' | 'warn'>;

/**
 * One run of the job: the previous day reconciled when it is due, swept, and neither done nor held by
 * another process; null when there was nothing to do.
 */
export async function reconcilePreviousDayWhenDue(context: ReconcileContext, log: DailyLog): Promise<ReconcileOutcome | null> {
  const { db, rail } = context;
  const now = context.clock.now();
  const wallClock = formatWallClock(now, context.config.serviceTimeZone); // yyyy-MM-dd HH:mm:ss
  if (wallClock.slice(11, 16) < RECONCILIATION_TIME) return null;
  const day = shiftDay(wallClock.slice(0, 10), -1);
  // Before the sweep has read the bank's list, payments the sweep is about to record would show as missing.
  if (!(await sweptDays(db, rail, day, day)).has(day)) return null;
  if (!(await store.claimDay(db, rail, day, now, new Date(now.getTime() + DAY_CLAIM_MS)))) return null;

  const outcome = await reconcileDay(context, day);
  if (outcome.outcome !== 'reconciled') {
    log.warn({ rail, date: day, outcome: outcome.outcome }, `daily rail reconciliation: the bank ${outcome.outcome === 'refused' ? 'refused' : 'did not answer'}; asked again in ${DAY_CLAIM_MS / 60_000} minutes`);
    return outcome;
  }
  const reconciliation = outcome.reconciliation;
  await recordRun(db, reconciliation, 'daily', context.clock.now());
  const summary = { rail, date: day, payments: reconciliation.payments, transfers: reconciliation.transfers };
  if (reconciliation.status === 'breaks') {
    log.warn({ ...summary, breaks: breakCounts(reconciliation.breaks) }, `daily rail reconciliation: ${reconciliation.breaks.length} breaks`);
  } else {
    log.info(summary, 'daily rail reconciliation: balanced');
  }
  return outcome;
}
