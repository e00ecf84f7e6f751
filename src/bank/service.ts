// The bank's side of pay-in (docs/rails.md, "Pay-in through a bank"): what the bank says about its QRs
// becomes payments, through three channels with one outcome — the payment callback (a hint: the QR's
// status is read), the status poll of every active bank QR, and the daily sweep of the bank's paid list.
// Every call to the bank happens outside any transaction; each payment is then recorded in its own
// transaction through refunds.receiveNotice (a QR that cannot take it: a late payment, refunded in full),
// and the unique index of migration 016 makes a payment that two channels race to record count once.
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import * as qrs from '../qr/service.ts';
import { claimDueRailCancels, finishRailCancel, requestRailCancel } from '../rails/cancels.ts';
import type { PayInRail, RailPayment, RailPayments, UnmatchedRailPayment } from '../rails/pay-in.ts';
import type { RailName } from '../rails/names.ts';
import { receiveNotice } from '../refunds/service.ts';
import { formatWallClock, shiftDay } from '../time.ts';
import { configuredBanks } from '../transfers/banks.ts';
import * as store from './store.ts';

/** What the bank's side needs: the app's parts and the rail's pay-in. */
export type BankContext = Pick<AppContext, 'db' | 'config' | 'purposes' | 'clock'> & { rail: RailName; payIn: PayInRail };

/** The bank's side, when the configured rail has a pay-in (a bank's rail); else null. */
export function bankContextOf(context: AppContext): BankContext | null {
  const { payIn } = context.rail;
  return payIn ? { ...context, rail: context.rail.name, payIn } : null;
}

export interface RecordedPayments {
  recorded: number;
  /** Recorded already (by another channel, or an earlier call of this one). */
  known: number;
  /** Kept as unmatched bank credits (no QR of ours, not BOB, unreadable). */
  unmatched: number;
  /** Could not be recorded (the database failed for it): each told to `onError`, and left for a later read. */
  failed: number;
}

