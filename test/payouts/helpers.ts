// Shared helpers of the scheduled payout tests: instants on La Paz's wall clock, the real job of a test app,
// a schedule set through the operator API, and what was recorded (runs, transfers) read back.
import type { TestApp } from '../helpers/app.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import type { Job } from '../../src/kernel/job.ts';
import { fundedMerchant, type Merchant } from '../transfers/helpers.ts';

export const DESTINATION = { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Juan Pérez' };

/** The instant of `time` (HH:mm) on `day` in La Paz (UTC−4 all year), as the test clock takes it. */
export function laPaz(day: string, time: string): string {
  return new Date(`${day}T${time}:00-04:00`).toISOString();
}

const jobs = new WeakMap<TestApp, Job>();

/** The app's own `scheduled-payouts` job, as its worker runs it. */
export function payoutJob(t: TestApp): Job {
  let job = jobs.get(t);
  if (!job) {
    job = backgroundJobs(t.context).find((each) => each.name === 'scheduled-payouts')!;
    jobs.set(t, job);
  }
  return job;
}

/** Runs the job until it reports nothing more waiting, as the worker loop does. */
export async function runPayouts(t: TestApp): Promise<void> {
  while (await payoutJob(t).runOnce()) { /* a full batch: more may be waiting */ }
}

/** A merchant with the ACH module, funded with `amount`, whose price plan charges `transferFee` (BOB) per transfer. */
export async function payoutMerchant(t: TestApp, amount: string | number, transferFee = 0): Promise<Merchant> {
  const merchant = await fundedMerchant(t, amount);
  if (transferFee > 0) {
    const response = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { pricing: { transfer_fixed: transferFee } } });
    if (response.status !== 200) throw new Error(`setting the price plan answered ${response.status}: ${response.text}`);
  }
  return merchant;
}

export async function setSchedule(t: TestApp, merchant: Merchant, body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await t.request('PUT', `/admin/v1/merchants/${merchant.businessCode}/payout-schedule`, { body: { destination: DESTINATION, ...body } });
  if (response.status !== 200) throw new Error(`setting a schedule answered ${response.status}: ${response.text}`);
  return response.body;
}

export interface RecordedRun {
  day: string;
  outcome: string;
  transfer_id: number | null;
  covered_by: string | null;
}

/** The merchant's runs, oldest day first, straight from the table (the API shows only the latest). */
export async function runsOf(t: TestApp, merchant: Merchant): Promise<RecordedRun[]> {
  const { rows } = await t.db.query<RecordedRun>(
    `select to_char(business_date, 'YYYY-MM-DD') as day, outcome, transfer_id, to_char(covered_by, 'YYYY-MM-DD') as covered_by
       from payout_runs where business_code = $1::bigint order by business_date`,
    [merchant.businessCode],
  );
  return rows;
}

/** The merchant's transfers through the API, oldest first. */
export async function transfersOf(t: TestApp, merchant: Merchant): Promise<Array<Record<string, any>>> {
  const response = await t.request('GET', '/api/v2/transfers?per_page=100', { apiKey: merchant.apiKey });
  if (response.status !== 200) throw new Error(`listing transfers answered ${response.status}: ${response.text}`);
  return [...response.body.data].reverse();
}

/** How many transfers of the merchant exist, whatever its standing (a suspended merchant's key cannot list them). */
export async function transferCount(t: TestApp, merchant: Merchant): Promise<number> {
  const { rows } = await t.db.query<{ count: number }>('select count(*) as count from transfers where business_code = $1::bigint', [merchant.businessCode]);
  return Number(rows[0]!.count);
}
