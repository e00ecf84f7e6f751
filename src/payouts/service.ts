// Scheduled payouts (docs/payouts.md; contract §15.3): a merchant's payout schedule, set by the operator, and
// the job that pays each merchant's `available − keep − transfer fee` out at PAYOUT_TIME of its scheduled
// days. A day's transfer and the record of that day's run commit in one transaction, and the run's primary
// key (merchant, business day) lets the database refuse a second: at most one scheduled transfer per
// merchant and day, whatever restarts, retries or several workers do (docs/architecture.md, rule 3).
import type { Config } from '../config.ts';
import type { Database, Transaction } from '../db/database.ts';
import { ApiError, validationError, type FieldError } from '../kernel/errors.ts';
import * as ledger from '../ledger/service.ts';
import * as merchants from '../merchants/service.ts';
import { transferFee } from '../merchants/pricing.ts';
import { FullAccountNumber } from '../masking.ts';
import { centavos, validatedCentavos, type Centavos } from '../money.ts';
import { shiftDay, type Clock } from '../time.ts';
import { configuredBanks } from '../transfers/banks.ts';
import { MAX_TRANSFER_CENTAVOS } from '../transfers/schemas.ts';
import * as transfers from '../transfers/service.ts';
import { dueDays, latestPayoutDay, type PayoutDays } from './calendar.ts';
import {
  DEFAULT_PAYOUT_KEEP_CENTAVOS, DEFAULT_PAYOUT_MINIMUM_CENTAVOS, MAX_PAYOUT_KEEP_CENTAVOS, MAX_PAYOUT_MINIMUM_CENTAVOS,
  MIN_PAYOUT_MINIMUM_CENTAVOS, type PutPayoutScheduleBody,
} from './schemas.ts';
import * as store from './store.ts';
import { PayoutRunRecordedError, type PayoutInterval, type PayoutRunOutcome, type PayoutRunRow, type PayoutScheduleRow } from './store.ts';

export type { PayoutInterval, PayoutRunOutcome } from './store.ts';

/** Where a merchant's payouts go: a bank account, the number kept in full and shown masked. */
export interface PayoutDestination {
  bankCode: number;
  accountNumber: FullAccountNumber;
  accountTitular: string;
}

/** A merchant's schedule as the operator reads it (a merchant that never had one: manual, with defaults). */
export interface PayoutSchedule {
  businessCode: number;
  interval: PayoutInterval;
  weekday: number | null;
  destination: PayoutDestination | null;
  minimumCentavos: Centavos;
  keepCentavos: Centavos;
  effectiveFrom: string | null;
  lastRun: PayoutRunRow | null;
  updatedAt: Date | null;
}

/** GET /admin/v1/merchants/{business_code}/payout-schedule; 404 for an unknown merchant. */
export async function getPayoutSchedule(db: Database, businessCode: number): Promise<PayoutSchedule> {
  // One snapshot: the schedule and its last run agree.
  return db.transaction(async (tx) => {
    await merchants.getMerchant(tx, businessCode);
    const schedule = await store.findSchedule(tx, businessCode);
    const lastRun = (await store.findLastRun(tx, businessCode)) ?? null;
    if (schedule) return scheduleOf(schedule, lastRun);
    return {
      businessCode,
      interval: 'manual',
      weekday: null,
      destination: (await storedDestination(tx, businessCode, undefined)) ?? null,
      minimumCentavos: centavos(DEFAULT_PAYOUT_MINIMUM_CENTAVOS),
      keepCentavos: centavos(DEFAULT_PAYOUT_KEEP_CENTAVOS),
      effectiveFrom: null,
      lastRun,
      updatedAt: null,
    };
  });
}