/** Told each listed payment that could not be recorded; the bank's payment id names it. */
export class RailPaymentNotRecordedError extends Error {
  constructor(readonly railReference: string | null, cause: unknown) {
    super(`bank payment ${railReference ?? '(no id)'} could not be recorded: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'RailPaymentNotRecordedError';
  }
}

export type OnPaymentError = (error: RailPaymentNotRecordedError) => void;

/**
 * Records each listed payment not recorded yet, each in its own transaction, and keeps what credits no
 * merchant. Each payment stands alone: one that cannot be recorded (the database failing for it) is
 * counted as `failed` and told to `onError`, and the rest are recorded all the same — one poisoned
 * payment must not hold back the money of the others. The caller reads the list again later: the callback
 * answers 503, the poll reads the QR at its next interval, the sweep leaves the day unswept.
 */
export async function recordRailPayments(context: BankContext, listed: RailPayments, now: Date, onError: OnPaymentError = () => undefined): Promise<RecordedPayments> {
  const tally: RecordedPayments = { recorded: 0, known: 0, unmatched: 0, failed: 0 };
  const each = async (railReference: string | null, record: () => Promise<'recorded' | 'known' | 'unmatched'>) => {
    try {
      tally[await record()] += 1;
    } catch (error) {
      tally.failed += 1;
      onError(new RailPaymentNotRecordedError(railReference, error));
    }
  };
  for (const payment of listed.payments) await each(payment.railReference, () => recordRailPayment(context, payment, now));
  for (const entry of listed.unmatched) {
    await each(entry.railReference, async () => {
      await keepUnmatched(context, entry, null, now);
      return 'unmatched';
    });
  }
  return tally;
}

/** One listed payment: recorded, found recorded already, or kept unmatched (no QR of ours has its qrId). */
async function recordRailPayment(context: BankContext, payment: RailPayment, now: Date): Promise<'recorded' | 'known' | 'unmatched'> {
  if (await qrs.isRailPaymentRecorded(context.db, context.rail, payment.railReference)) return 'known';
  const qr = await qrs.findQrByRailReference(context.db, context.rail, payment.qrReference);
  if (!qr) {
    await keepUnmatched(context, { ...payment, currency: 'BOB', problem: 'no QR of the service has this bank qrId' }, payment.amountCentavos, now);
    return 'unmatched';
  }
  try {
    await receiveNotice(context, noticeOf(context, qr.id, payment), now);
    return 'recorded';
  } catch (error) {
    if (!(error instanceof qrs.RailPaymentRecordedError)) throw error;
    return 'known'; // another channel recorded it between the look and the insert
  }
}

/** The QR named by a callback or the poll: its status read at the bank, and what it lists recorded. */
export type ConfirmOutcome = { outcome: 'recorded'; tally: RecordedPayments } | { outcome: 'refused' } | { outcome: 'unknown' };

export async function confirmRailQr(context: BankContext, qrReference: string, now: Date, onError?: OnPaymentError): Promise<ConfirmOutcome> {
  const read = await context.payIn.readQr(qrReference);
  if (read.outcome === 'unknown') return { outcome: 'unknown' };
  // Refused (a qrId the bank does not know, a forged hint): nothing to record.
  if (read.outcome === 'refused') return { outcome: 'refused' };
  return { outcome: 'recorded', tally: await recordRailPayments(context, read.value, now, onError) };
}

/** Bank QRs leased per run of the poll; a full lease means more are due (run again at once). */
const POLL_BATCH = 50;

/**
 * One run of the poll: cancels due at the bank (repeated each interval until the bank answers at all),
 * expired bank QRs handed to the cancel, then the status of each leased bank QR read and recorded. A
 * failure on one QR, or on one payment of a QR, does not stop the others; it is told to `onError` and that
 * QR is read again next interval (and the day's sweep reads its payments too).
 */
export async function pollRailQrs(context: BankContext, onError: (error: unknown) => void = () => undefined): Promise<boolean> {
  const { db, rail, payIn } = context;
  const now = context.clock.now();
  const leased = await qrs.leaseRailQrsToPoll(db, rail, now, payIn.pollIntervalMs, POLL_BATCH);
  for (const qr of leased) {
    if (qr.status === 'ACTIVE' && qr.expires_at !== null && qr.expires_at <= now) await requestRailCancel(db, rail, qr.rail_reference, now);
  }
  const cancels = await claimDueRailCancels(db, rail, now, payIn.pollIntervalMs, POLL_BATCH);
  for (const reference of cancels) {
    const answer = await payIn.cancelQr(reference);
    // Any answer ends it (a refusal too: "already paid"; what was paid is read below or at the next poll).
    if (answer.outcome !== 'unknown') await finishRailCancel(db, rail, reference);
  }
  for (const qr of leased) {
    try {
      await confirmRailQr(context, qr.rail_reference, context.clock.now(), onError);
    } catch (error) {
      onError(error);
    }
  }
  return leased.length >= POLL_BATCH || cancels.length === POLL_BATCH;
}

export type SweepOutcome =
  | { outcome: 'swept'; day: string; tally: RecordedPayments }
  /** Listed, but a payment of it could not be recorded: the day is not marked swept, so it is read again. */
  | { outcome: 'incomplete'; day: string; tally: RecordedPayments }
  | { outcome: 'refused'; day: string; message: string }
  | { outcome: 'unknown'; day: string };

/**
 * The bank's paid list of one business day (yyyy-MM-dd), recorded; the day is marked swept only when every
 * payment of it is recorded (a day marked swept is never read again by the daily sweep).
 */
export async function sweepRailDay(context: BankContext, day: string, onError?: OnPaymentError): Promise<SweepOutcome> {
  const listed = await context.payIn.paymentsOfDay(day);
  if (listed.outcome === 'unknown') return { outcome: 'unknown', day };
  if (listed.outcome === 'refused') return { outcome: 'refused', day, message: listed.message };
  const now = context.clock.now();
  const tally = await recordRailPayments(context, listed.value, now, onError);
  if (tally.failed > 0) return { outcome: 'incomplete', day, tally };
  await store.markDaySwept(context.db, context.rail, day, now);
  return { outcome: 'swept', day, tally };
}

/** The time of day from which the previous day is swept, in SERVICE_TIMEZONE (§14.3): its list is complete by then. */
export const SWEEP_TIME = '00:30';

/**
 * How many days back the daily sweep looks for a day not swept yet. A week covers a service down across
 * several 00:30s (a long weekend, a failed deploy) and the days of a bank that refused for a while, and
 * keeps a run's reads of the bank bounded; a day older than that is swept by hand (`mps rails sweep --date`).
 */
export const SWEEP_WINDOW_DAYS = 7;

/**
 * The daily sweep's run: each day of the last SWEEP_WINDOW_DAYS not swept yet, oldest first — yesterday
 * from 00:30 SERVICE_TIMEZONE, the older days at once. A day is swept once (`bank_sweeps`); a day the bank
 * refused or did not answer, or with a payment that could not be recorded, is read again after its wait
 * (`state`). No answer ends the run: the bank is likely down, and each further day would wait BANECO_TIMEOUT.
 */
export async function sweepDueDays(context: BankContext, state: DailySweepState, onError?: OnPaymentError): Promise<SweepOutcome[]> {
  const now = context.clock.now();
  const days = sweepWindow(formatWallClock(now, context.config.serviceTimeZone));
  state.keepOnly(days);
  const swept = await store.sweptDays(context.db, context.rail, days[0]!, days.at(-1)!);
  const due = days.filter((day) => !swept.has(day) && !state.isWaiting(day, now));
  if (due.length === 0) return [];
  // Once there is a bank QR its day never changes (QRs are never deleted): asked until then only.
  state.firstDay ??= await firstDayOfRail(context);
  const outcomes: SweepOutcome[] = [];
  for (const day of due) {
    if (state.firstDay === null || day < state.firstDay) continue;
    const outcome = await sweepRailDay(context, day, onError);
    state.record(outcome, context.clock.now());
    outcomes.push(outcome);
    if (outcome.outcome === 'unknown') break;
  }
  return outcomes;
}

/** The first wait before a day the sweep could not complete is read again; each further failure doubles it. */
const SWEEP_RETRY_FIRST_MS = 60_000;
/** The longest wait: a day the bank keeps refusing is still asked for every hour. */
const SWEEP_RETRY_MAX_MS = 60 * 60_000;

/**
 * What the daily sweep keeps from one run to the next, in the memory of its process: when each day it
 * could not complete may be read again (1 min, doubling to 1 h), and the day of the rail's first bank QR
 * once there is one. Memory is enough: a restart only reads a waiting day once more at once, and worker
 * processes that back off each on their own cost the bank one call per process per wait — not worth a table.
 * A day waits after any outcome but swept: refused (asking every minute changes nothing), unknown (the bank
 * is down or slow), and incomplete (a payment the database refuses again and again would otherwise have the
 * whole day's list read every minute).
 */
export class DailySweepState {
  readonly #waits = new Map<string, { failures: number; until: number }>();
  /** The day (SERVICE_TIMEZONE) of the rail's first bank QR; null until there is one. */
  firstDay: string | null = null;

  isWaiting(day: string, now: Date): boolean {
    return (this.#waits.get(day)?.until ?? 0) > now.getTime();
  }

  record(outcome: SweepOutcome, now: Date): void {
    if (outcome.outcome === 'swept') {
      this.#waits.delete(outcome.day);
      return;
    }
    const failures = (this.#waits.get(outcome.day)?.failures ?? 0) + 1;
    const wait = Math.min(SWEEP_RETRY_MAX_MS, SWEEP_RETRY_FIRST_MS * 2 ** (failures - 1));
    this.#waits.set(outcome.day, { failures, until: now.getTime() + wait });
  }

  /** Forgets the days that left the window (swept by hand from then on). */
  keepOnly(days: readonly string[]): void {
    for (const day of this.#waits.keys()) if (!days.includes(day)) this.#waits.delete(day);
  }
}

/**
 * The days the sweep may read at `wallClock` (yyyy-MM-dd HH:mm:ss in SERVICE_TIMEZONE), oldest first: the
 * SWEEP_WINDOW_DAYS before today, yesterday only from SWEEP_TIME.
 */
export function sweepWindow(wallClock: string): string[] {
  const today = wallClock.slice(0, 10);
  const days = Array.from({ length: SWEEP_WINDOW_DAYS }, (_, index) => shiftDay(today, index - SWEEP_WINDOW_DAYS));
  return wallClock.slice(11, 16) < SWEEP_TIME ? days.slice(0, -1) : days;
}

/**
 * The day (SERVICE_TIMEZONE) of the rail's first bank QR, or null before it issued any: no payment to a QR
 * of ours can be listed earlier, and a day before it (when another rail, or nothing, was in use) would only
 * fill the unmatched credits with payments to QRs the service never issued.
 */
async function firstDayOfRail(context: BankContext): Promise<string | null> {
  const first = await qrs.firstRailQrCreatedAt(context.db, context.rail);
  return first && formatWallClock(first, context.config.serviceTimeZone).slice(0, 10);
}

/** The day `count` days after `day` (yyyy-MM-dd; count may be negative): time.ts's shiftDay. */
export const addDays = shiftDay;

function noticeOf(context: BankContext, qrId: string, payment: RailPayment) {
  const bank = configuredBanks(context.config).find((known) => String(known.bankCode) === payment.payerBankCode);
  return {
    qrId,
    businessCode: null,
    amountCentavos: payment.amountCentavos,
    payer: { sourceBank: bank?.name ?? payment.payerBankCode, accountNumber: payment.payerAccount, accountTitular: payment.payerName },
    rail: context.rail,
    railReference: payment.railReference,
    paidAt: payment.paidAt,
  };
}

async function keepUnmatched(context: BankContext, entry: UnmatchedRailPayment, amountCentavos: number | null, now: Date): Promise<void> {
  // An entry whose payment id could not be read is kept once per what could be read of it.
  const dedupeKey = entry.railReference ?? `digest:${createHash('sha256').update(JSON.stringify([entry.qrReference, entry.currency, entry.problem])).digest('hex')}`;
  await store.keepUnmatchedCredit(context.db, {
    rail: context.rail, dedupeKey, railReference: entry.railReference, qrReference: entry.qrReference,
    currency: entry.currency, amountCentavos, problem: entry.problem.slice(0, 500),
  }, now);
}
