// SQL of payout schedules and their runs (migration 024). Every function takes the transaction (or the
// database for a single read) first; the full account number is opened here only, to be written.
import { databaseErrorOf, type Queryable } from '../db/database.ts';
import { FullAccountNumber, revealAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';

export type PayoutInterval = 'manual' | 'daily' | 'weekly';

/** What a day's run did: paid out, or why not; `missed` days were made up by a later day's run. */
export type PayoutRunOutcome = 'transferred' | 'below_minimum' | 'suspended' | 'no_ach_module' | 'unknown_bank' | 'missed';

export interface PayoutScheduleRow {
  business_code: number;
  schedule_interval: PayoutInterval;
  weekday: number | null;
  bank_code: number;
  /** The full number: shows itself masked; only the transfers store opens it again. */
  account_number: FullAccountNumber;
  account_titular: string;
  minimum_centavos: Centavos;
  keep_centavos: Centavos;
  /** yyyy-MM-dd: the first day it pays out on; null when manual. */
  effective_from: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface PayoutRunRow {
  business_code: number;
  business_date: string;
  outcome: PayoutRunOutcome;
  transfer_id: number | null;
  covered_by: string | null;
  recorded_at: Date;
}

/** A row as the database returns it: the account number still plain text. */
type StoredSchedule = Omit<PayoutScheduleRow, 'account_number'> & { account_number: string };

function fromStored(row: StoredSchedule): PayoutScheduleRow {
  return { ...row, account_number: new FullAccountNumber(row.account_number) };
}

const SCHEDULE_COLUMNS = `business_code, schedule_interval, weekday, bank_code, account_number, account_titular, minimum_centavos,
  keep_centavos, to_char(effective_from, 'YYYY-MM-DD') as effective_from, created_at, updated_at`;

const RUN_COLUMNS = `business_code, to_char(business_date, 'YYYY-MM-DD') as business_date, outcome, transfer_id,
  to_char(covered_by, 'YYYY-MM-DD') as covered_by, recorded_at`;

export async function findSchedule(tx: Queryable, businessCode: number): Promise<PayoutScheduleRow | undefined> {
  const { rows } = await tx.query<StoredSchedule>(`select ${SCHEDULE_COLUMNS} from payout_schedules where business_code = $1::bigint`, [businessCode]);
  return rows[0] && fromStored(rows[0]);
}

/** The schedule, locked until the transaction ends (a change decides from what it reads). */
export async function findScheduleForUpdate(tx: Queryable, businessCode: number): Promise<PayoutScheduleRow | undefined> {
  const { rows } = await tx.query<StoredSchedule>(
    `select ${SCHEDULE_COLUMNS} from payout_schedules where business_code = $1::bigint for update`,
    [businessCode],
  );
  return rows[0] && fromStored(rows[0]);
}

export interface ScheduleSettings {
  interval: PayoutInterval;
  weekday: number | null;
  bankCode: number;
  accountNumber: FullAccountNumber;
  accountTitular: string;
  minimumCentavos: Centavos;
  keepCentavos: Centavos;
  effectiveFrom: string | null;
}

/** Writes the merchant's schedule, replacing the one it had. */
export async function upsertSchedule(tx: Queryable, businessCode: number, settings: ScheduleSettings, now: Date): Promise<PayoutScheduleRow> {
  const { rows } = await tx.query<StoredSchedule>(
    `insert into payout_schedules (business_code, schedule_interval, weekday, bank_code, account_number, account_titular,
                                   minimum_centavos, keep_centavos, effective_from, created_at, updated_at)
     values ($1::bigint, $2::text, $3::smallint, $4::bigint, $5::text, $6::text, $7::bigint, $8::bigint, $9::date, $10::timestamptz, $10::timestamptz)
     on conflict (business_code) do update
        set schedule_interval = excluded.schedule_interval, weekday = excluded.weekday, bank_code = excluded.bank_code,
            account_number = excluded.account_number, account_titular = excluded.account_titular,
            minimum_centavos = excluded.minimum_centavos, keep_centavos = excluded.keep_centavos,
            effective_from = excluded.effective_from, updated_at = excluded.updated_at
     returning ${SCHEDULE_COLUMNS}`,
    [businessCode, settings.interval, settings.weekday, settings.bankCode, revealAccountNumber(settings.accountNumber),
      settings.accountTitular, settings.minimumCentavos, settings.keepCentavos, settings.effectiveFrom, now],
  );
  return fromStored(rows[0]!);
}

/**
 * Claims one schedule that owes a run when `latestDay` is the latest day whose PAYOUT_TIME has come: switched
 * on, in effect by its latest scheduled day, with no run of that day or later, and not among `skip`. Locked until the
 * transaction ends and skipped by every other worker meanwhile (docs/architecture.md, rule 7). The run read
 * after the lock (lastRunDay) decides what is owed: a worker whose snapshot predates another's commit may
 * claim a schedule that owes nothing any more.
 */
export async function claimDueSchedule(tx: Queryable, latestDay: string, skip: readonly number[]): Promise<PayoutScheduleRow | undefined> {
  // The latest scheduled day on or before $1: $1 itself when daily; back to the weekday when weekly.
  const latestScheduled = `case schedule_interval when 'daily' then $1::date
                             else $1::date - ((extract(isodow from $1::date)::integer - weekday + 7) % 7) end`;
  const { rows } = await tx.query<StoredSchedule>(
    `select ${SCHEDULE_COLUMNS}
       from payout_schedules
      where schedule_interval <> 'manual'
        and business_code <> all($2::bigint[])
        and effective_from <= ${latestScheduled}
        and not exists (select 1 from payout_runs r
                         where r.business_code = payout_schedules.business_code and r.business_date >= ${latestScheduled})
      order by business_code
      limit 1
      for update skip locked`,
    [latestDay, skip],
  );
  return rows[0] && fromStored(rows[0]);
}

/** The latest day a run was recorded for, as the transaction sees it now; null before the first. */
export async function lastRunDay(tx: Queryable, businessCode: number): Promise<string | null> {
  const { rows } = await tx.query<{ day: string | null }>(
    `select to_char(max(business_date), 'YYYY-MM-DD') as day from payout_runs where business_code = $1::bigint`,
    [businessCode],
  );
  return rows[0]?.day ?? null;
}

export async function findLastRun(tx: Queryable, businessCode: number): Promise<PayoutRunRow | undefined> {
  const { rows } = await tx.query<PayoutRunRow>(
    `select ${RUN_COLUMNS} from payout_runs where business_code = $1::bigint order by business_date desc limit 1`,
    [businessCode],
  );
  return rows[0];
}

/** A day's run was recorded already (payout_runs_one_per_day): another worker paid that day out first. */
export class PayoutRunRecordedError extends Error {
  constructor(businessCode: number) {
    super(`a payout run of merchant ${businessCode} was recorded for one of these days already`);
    this.name = 'PayoutRunRecordedError';
  }
}

export interface NewPayoutRun {
  day: string;
  outcome: PayoutRunOutcome;
  transferId: number | null;
  coveredBy: string | null;
}

/** Records the runs of a merchant's days in one statement; the database refuses a day recorded before. */
export async function insertRuns(tx: Queryable, businessCode: number, runs: readonly NewPayoutRun[], now: Date): Promise<void> {
  try {
    await tx.query(
      `insert into payout_runs (business_code, business_date, outcome, transfer_id, covered_by, recorded_at)
       select $1::bigint, day, outcome, transfer_id, covered_by, $6::timestamptz
         from unnest($2::date[], $3::text[], $4::bigint[], $5::date[]) as t(day, outcome, transfer_id, covered_by)`,
      [businessCode, runs.map((run) => run.day), runs.map((run) => run.outcome), runs.map((run) => run.transferId),
        runs.map((run) => run.coveredBy), now],
    );
  } catch (error) {
    if (databaseErrorOf(error)?.constraint === 'payout_runs_one_per_day') throw new PayoutRunRecordedError(businessCode);
    throw error;
  }
}