/**
 * PUT /admin/v1/merchants/{business_code}/payout-schedule: replaces the merchant's schedule. `minimum` and
 * `keep` left out take their defaults; a `destination` left out keeps the stored one (the schedule's, else
 * the onboarding payout account), and is required when there is none. 422 for `weekday` without `weekly`
 * or the reverse and for a missing destination; 404 unknown merchant; 403 MODULE_NOT_ENABLED for daily or
 * weekly without the ACH module. A schedule switched on, or whose days change, takes effect from the next
 * PAYOUT_TIME: no earlier day is ever paid out (made up) for it.
 */
export async function setPayoutSchedule(
  context: { db: Database; config: Pick<Config, 'payoutTime' | 'serviceTimeZone'> },
  businessCode: number,
  body: PutPayoutScheduleBody,
  now: Date,
): Promise<PayoutSchedule> {
  const errors: FieldError[] = [];
  if (body.interval === 'weekly' && body.weekday === undefined) {
    errors.push({ field: 'weekday', code: 'required', message: 'is required with interval weekly (1 = Monday … 7 = Sunday)' });
  }
  if (body.interval !== 'weekly' && body.weekday !== undefined) {
    errors.push({ field: 'weekday', code: 'invalid_value', message: 'is only allowed with interval weekly' });
  }
  const { db, config } = context;
  return db.transaction(async (tx) => {
    const merchant = await merchants.getMerchant(tx, businessCode);
    const current = await store.findScheduleForUpdate(tx, businessCode);
    const destination = body.destination
      ? { bankCode: body.destination.bank_code, accountNumber: new FullAccountNumber(body.destination.account_number), accountTitular: body.destination.account_titular }
      : await storedDestination(tx, businessCode, current);
    if (!destination) errors.push({ field: 'destination', code: 'required', message: 'is required: no payout account is stored for this merchant' });
    if (errors.length > 0) throw validationError(errors);
    if (body.interval !== 'manual' && !merchant.ach_enabled) {
      throw new ApiError('MODULE_NOT_ENABLED', { message: 'The ACH transfer module is not enabled for this merchant: scheduled payouts are transfers.' });
    }
    const weekday = body.interval === 'weekly' ? body.weekday! : null;
    const sameDays = current !== undefined && current.schedule_interval === body.interval && current.weekday === weekday;
    const row = await store.upsertSchedule(tx, businessCode, {
      interval: body.interval,
      weekday,
      bankCode: destination!.bankCode,
      accountNumber: destination!.accountNumber,
      accountTitular: destination!.accountTitular,
      minimumCentavos: body.minimum === undefined
        ? centavos(DEFAULT_PAYOUT_MINIMUM_CENTAVOS)
        : validatedCentavos(body.minimum, { min: MIN_PAYOUT_MINIMUM_CENTAVOS, max: MAX_PAYOUT_MINIMUM_CENTAVOS }),
      keepCentavos: body.keep === undefined
        ? centavos(DEFAULT_PAYOUT_KEEP_CENTAVOS)
        : validatedCentavos(body.keep, { min: 0, max: MAX_PAYOUT_KEEP_CENTAVOS }),
      // Switched on, or its days changed: from the day of the next PAYOUT_TIME, so a schedule set after today's
      // PAYOUT_TIME does not make today up, and a manual schedule switched on never makes up its manual days.
      // Otherwise (a new minimum, keep or destination) the days it owes stay owed.
      effectiveFrom: body.interval === 'manual' ? null
        : sameDays && current.effective_from !== null ? current.effective_from
        : shiftDay(latestPayoutDay(now, config.payoutTime, config.serviceTimeZone), 1),
    }, now);
    return scheduleOf(row, (await store.findLastRun(tx, businessCode)) ?? null);
  });
}

/**
 * The schedule a merchant onboarded with a payout account starts with (docs/onboarding.md): manual, with that
 * account as its destination, in the transaction that creates the merchant.
 */
