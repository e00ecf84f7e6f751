// Scheduled payouts (docs/payouts.md; contract §15.3): a merchant's payout schedule, set by the operator.
import type { Config } from '../config.ts';
import type { Database, Transaction } from '../db/database.ts';
import { ApiError, validationError, type FieldError } from '../kernel/errors.ts';
import * as merchants from '../merchants/service.ts';
import { FullAccountNumber } from '../masking.ts';
import { centavos, validatedCentavos, type Centavos } from '../money.ts';
import { shiftDay } from '../time.ts';
import { latestPayoutDay } from './calendar.ts';
import {
  DEFAULT_PAYOUT_KEEP_CENTAVOS, DEFAULT_PAYOUT_MINIMUM_CENTAVOS, MAX_PAYOUT_KEEP_CENTAVOS, MAX_PAYOUT_MINIMUM_CENTAVOS,
  MIN_PAYOUT_MINIMUM_CENTAVOS, type PutPayoutScheduleBody,
} from './schemas.ts';
import * as store from './store.ts';
import type { PayoutInterval, PayoutRunRow, PayoutScheduleRow } from './store.ts';

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
