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
import { formatWallClock } from '../time.ts';
import { configuredBanks } from '../transfers/banks.ts';
import * as store from './store.ts';

/** What the bank's side needs: the app's parts and the rail's pay-in. */
export type BankContext = Pick<AppContext, 'db' | 'config' | 'purposes' | 'clock'> & { rail: RailName; payIn: PayInRail };

/** The bank's side, when the configured rail has a pay-in (a bank's rail); else null. */
export function bankContextOf(context: AppContext): BankContext | null {
  const payIn = context.rail?.payIn ?? null;
  return payIn && context.rail ? { ...context, rail: context.rail.name, payIn } : null;
}

export interface RecordedPayments {
  recorded: number;
  /** Recorded already (by another channel, or an earlier call of this one). */
  known: number;
  /** Kept as unmatched bank credits (no QR of ours, not BOB, unreadable). */
  unmatched: number;
}

/**
 * Records each listed payment not recorded yet, each in its own transaction, and keeps what credits no
 * merchant. Throws when the database does (the caller answers the bank 503, or retries at the next run).
 */
export async function recordRailPayments(context: BankContext, listed: RailPayments, now: Date): Promise<RecordedPayments> {
  const tally: RecordedPayments = { recorded: 0, known: 0, unmatched: 0 };
  for (const payment of listed.payments) {
    if (await qrs.isRailPaymentRecorded(context.db, context.rail, payment.railReference)) {
      tally.known += 1;
      continue;
    }
    const qr = await qrs.findQrByRailReference(context.db, context.rail, payment.qrReference);
    if (!qr) {
      await keepUnmatched(context, { ...payment, currency: 'BOB', problem: 'no QR of the service has this bank qrId' }, payment.amountCentavos, now);
      tally.unmatched += 1;
      continue;
    }
    try {
      await receiveNotice(context, noticeOf(context, qr.id, payment), now);
      tally.recorded += 1;
    } catch (error) {
      if (!(error instanceof qrs.RailPaymentRecordedError)) throw error;
      tally.known += 1; // another channel recorded it between the look and the insert
    }
  }
  for (const entry of listed.unmatched) {
    await keepUnmatched(context, entry, null, now);
    tally.unmatched += 1;
  }
  return tally;
}

/** The QR named by a callback or the poll: its status read at the bank, and what it lists recorded. */
export type ConfirmOutcome = { outcome: 'recorded'; tally: RecordedPayments } | { outcome: 'refused' } | { outcome: 'unknown' };

export async function confirmRailQr(context: BankContext, qrReference: string, now: Date): Promise<ConfirmOutcome> {
  const read = await context.payIn.readQr(qrReference);
  if (read.outcome === 'unknown') return { outcome: 'unknown' };
  // Refused (a qrId the bank does not know, a forged hint): nothing to record.
  if (read.outcome === 'refused') return { outcome: 'refused' };
  return { outcome: 'recorded', tally: await recordRailPayments(context, read.value, now) };
}

/** Bank QRs leased per run of the poll; a full lease means more are due (run again at once). */
const POLL_BATCH = 50;

/**
 * One run of the poll: cancels due at the bank (repeated each interval until the bank answers at all),
 * expired bank QRs handed to the cancel, then the status of each leased bank QR read and recorded. A
 * failure on one QR does not stop the others; it is told to `onError` and that QR is read next interval.
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
      await confirmRailQr(context, qr.rail_reference, context.clock.now());
    } catch (error) {
      onError(error);
    }
  }
  return leased.length >= POLL_BATCH || cancels.length === POLL_BATCH;
}

export type SweepOutcome = { outcome: 'swept'; day: string; tally: RecordedPayments } | { outcome: 'refused'; day: string; message: string } | { outcome: 'unknown'; day: string };

/** The bank's paid list of one business day (yyyy-MM-dd), recorded; the day is marked swept. */
export async function sweepRailDay(context: BankContext, day: string): Promise<SweepOutcome> {
  const listed = await context.payIn.paymentsOfDay(day);
  if (listed.outcome === 'unknown') return { outcome: 'unknown', day };
  if (listed.outcome === 'refused') return { outcome: 'refused', day, message: listed.message };
  const now = context.clock.now();
  const tally = await recordRailPayments(context, listed.value, now);
  await store.markDaySwept(context.db, context.rail, day, now);
  return { outcome: 'swept', day, tally };
}

/** The time of day the previous day is swept, in SERVICE_TIMEZONE (§14.3). */
export const SWEEP_TIME = '00:30';

/** The daily sweep's run: from 00:30 SERVICE_TIMEZONE, the previous day, once (a run that got no answer is repeated). */
export async function sweepPreviousDayWhenDue(context: BankContext): Promise<SweepOutcome | null> {
  const wallClock = formatWallClock(context.clock.now(), context.config.serviceTimeZone); // yyyy-MM-dd HH:mm:ss
  if (wallClock.slice(11, 16) < SWEEP_TIME) return null;
  const day = previousDay(wallClock.slice(0, 10));
  if (await store.isDaySwept(context.db, context.rail, day)) return null;
  return sweepRailDay(context, day);
}

export function previousDay(day: string): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, date - 1)).toISOString().slice(0, 10);
}

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