export async function startManualSchedule(tx: Transaction, businessCode: number, destination: PayoutDestination, now: Date): Promise<void> {
  await store.upsertSchedule(tx, businessCode, {
    interval: 'manual',
    weekday: null,
    ...destination,
    minimumCentavos: centavos(DEFAULT_PAYOUT_MINIMUM_CENTAVOS),
    keepCentavos: centavos(DEFAULT_PAYOUT_KEEP_CENTAVOS),
    effectiveFrom: null,
  }, now);
}

/** The destination stored for a merchant: its schedule's, else (no schedule yet) its onboarding payout account. */
async function storedDestination(tx: Transaction, businessCode: number, schedule: PayoutScheduleRow | undefined): Promise<PayoutDestination | undefined> {
  if (schedule) return { bankCode: schedule.bank_code, accountNumber: schedule.account_number, accountTitular: schedule.account_titular };
  const account = await merchants.findPayoutAccount(tx, businessCode);
  return account && { bankCode: account.bankCode, accountNumber: account.accountNumber, accountTitular: account.accountHolder };
}

function scheduleOf(row: PayoutScheduleRow, lastRun: PayoutRunRow | null): PayoutSchedule {
  return {
    businessCode: row.business_code,
    interval: row.schedule_interval,
    weekday: row.weekday,
    destination: { bankCode: row.bank_code, accountNumber: row.account_number, accountTitular: row.account_titular },
    minimumCentavos: row.minimum_centavos,
    keepCentavos: row.keep_centavos,
    effectiveFrom: row.effective_from,
    lastRun,
    updatedAt: row.updated_at,
  };
}

// ---------------------------------------------------------------------------------------------------
// The job (docs/payouts.md, "The run")

export interface PayoutJobContext {
  db: Database;
  clock: Clock;
  config: Config;
}

/** What one merchant's run did: the days it recorded (the last one paid out, the others missed), and how. */
export interface PayoutRun {
  businessCode: number;
  days: string[];
  outcome: Exclude<PayoutRunOutcome, 'missed'>;
  transferId: number | null;
}

/** The reference of a scheduled day's transfer. */
export function payoutReference(day: string): string {
  return `Liquidación ${day}`;
}

/**
 * One batch of the job: the schedules that owe a run now, one merchant per transaction, at most `limit`.
 * Returns the runs recorded and whether more may be waiting (a full batch). A merchant whose run fails
 * (its transaction rolled back: nothing of it was written) is reported to `onFailure` and left for the next
 * batch, so one merchant's failure never holds up the others' payouts; a failure before any merchant was
 * claimed (the database unreachable) is thrown, for the runner to back off.
 */
export async function payOutDueSchedules(
  context: PayoutJobContext,
  limit: number,
  onFailure: (error: unknown, businessCode: number) => void,
): Promise<{ runs: PayoutRun[]; more: boolean }> {
  const runs: PayoutRun[] = [];
  const failed: number[] = [];
  for (let claimed = 0; claimed < limit; claimed++) {
    try {
      const step = await payOutOneDueSchedule(context, failed);
      if (step === 'none') return { runs, more: false };
      if (step !== 'taken') runs.push(step);
    } catch (error) {
      if (!(error instanceof ScheduleRunFailedError)) throw error;
      failed.push(error.businessCode);
      onFailure(error.cause, error.businessCode);
    }
  }
  return { runs, more: true };
}

/** A claimed merchant's run failed; its transaction rolled back. */
class ScheduleRunFailedError extends Error {
  constructor(readonly businessCode: number, cause: unknown) {
    super(`the payout run of merchant ${businessCode} failed`, { cause });
    this.name = 'ScheduleRunFailedError';
  }
}

/**
 * Claims one schedule that owes a run (SKIP LOCKED: any number of workers run this at once), other than
 * `skip`'s, and records its due days in one transaction: the last day's run — a transfer of
 * `available − keep − transfer fee`, capped at 20000.00, when that is at least `minimum`, else why not — and
 * the days before it as missed, made up by it. 'none' when no schedule owes a run; 'taken' when another
 * worker recorded one of those days first (the database refused the second run; nothing of this one was
 * written).
 */
