// SQL of the bank capability's own tables (migration 017): unmatched bank credits and the daily sweeps.
import type { Queryable } from '../db/database.ts';
import type { RailName } from '../rails/names.ts';

export interface UnmatchedCredit {
  rail: RailName;
  dedupeKey: string;
  railReference: string | null;
  qrReference: string | null;
  currency: string | null;
  amountCentavos: number | null;
  problem: string;
}

/** Keeps a credit once per bank payment; returns whether it was new. */
export async function keepUnmatchedCredit(db: Queryable, credit: UnmatchedCredit, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into bank_unmatched_credits (rail, dedupe_key, rail_reference, qr_reference, currency, amount_centavos, problem, first_seen_at)
     values ($1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $7::text, $8::timestamptz)
     on conflict on constraint bank_unmatched_credits_once do nothing`,
    [credit.rail, credit.dedupeKey, credit.railReference, credit.qrReference, credit.currency, credit.amountCentavos, credit.problem, now],
  );
  return rowCount > 0;
}

/** The days from `from` to `to` (yyyy-MM-dd, both included) already swept. */
export async function sweptDays(db: Queryable, rail: RailName, from: string, to: string): Promise<Set<string>> {
  const { rows } = await db.query<{ day: string }>(
    `select to_char(business_date, 'YYYY-MM-DD') as day from bank_sweeps
      where rail = $1::text and business_date between $2::date and $3::date`,
    [rail, from, to],
  );
  return new Set(rows.map((row) => row.day));
}

export async function markDaySwept(db: Queryable, rail: RailName, day: string, now: Date): Promise<void> {
  await db.query(
    `insert into bank_sweeps (rail, business_date, swept_at) values ($1::text, $2::date, $3::timestamptz)
     on conflict (rail, business_date) do nothing`,
    [rail, day, now],
  );
}