export async function payOutOneDueSchedule(context: PayoutJobContext, skip: readonly number[] = []): Promise<PayoutRun | 'none' | 'taken'> {
  const { db, clock, config } = context;
  const now = clock.now();
  const latest = latestPayoutDay(now, config.payoutTime, config.serviceTimeZone);
  try {
    return await db.transaction(async (tx): Promise<PayoutRun | 'none' | 'taken'> => {
      const schedule = await store.claimDueSchedule(tx, latest, skip);
      if (!schedule) return 'none';
      try {
        // Read after the lock, in a newer snapshot than the claim's: a worker that ran this schedule just
        // before has its runs seen here, and this one then owes nothing.
        const days = dueDays(payoutDaysOf(schedule), schedule.effective_from!, await store.lastRunDay(tx, schedule.business_code), latest);
        if (days.length === 0) return 'taken';
        const day = days.at(-1)!;
        const { outcome, transferId } = await runDay(tx, config, schedule, day, now);
        await store.insertRuns(tx, schedule.business_code, days.map((each) => (each === day
          ? { day, outcome, transferId, coveredBy: null }
          : { day: each, outcome: 'missed', transferId: null, coveredBy: day })), now);
        return { businessCode: schedule.business_code, days, outcome, transferId };
      } catch (error) {
        if (error instanceof PayoutRunRecordedError) throw error;
        throw new ScheduleRunFailedError(schedule.business_code, error);
      }
    });
  } catch (error) {
    // Reached only if two workers both read no run of a day (the claim's lock makes that rare): the second's
    // insert waited for the first's commit and was refused, and everything it wrote, its transfer too, rolled back.
    if (error instanceof PayoutRunRecordedError) return 'taken';
    throw error;
  }
}

/** The day's payout of one schedule, or why there is none, in the run's transaction. */
async function runDay(
  tx: Transaction,
  config: Config,
  schedule: PayoutScheduleRow,
  day: string,
  now: Date,
): Promise<{ outcome: PayoutRun['outcome']; transferId: number | null }> {
  const businessCode = schedule.business_code;
  const standing = await merchants.payoutStanding(tx, businessCode);
  if (!standing.active) return { outcome: 'suspended', transferId: null };
  if (!standing.achEnabled) return { outcome: 'no_ach_module', transferId: null };
  if (!configuredBanks(config).some((bank) => bank.bankCode === schedule.bank_code)) return { outcome: 'unknown_bank', transferId: null };
  // Locked until commit, so the amount decided here is what the debit finds.
  const balance = await ledger.lockBalance(tx, businessCode);
  const payable = balance.available_centavos - schedule.keep_centavos - transferFee(standing.plan);
  if (payable < schedule.minimum_centavos) return { outcome: 'below_minimum', transferId: null };
  const transfer = await transfers.createScheduledTransfer(tx, {
    businessCode,
    // Above the cap, the rest waits for the next run.
    amountCentavos: centavos(Math.min(payable, MAX_TRANSFER_CENTAVOS)),
    reference: payoutReference(day),
    destination: { bankCode: schedule.bank_code, accountNumber: schedule.account_number, accountTitular: schedule.account_titular },
    now,
  });
  // The balance is locked and covers amount and fee: a refusal here is a bug, never a merchant's state.
  if (!transfer) throw new Error(`the scheduled payout of merchant ${businessCode} for ${day} was refused by the ledger`);
  return { outcome: 'transferred', transferId: transfer.id };
}

function payoutDaysOf(schedule: PayoutScheduleRow): PayoutDays {
  if (schedule.schedule_interval === 'daily') return { interval: 'daily', weekday: null };
  if (schedule.schedule_interval === 'weekly') return { interval: 'weekly', weekday: schedule.weekday! };
  throw new Error(`merchant ${schedule.business_code}'s manual schedule was claimed for a run`);
}
